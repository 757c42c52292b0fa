import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { InboxAttr as A, DeliveryStatus, InboxItemKind } from '../../../../lib/contract';
import { shardOf } from '../../runtime/digest';
import { N, S, stringMap } from '../dynamo';
import { inlineBodyAttributes, inlineBodyOf } from '../inline-body';
import { deliveryKey, jobRefKey, splitKey } from './keys';

/**
 * Where a row's body is: inline (`body`) or, when too large for an item, in the body store
 * (`bodyRef`). Exactly one is set.
 */
export interface BodyLocation {
  readonly body?: Buffer;
  readonly bodyRef?: string;
}

/** A verified delivery about to be admitted. */
export interface NewDelivery extends BodyLocation {
  readonly provider: string;
  readonly eventId: string;
  /** SHA-256 of the exact bytes received, in lower-case hex. */
  readonly digest: string;
  readonly receivedAt: number;
  readonly meta: Record<string, string>;
  readonly expiresAt: number;
  /** The provider's job reference (Answerline: `task.idempotencyKey`); kept as `<provider>#<jobRef>` in the job-ref index. */
  readonly jobRef?: string;
  /** Fetched by polling the provider (the reconciler), not delivered. */
  readonly recovered?: boolean;
  /** When the provider signed the delivery (epoch ms), when its scheme signs a time. */
  readonly eventAt?: number;
}

/** What a conflicting insert finds: the stored row's digest and whether polling fed it. */
export interface OriginalRow {
  readonly digest: string;
  readonly recovered: boolean;
}

/** A delivery row as stored. */
export interface StoredDelivery extends BodyLocation {
  readonly key: string;
  readonly provider: string;
  readonly eventId: string;
  readonly digest: string;
  readonly receivedAt: number;
  readonly meta: Record<string, string>;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly expiresAt: number;
  readonly lastError?: string;
  /** Fetched by polling the provider (the reconciler), not delivered. */
  readonly recovered: boolean;
  /** When the provider signed the delivery (epoch ms); absent for a scheme that signs no time, a polled result, and rows written before it was kept. */
  readonly eventAt?: number;
  /** When the row was last processed (epoch ms): set on a row an operator's replay brought back. */
  readonly processedAt?: number;
}

/** A row a claim took: as read, and the item the claim left (what a batched completion writes back). */
export interface ClaimedDelivery extends StoredDelivery {
  readonly item: Record<string, AttributeValue>;
}

/** An altered duplicate: the same key with another digest. */
export interface QuarantinedCopy extends BodyLocation {
  readonly provider: string;
  readonly digest: string;
  readonly meta: Record<string, string>;
  readonly receivedAt: number;
  readonly expiresAt: number;
}

/** A row's state, read without its body. */
export interface RowState {
  readonly status: DeliveryStatus;
  readonly leaseUntil?: number;
  readonly attempts: number;
}

/** A row's state as the sweep reads it. */
export interface PendingState {
  readonly status: DeliveryStatus;
  readonly pendingSince?: number;
}

/** The table key of an inbox item: a delivery row's, unless `sk` names another kind. */
export function itemKey(key: string, sk: string = InboxItemKind.DELIVERY): Record<string, AttributeValue> {
  return { [A.PK]: S(key), [A.SK]: S(sk) };
}

/** A SHA-256 digest in hex, as rows' digests are given (kept as their 32 bytes). */
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A new delivery's row: RECEIVED, no attempts, in the pending index (of `pendingShards` shards) from its arrival. */
export function deliveryItem(delivery: NewDelivery, pendingShards: number): Record<string, AttributeValue> {
  if (!SHA256_HEX.test(delivery.digest)) throw new Error(`digest must be a SHA-256 in lower-case hex, not ${JSON.stringify(delivery.digest.slice(0, 80))}`);
  const key = deliveryKey(delivery.provider, delivery.eventId);
  return {
    // The provider and event id are the key's (`splitKey`), and the digest is kept as its 32
    // bytes: a claimed 1 KiB row stays within one write unit (docs/DESIGN.md#item-layout).
    ...itemKey(key),
    ...bodyAttributes(delivery),
    [A.DIGEST]: { B: Buffer.from(delivery.digest, 'hex') },
    [A.RECEIVED_AT]: N(delivery.receivedAt),
    [A.META]: stringMap(delivery.meta),
    [A.STATUS]: S(DeliveryStatus.RECEIVED),
    [A.ATTEMPTS]: N(0),
    [A.EXPIRES_AT]: N(delivery.expiresAt),
    [A.PENDING_SHARD]: S(shardOf(key, pendingShards)),
    [A.PENDING_SINCE]: N(delivery.receivedAt),
    ...(delivery.jobRef ? { [A.JOB_REF]: S(jobRefKey(delivery.provider, delivery.jobRef)) } : {}),
    ...(delivery.recovered ? { [A.RECOVERED]: { BOOL: true } } : {}),
    ...(delivery.eventAt !== undefined ? { [A.EVENT_AT]: N(delivery.eventAt) } : {}),
  };
}

