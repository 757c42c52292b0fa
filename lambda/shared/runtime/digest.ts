import { createHash } from 'node:crypto';

/** Hex SHA-256 of the exact bytes received: identifies a body without storing or logging it. */
export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A short, non-reversible reference to an identifier, for log lines that must not carry it. */
export function logReference(value: string): string {
  return `sha256:${sha256Hex(value).slice(0, 16)}`;
}

/** Spreads keys evenly over `shardCount` shards so that no single index partition runs hot. */
export function shardOf(key: string, shardCount: number): string {
  const bucket = createHash('sha256').update(key).digest().readUInt32BE(0) % shardCount;
  return `p${String(bucket).padStart(2, '0')}`;
}

/** Every shard name, in order; a sweep visits each one. */
export function allShards(shardCount: number): string[] {
  return Array.from({ length: shardCount }, (_, i) => `p${String(i).padStart(2, '0')}`);
}
