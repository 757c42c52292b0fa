import { Duration } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';

/**
 * The archive of processed deliveries (docs/ARCHIVE.md): each delivery's exact bytes and its
 * sanitized record, written by the processor to S3 under `deliveries/source=<provider>/day=<yyyy-mm-dd>/`,
 * with a Glue table over them for Athena. `archive: {}` turns it on with these defaults.
 */
export interface InboxArchiveOptions {
  /**
   * The bucket to archive to (objects go under `deliveries/`); the inbox grants the processor `s3:PutObject` there.
   * @default - a new bucket, encrypted as `encryptionKey` says, TLS only, public access blocked, retained on stack deletion
   */
  readonly bucket?: s3.IBucket;

  /**
   * The KMS key a new archive bucket is encrypted with.
   * @default - S3-managed keys (SSE-S3)
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * How long a new archive bucket keeps an archived delivery.
   * @default Duration.days(365)
   */
  readonly retention?: Duration;

  /**
   * When a new archive bucket moves objects to S3 Glacier Instant Retrieval (still searchable, cheaper to keep, dearer to read).
   * @default - never: every object stays in S3 Standard
   */
  readonly transitionToGlacierInstantRetrievalAfter?: Duration;

  /**
   * The Glue database's name (letters, digits and underscores).
   * @default - `webhook_inbox_` and the inbox's name, lower-cased, each other character an underscore
   */
  readonly glueDatabaseName?: string;
}
