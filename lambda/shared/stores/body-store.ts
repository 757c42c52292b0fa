import { BodyPrefix, Env } from '../../../lib/contract';
import { ConfigurationError } from '../runtime/errors';
import { onFirstUse } from '../runtime/on-first-use';
import type { BodyLocation } from './inbox';

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

/**
 * The body store the construct configured, if any: the bucket on S3, through `open` when given
 * (the tests and the bench hand in stores on their own clients). The default store's module, and
 * with it the S3 client, is loaded when the first body goes to or comes from the bucket: in the
 * shipped bundles it is a chunk of its own (scripts/bundle-options.ts), and most deliveries are
 * small enough for their row, so a cold start does not load the S3 client.
 */
export function bodyStoreFromEnv(env: Record<string, string | undefined>, open?: (bucket: string) => BodyStore): BodyStore | undefined {
  const bucket = env[Env.BODY_BUCKET];
  if (!bucket) return undefined;
  return open ? open(bucket) : lazyS3Store(bucket);
}

/** A store on `bucket` whose S3 client (and its module) loads when the first object is written or read. */
export function lazyS3Store(bucket: string): BodyStore {
  const store = onFirstUse(async () => (await import('./s3-body-store.js')).defaultS3BodyStore(bucket));
  return { put: async (key, bytes) => (await store()).put(key, bytes), get: async (reference) => (await store()).get(reference) };
}

/** A row's body: inline, or read from the body store its row points at. */
export async function bodyOfRow(row: BodyLocation, bodies: BodyStore | undefined): Promise<Buffer> {
  if (row.bodyRef === undefined) return row.body ?? Buffer.alloc(0);
  if (!bodies) throw new ConfigurationError('a row points at the body store, but none is configured');
  return bodies.get(row.bodyRef);
}