/** Every attribute that holds (or says the encoding of) a body, in any form an item was written in. */
export const BODY_ATTRIBUTES: readonly string[] = [A.BODY, A.BODY_DEFLATED, A.BODY_ENCODING, A.BODY_REF];

/** The row attributes that hold a body: the bytes (deflated when smaller), or the body store's reference to them. */
export function bodyAttributes(location: BodyLocation): Record<string, AttributeValue> {
  return location.bodyRef !== undefined ? { [A.BODY_REF]: S(location.bodyRef) } : inlineBodyAttributes(location.body ?? Buffer.alloc(0));
}

/**
 * A delivery row's digest as hex: its 32 bytes (B), or the hex text (S) rows written before the
 * compact row format hold.
 */
export function rowDigestOf(item: Record<string, AttributeValue>): string {
  const digest = item[A.DIGEST];
  return digest?.B !== undefined ? Buffer.from(digest.B).toString('hex') : (digest?.S ?? '');
}

/** A delivery row read whole, in any of the forms rows were written in. */
export function toStoredDelivery(item: Record<string, AttributeValue>): StoredDelivery {
  const key = item[A.PK].S!;
  const { provider, rest: eventId } = splitKey(key);
  return {
    key,
    provider,
    eventId,
    ...(item[A.BODY_REF]?.S ? { bodyRef: item[A.BODY_REF].S } : { body: inlineBodyOf(item) }),
    digest: rowDigestOf(item),
    receivedAt: Number(item[A.RECEIVED_AT].N),
    meta: Object.fromEntries(Object.entries(item[A.META]?.M ?? {}).map(([name, value]) => [name, value.S ?? ''])),
    status: item[A.STATUS].S as DeliveryStatus,
    attempts: Number(item[A.ATTEMPTS]?.N ?? 0),
    expiresAt: Number(item[A.EXPIRES_AT].N),
    ...(item[A.LAST_ERROR]?.S ? { lastError: item[A.LAST_ERROR].S } : {}),
    recovered: item[A.RECOVERED]?.BOOL === true,
    // Rows written before the signed time was kept have none: their record names no delay from the event.
    ...(item[A.EVENT_AT]?.N !== undefined ? { eventAt: Number(item[A.EVENT_AT].N) } : {}),
    ...(item[A.PROCESSED_AT]?.N !== undefined ? { processedAt: Number(item[A.PROCESSED_AT].N) } : {}),
  };
}

/** A row's state from an item read with its status, lease and attempts only. */
export function rowStateOf(item: Record<string, AttributeValue>): RowState {
  const leaseUntil = item[A.LEASE_UNTIL]?.N;
  return {
    status: item[A.STATUS].S as DeliveryStatus,
    attempts: Number(item[A.ATTEMPTS]?.N ?? 0),
    ...(leaseUntil ? { leaseUntil: Number(leaseUntil) } : {}),
  };
}

/** A row's state from an item read with its status and `pendingSince` only. */
export function pendingStateOf(item: Record<string, AttributeValue>): PendingState {
  const since = item[A.PENDING_SINCE]?.N;
  return { status: item[A.STATUS]?.S as DeliveryStatus, ...(since !== undefined ? { pendingSince: Number(since) } : {}) };
}

/** What completion removes from a claimed row: its lease and a previous attempt's error. */
const REMOVED_AT_COMPLETION: ReadonlySet<string> = new Set([A.LEASE_OWNER, A.LEASE_UNTIL, A.LAST_ERROR]);

/** A claimed row as `complete` leaves it: PROCESSED with its outcome, its pending-index entry kept, no lease, no error. */
export function completedItem(claimed: Record<string, AttributeValue>, outcome: string, now: number): Record<string, AttributeValue> {
  return {
    ...Object.fromEntries(Object.entries(claimed).filter(([name]) => !REMOVED_AT_COMPLETION.has(name))),
    [A.STATUS]: S(DeliveryStatus.PROCESSED),
    [A.PROCESSED_AT]: N(now),
    [A.OUTCOME]: S(outcome),
  };
}
