/**
 * Durable admission: how a verified delivery, or a final result the reconciler polled, becomes an
 * inbox row. One sequence for both: the key from the provider and the stable event id, the body
 * (with the digest of its exact bytes) placed (inline, or in the body store first, so a row never points
 * at a missing object), one conditional insert, the stored original read back on a conflict, and
 * the enqueue of a new row. The enqueue is best effort: the row is durable and pending, and the
 * reconciler's sweep enqueues it again if this one fails.
 */
import { BodyStore, placeBody } from './stores/body-store';
import { BodyLocation, deliveryKey, InboxStore, OriginalRow } from './stores/inbox';
import { WorkQueue } from './stores/work-queue';

export interface AdmissionStores {
  readonly inbox: InboxStore;
  readonly queue: WorkQueue;
  /** Where bodies larger than `inlineBodyBytes` go; absent when every body stays in its row. */
  readonly bodies?: BodyStore;
  readonly inlineBodyBytes?: number;
  readonly retentionSeconds: number;
}

/** What is admitted: a body the adapter verified (or the provider's API served) and named. */
export interface Candidate {
  readonly provider: string;
  readonly eventId: string;
  readonly body: Buffer;
  /** `sha256Hex(body)`, computed once by the caller (it logs it too). */
  readonly digest: string;
  readonly meta: Record<string, string>;
  readonly now: number;
  readonly jobRef?: string;
  /** Fetched by polling the provider, not delivered. */
  readonly recovered?: boolean;
  /** Whether a conflict needs the stored original (a level event's repeats do not). */
  readonly readsOriginal?: boolean;
  /** When the provider signed the delivery (epoch ms), when its scheme signs a time. */
  readonly eventAt?: number;
}

export type AdmissionResult = { readonly key: string; readonly location: BodyLocation; readonly expiresAt: number } & (
  { readonly kind: 'inserted'; readonly enqueueError?: unknown } | { readonly kind: 'exists'; readonly original?: OriginalRow }
);

/** Where a body goes (stored first when it goes to the body store) and when its row expires: what a quarantined copy needs too. */
export async function placement(
  stores: AdmissionStores,
  candidate: Pick<Candidate, 'provider' | 'body' | 'digest' | 'now'>,
): Promise<{ location: BodyLocation; expiresAt: number }> {
  const location = await placeBody(stores.bodies, stores.inlineBodyBytes, candidate.provider, candidate.digest, candidate.body);
  return { location, expiresAt: Math.floor(candidate.now / 1000) + stores.retentionSeconds };
}

/** Admits a candidate: stored and enqueued, or the row already there (with its original, when asked for). */
export async function admitDelivery(stores: AdmissionStores, candidate: Candidate): Promise<AdmissionResult> {
  const key = deliveryKey(candidate.provider, candidate.eventId);
  const { location, expiresAt } = await placement(stores, candidate);
  const inserted = await stores.inbox.insert({
    provider: candidate.provider,
    eventId: candidate.eventId,
    ...location,
    digest: candidate.digest,
    receivedAt: candidate.now,
    meta: candidate.meta,
    expiresAt,
    ...(candidate.jobRef ? { jobRef: candidate.jobRef } : {}),
    ...(candidate.recovered ? { recovered: true } : {}),
    ...(candidate.eventAt !== undefined ? { eventAt: candidate.eventAt } : {}),
  });
  const placed = { key, location, expiresAt };
  if (!inserted) {
    return { ...placed, kind: 'exists', ...(candidate.readsOriginal === false ? {} : { original: await stores.inbox.originalOf(key) }) };
  }
  try {
    await stores.queue.enqueue([key]);
    return { ...placed, kind: 'inserted' };
  } catch (error) {
    return { ...placed, kind: 'inserted', enqueueError: error };
  }
}
