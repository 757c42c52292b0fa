import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ARCHIVE_COLUMNS, ARCHIVE_PARTITIONS, ARCHIVE_PREFIX } from '../contract';
import type { InboxArchiveOptions } from '../archive-options';
import { ValidationError } from './validation-error';

/** The archive's bucket and the Glue table that lets Athena query it. */
export interface InboxArchive {
  readonly bucket: s3.IBucket;
  readonly database: glue.CfnDatabase;
  readonly table: glue.CfnTable;
}

/** The earliest day the Glue table's day partition projects; days before it hold no archive. */
const FIRST_DAY = '2024-01-01';

/** Glue's rule for a database name. */
const GLUE_NAME = /^[a-z0-9_]{1,255}$/;

/**
 * The archive: the user's bucket or a new one (encrypted, TLS only, public access blocked, kept
 * `retention`), and a Glue database and table over `deliveries/` whose partitions (provider,
 * day) are projected, so Athena needs no crawler and no `MSCK REPAIR`.
 */
export function createArchive(scope: Construct, options: InboxArchiveOptions, inboxName: string, providerNames: readonly string[]): InboxArchive {
  const retention = options.retention ?? Duration.days(365);
  const databaseName = options.glueDatabaseName ?? `webhook_inbox_${inboxName.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 255);
  const problems = [
    ...(options.bucket && (options.encryptionKey || options.retention || options.transitionToGlacierInstantRetrievalAfter)
      ? ['archive.bucket: encryptionKey, retention and transitionToGlacierInstantRetrievalAfter configure a new bucket; set them on your bucket instead']
      : []),
    ...(!Token.isUnresolved(databaseName) && !GLUE_NAME.test(databaseName)
      ? [`archive.glueDatabaseName "${databaseName}" must be lower-case letters, digits and underscores`]
      : []),
    ...(!retention.isUnresolved() && retention.toDays({ integral: false }) < 1 ? ['archive.retention must be at least one day'] : []),
  ];
  if (problems.length > 0) throw new ValidationError(problems.join('; '), scope);
  const bucket = options.bucket ?? newArchiveBucket(scope, options, retention);

  const database = new glue.CfnDatabase(scope, 'ArchiveDatabase', {
    catalogId: Stack.of(scope).account,
    databaseInput: { name: databaseName, description: 'Webhook inbox: archived deliveries' },
  });
  const location = `s3://${bucket.bucketName}/${ARCHIVE_PREFIX}/`;
  const table = new glue.CfnTable(scope, 'ArchiveTable', {
    catalogId: Stack.of(scope).account,
    databaseName,
    tableInput: {
      name: 'deliveries',
      description: 'Each processed delivery: its exact bytes (base64) and its sanitized record, one JSON line',
      tableType: 'EXTERNAL_TABLE',
      partitionKeys: [
        { name: ARCHIVE_PARTITIONS.PROVIDER, type: 'string' },
        { name: ARCHIVE_PARTITIONS.DAY, type: 'string' },
      ],
      parameters: {
        classification: 'json',
        'projection.enabled': 'true',
        [`projection.${ARCHIVE_PARTITIONS.PROVIDER}.type`]: 'enum',
        [`projection.${ARCHIVE_PARTITIONS.PROVIDER}.values`]: providerNames.join(','),
        [`projection.${ARCHIVE_PARTITIONS.DAY}.type`]: 'date',
        [`projection.${ARCHIVE_PARTITIONS.DAY}.format`]: 'yyyy-MM-dd',
        [`projection.${ARCHIVE_PARTITIONS.DAY}.range`]: `${FIRST_DAY},NOW`,
        [`projection.${ARCHIVE_PARTITIONS.DAY}.interval`]: '1',
        [`projection.${ARCHIVE_PARTITIONS.DAY}.interval.unit`]: 'DAYS',
        'storage.location.template': `${location}${ARCHIVE_PARTITIONS.PROVIDER}=\${${ARCHIVE_PARTITIONS.PROVIDER}}/${ARCHIVE_PARTITIONS.DAY}=\${${ARCHIVE_PARTITIONS.DAY}}/`,
      },
      storageDescriptor: {
        location,
        columns: ARCHIVE_COLUMNS.map(({ name, type }) => ({ name: name.toLowerCase(), type })),
        inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
        outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
        serdeInfo: {
          serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
          // Athena's column names are lower case; the JSON's are camel case.
          parameters: Object.fromEntries(ARCHIVE_COLUMNS.map(({ name }) => [`mapping.${name.toLowerCase()}`, name])),
        },
      },
    },
  });
  table.node.addDependency(database);
  return { bucket, database, table };
}

function newArchiveBucket(scope: Construct, options: InboxArchiveOptions, retention: Duration): s3.Bucket {
  const transition = options.transitionToGlacierInstantRetrievalAfter;
  const bucket = new s3.Bucket(scope, 'ArchiveBucket', {
    encryption: options.encryptionKey ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
    encryptionKey: options.encryptionKey,
    bucketKeyEnabled: options.encryptionKey ? true : undefined,
    enforceSSL: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      {
        prefix: `${ARCHIVE_PREFIX}/`,
        expiration: retention,
        ...(transition ? { transitions: [{ storageClass: s3.StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: transition }] } : {}),
      },
    ],
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions::AwsSolutions-S1',
    reason:
      'Objects are written only by the processor and read only by principals granted grantReadArchive, under IAM; ' +
      'object-level access is audited with CloudTrail data events, not a second bucket of access logs.',
  });
  return bucket;
}
