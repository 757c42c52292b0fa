import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { BodyStore } from './body-store';

/**
 * The body store on S3. Its own module, so that the handlers load the S3 client only when a body
 * first goes to or comes from the bucket (`bodyStoreFromEnv`).
 */
export class S3BodyStore implements BodyStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, bytes: Buffer): Promise<string> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: bytes,
        ContentType: 'application/octet-stream',
        ChecksumAlgorithm: 'SHA256',
      }),
    );
    return key;
  }

  async get(reference: string): Promise<Buffer> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: reference }));
    if (!out.Body) throw new Error('stored body is empty');
    return Buffer.from(await out.Body.transformToByteArray());
  }
}

/** The default client's store: an S3 client that also works against a local endpoint, which needs path-style addressing. */
export function defaultS3BodyStore(bucket: string): S3BodyStore {
  return new S3BodyStore(new S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) }), bucket);
}
