import type { DeliveryStatus } from '../../../../lib/contract';
import type { ReadBound, ShardedEntry } from '../dynamo';
import type { ClaimedDelivery, NewDelivery, OriginalRow, QuarantinedCopy, RowState } from './row';

/** A claimed row to mark processed, with the outcome it was decided with. */
export interface Completion {
  readonly row: ClaimedDelivery;
  readonly outcome: string;
}

/** What one look for stranded rows found. */
export interface StrandedRows {
  /**
   * The pending-index entries of rows neither PROCESSED nor DEAD, oldest first: those below
   * `examinedBefore`, and maybe some the read reached beyond it.
   */
  readonly stranded: ShardedEntry[];
  /**
   * Entries below `examinedBefore` whose key is not a delivery row's (`isDeliveryKey`): examined,
   * never read or enqueued, for the caller to count; absent when there are none.
   */
  readonly refused?: ShardedEntry[];
  /** The sweep's watermark the look started from. */
  readonly watermark: number;
  /**
   * The watermark item's revision the look started from (absent: none written yet): the watermark
   * moves only while it is unchanged, since an operator's revive changes it (see `revive`).
   */
  readonly revision?: number;
  /** The most shards a reconciler recorded on the watermark item (`notePendingShards`); absent: none yet. */
  readonly recordedShards?: number;
  /**
   * Every entry below this was examined and is in `stranded` or needs nothing: the watermark may
   * move here once each of `stranded` is handled (enqueued, its clock restarted). Entries at or
   * above it are read again by the next look.
   */
  readonly examinedBefore: number;
}

/**
 * Persistence of the inbox. Every write is a single-item conditional request (`completeLeased`
 * says why its batch needs no condition), safe to repeat after a crash; nothing depends on
 * transactions or streams.
 */
export interface InboxStore {
  /** Writes a new row; false when a row with this key already exists (nothing is changed). */
  insert(delivery: NewDelivery): Promise<boolean>;
  /** The digest of an existing row and whether it was recovered by polling, read without its body. */
  originalOf(key: string): Promise<OriginalRow | undefined>;
  /** Keeps an altered copy beside the original, counting repeats. */
  quarantine(key: string, copy: QuarantinedCopy): Promise<void>;
  /**
   * Takes the lease on a row still to process (RECEIVED, or PROCESSING with its lease expired)
   * that has had fewer than `maxAttempts` attempts; undefined when it is settled (PROCESSED,
   * DEAD), leased, out of attempts or absent. A DEAD row is never claimed: only an operator
   * revives it.
   */
  claim(key: string, owner: string, now: number, leaseMs: number, maxAttempts: number): Promise<ClaimedDelivery | undefined>;
  /** Reads a row's state without its body. */
  status(key: string): Promise<RowState | undefined>;
  /**
   * Marks DEAD a row whose `maxAttempts` attempts all ended without a release (their invocations
   * died: a timeout, out of memory, a kill); false when it changed meanwhile.
   */
  markExhausted(key: string, error: string, now: number, maxAttempts: number): Promise<boolean>;
  /** Marks a claimed row processed (it keeps its pending-index entry); false when the lease was lost meanwhile. */
  complete(key: string, owner: string, outcome: string, now: number): Promise<boolean>;
  /**
   * Marks claimed rows processed in one BatchWriteItem per 25, each written back whole as its
   * claim left it, PROCESSED, without its lease: what `complete` writes.
   * Only for rows whose lease the caller holds with time to spare (see the adapter's
   * `completeLeased`); returns the keys DynamoDB left unprocessed, for `complete`.
   */
  completeLeased(completions: readonly Completion[], now: number, signal?: AbortSignal): Promise<string[]>;
  /**
   * Gives a claimed row back after a failure, recording the error. A live row's pending clock
   * restarts, so the sweep leaves it to the queue's own retries; a dead row leaves the index.
   */
  release(key: string, owner: string, error: string, dead: boolean, now: number): Promise<void>;
  /**
   * Gives a claimed row back after a downstream failure while the circuit breaker is open
   * (docs/FLOW-CONTROL.md): like a live `release`, and the claim's attempt is given back too, so a
   * downstream outage never spends a row's attempts.
   */
  giveBack(key: string, owner: string, error: string, now: number): Promise<void>;
  /**
   * An operator's replay or redrive: puts a PROCESSED or DEAD row (its status `seen`) back to
   * RECEIVED, with a fresh budget of attempts and a pending-index entry the sweep is sure to read
   * (`reviveFenced`). The row keeps its body, digest, outcome and processedAt; processing it again
   * offers the same result under the same job and effect keys. False when the row changed meanwhile.
   */
  revive(key: string, seen: DeliveryStatus, now: number): Promise<boolean>;
  /**
   * Rows pending since before `cutoff` that are neither PROCESSED nor DEAD, among the pending-index
   * entries from the sweep's watermark up (`sweepWatermark`), oldest first, reading at most
   * `bound` of each shard (`examinePending`).
   */
  findStranded(cutoff: number, bound: ReadBound): Promise<StrandedRows>;
  /**
   * Records this inbox's shard count on the watermark item when it is more than `recorded` (what
   * a look found there), so that every later sweep reads those shards too, whatever it is
   * configured with (`shardsToRead`); only ever raises it.
   */
  notePendingShards(recorded: number | undefined): Promise<void>;
  /** Restarts a pending row's clock after it was enqueued again; nothing for a row PROCESSED or DEAD meanwhile. */
  touchPending(key: string, now: number): Promise<void>;
  /** The sweep's watermark: every pending-index entry below it was examined; 0 when none was saved yet. */
  sweepWatermark(): Promise<number>;
  /**
   * Moves the sweep's watermark up to `to`, if the item is still at the `revision` the look read;
   * false when it already is there or beyond (only forward, so concurrent runs are safe), or when an
   * operator revived a row since (the next run reads the index again).
   */
  advanceSweepWatermark(to: number, revision?: number): Promise<boolean>;
}
