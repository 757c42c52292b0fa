import { createHash } from 'node:crypto';
import { LOG_REFERENCE_PREFIX, RESOURCE_REFERENCE_NAMESPACE, TENANT_REFERENCE_NAMESPACE } from '../../../lib/contract';

/** Hex SHA-256 of the exact bytes received: identifies a body without storing or logging it. */
export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * A short reference to an identifier, for log lines that must not carry it: the first 16 hex
 * digits of its SHA-256. An event's is that of its inbox key `<provider>#<eventId>` (`eventRef`),
 * so anyone holding the id computes the same reference and finds its lines.
 */
export function logReference(value: string): string {
  return `${LOG_REFERENCE_PREFIX}${sha256Hex(value).slice(0, 16)}`;
}

/** A resource's reference (`resourceRef`): that of `<provider>#<resource id>`, namespaced so that it never equals an event's. */
export function resourceReference(provider: string, resourceId: string): string {
  return logReference(`${RESOURCE_REFERENCE_NAMESPACE}${provider}#${resourceId}`);
}

/** A tenant's reference (`tenantRef`): its value's, namespaced so that it never equals an event's. */
export function tenantReference(tenant: string): string {
  return logReference(`${TENANT_REFERENCE_NAMESPACE}${tenant}`);
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
