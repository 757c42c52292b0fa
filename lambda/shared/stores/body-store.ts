import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BodyPrefix, Env } from '../../../lib/contract';
import type { BodyLocation } from './inbox-store';

/**
 * Where bodies (and results) too large for a DynamoDB item live. Objects are keyed by content
 * digest, so a repeat writes the same bytes to the same key (idempotent), and an item's pointer
 * never dangles: the object is written before the item that points at it.
 */
export interface BodyStore {
  /** Stores the bytes under `key`; returns the reference an item keeps. */
  put(key: string, bytes: Buffer): Promise<string>;
  get(reference: string): Promise<Buffer>;
}

/** The object of a delivery body. */
export function bodyObjectKey(provider: string, digest: string): string {
  return `${BodyPrefix.BODIES}/${provider}/${digest}`;
}

/**
 * Where an accepted body goes: inline in its row, or, when a body store is configured and the
 * body is larger than `inlineBodyBytes`, into the store first, so a row never points at a
 * missing object. The verifier and the reconciler (polled results) place bodies alike.
 */
export async function placeBody(
  bodies: BodyStore | undefined,
  inlineBodyBytes: number | undefined,
  provider: string,
  digest: string,
  body: Buffer,
): Promise<BodyLocation> {
  if (!bodies || body.length <= (inlineBodyBytes ?? Infinity)) return { body };
  return { bodyRef: await bodies.put(bodyObjectKey(provider, digest), body) };
}

/** The object of a job result too large for the results table. */
export function responseObjectKey(provider: string, digest: string): string {
  return `${BodyPrefix.RESPONSES}/${provider}/${digest}`;
}

/** The object of a provider resource (fetched by the authoritative read) too large for an effect. */
export function resourceObjectKey(provider: string, digest: string): string {
  return `${BodyPrefix.RESOURCES}/${provider}/${digest}`;
}

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

/** An S3 client that also works against a local endpoint, which needs path-style addressing. */
function bodyStoreClient(): S3Client {
  return new S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) });
}

/** The body store the construct configured, if any. */
export function bodyStoreFromEnv(env: Record<string, string | undefined>, client?: S3Client): BodyStore | undefined {
  const bucket = env[Env.BODY_BUCKET];
  return bucket ? new S3BodyStore(client ?? bodyStoreClient(), bucket) : undefined;
}
