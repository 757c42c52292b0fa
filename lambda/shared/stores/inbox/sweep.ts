import { DeliveryStatus, PendingIndex } from '../../../../lib/contract';
import type { RangeRead, ReadBound, ShardedEntry } from '../dynamo';
import { isDeliveryKey } from './keys';
import type { StrandedRows } from './port';
import type { PendingState } from './row';

/** A row whose state a read left unread (DynamoDB's unprocessed keys): not examined. */
export const UNREAD = Symbol('unread');

/** A row's state as one read of states found it: undefined when the row is gone. */
export type ReadState = PendingState | undefined | typeof UNREAD;

/**
 * The sweep's watermark item as one read found it: the watermark, the revision (absent until a
 * revive fenced it) and the most shards a reconciler recorded (absent until one had more than
 * `PendingIndex.SHARD_COUNT`).
 */
export interface SweepMark {
  readonly watermark: number;
  readonly revision?: number;
  readonly shards?: number;
}

/** What the sweep's examination reads: the watermark, the pending index, rows' states. */
export interface PendingIndexReader {
  /** How many rows' states one `pendingStates` call may ask for. */
  readonly statesPerRead: number;
  /** The shard count this reader's inbox writes entries under (`pendingIndexShards`). */
  readonly pendingShards: number;
  sweepMark(): Promise<SweepMark>;
  /** The pending-index entries in [from, before) of shards `p00` up to `shards` of them, read within `bound` (`RangeRead` says what is complete). */
  pendingEntries(from: number, before: number, bound: ReadBound, shards: number): Promise<RangeRead>;
  /** Each row's status and `pendingSince`, eventually consistent; `UNREAD` for a row the read left out. */
  pendingStates(keys: readonly string[]): Promise<Map<string, ReadState>>;
}

/**
 * The shards a sweep must read: every shard this inbox writes, and every shard it ever wrote
 * (the most a reconciler recorded, or the 16 of an inbox from before the count was a setting).
 * A count that grew reads the old shards among the new ones, so no entry written under it is lost.
 */
export function shardsToRead(configured: number, recorded: number | undefined): number {
  return Math.max(configured, recorded ?? PendingIndex.SHARD_COUNT);
}

/** `pendingStates` calls in flight at once: the examination is bound by the CPU, not by each read's round trip. */
const STATE_READS_IN_FLIGHT = 8;

/**
 * A row the sweep must enqueue: present, neither PROCESSED nor DEAD, and its clock not restarted
 * since `entry` was read (a `pendingSince` at or before the entry's: an eventually consistent read
 * may show an older one, and enqueueing once more is harmless).
 */
function isStranded(state: PendingState | undefined, entry: ShardedEntry): boolean {
  if (state === undefined || state.status === DeliveryStatus.PROCESSED || state.status === DeliveryStatus.DEAD) return false;
  return state.pendingSince === undefined || state.pendingSince <= entry.sort;
}

/**
 * The sweep's examination: the watermark first, then the pending-index entries from it to
 * `cutoff` in every shard to read (`shardsToRead`), then each delivery row's state,
 * `statesPerRead` at a time (several reads in flight), in order. A stale state can only enqueue a
 * row once more, which its claim makes harmless. What it found bounds where the watermark may move
 * (`examinedBefore`): the read's end, or less where the examination stopped, at the first row
 * whose state was left unread. Rows a shard's page reached past the read's end are examined all the
 * same (the next look reads their entries again, and finds the stranded ones restarted). An entry
 * whose key is not a delivery row's is refused: never read, never enqueued.
 */
export async function examinePending(reader: PendingIndexReader, cutoff: number, bound: ReadBound): Promise<StrandedRows> {
  const { watermark, revision, shards } = await reader.sweepMark();
  const mark = { watermark, ...(revision !== undefined ? { revision } : {}), ...(shards !== undefined ? { recordedShards: shards } : {}) };
  const read = await reader.pendingEntries(watermark, cutoff, bound, shardsToRead(reader.pendingShards, shards));
  // Only a delivery row's entry is read and may be enqueued; any other is refused, never processed.
  const entries = read.entries.filter((entry) => isDeliveryKey(entry.key));
  const refusedBefore = (before: number) => {
    const refused = read.entries.filter((entry) => entry.sort < before && !isDeliveryKey(entry.key));
    return refused.length > 0 ? { refused } : {};
  };
  const chunks: ShardedEntry[][] = [];
  for (let start = 0; start < entries.length; start += reader.statesPerRead) chunks.push(entries.slice(start, start + reader.statesPerRead));
  const reads: Promise<Map<string, ReadState>>[] = [];
  const readAhead = (upTo: number) => {
    for (let index = reads.length; index < Math.min(upTo, chunks.length); index++) {
      reads.push(reader.pendingStates(chunks[index].map((entry) => entry.key)));
      // A read ahead of where the examination stops is never awaited: its failure must not go unhandled.
      reads[index].catch(() => undefined);
    }
  };
  const stranded: ShardedEntry[] = [];
  for (let index = 0; index < chunks.length; index++) {
    readAhead(index + STATE_READS_IN_FLIGHT);
    const states = await reads[index];
    for (const entry of chunks[index]) {
      const state = states.get(entry.key);
      if (state === UNREAD) {
        const examinedBefore = Math.min(entry.sort, read.readBefore);
        return { stranded, ...refusedBefore(examinedBefore), ...mark, examinedBefore };
      }
      if (isStranded(state, entry)) stranded.push(entry);
    }
  }
  return { stranded, ...refusedBefore(read.readBefore), ...mark, examinedBefore: read.readBefore };
}

/** The requests a revive makes, each one conditional or idempotent. */
export interface SweepFence {
  /** The revive's conditional write: RECEIVED, a fresh budget, no lease, in the pending index at `since`; false when the row is no longer `seen`. */
  reviveRow(key: string, seen: DeliveryStatus, since: number): Promise<boolean>;
  /** Bumps the watermark item's revision, so that no sweep that read it before moves the watermark; returns the watermark. */
  fenceSweep(): Promise<number>;
  /** Restarts a pending row's clock; nothing for a row PROCESSED or DEAD meanwhile. */
  touchPending(key: string, since: number): Promise<void>;
}

/**
 * How many times a revive fences the sweep before it gives up: each retry needs a sweep to move
 * the watermark in the moment between the revive's write and its fence (sweeps run minutes apart).
 */
export const REVIVE_FENCES = 5;

/**
 * A revive the sweep cannot miss. The operator's clock cannot place the pending-index entry: one
 * that is behind would put it below the watermark, where no sweep reads. So the entry is written
 * at `now`, then the watermark item's revision is bumped, which returns the watermark. A sweep
 * that read the item before the bump can no longer move the watermark (`advanceSweepWatermark`);
 * one that reads it after reads the index after the entry was written. The entry is therefore
 * seen unless the watermark was already past it (a clock behind, or a sweep between the write and
 * the bump): then its clock restarts at the watermark and the fence is taken again. The store's
 * order decides, no clock. False when the row was no longer `seen`.
 */
export async function reviveFenced(store: SweepFence, key: string, seen: DeliveryStatus, now: number): Promise<boolean> {
  if (!(await store.reviveRow(key, seen, now))) return false;
  for (let fences = 1, since = now; ; fences++) {
    const watermark = await store.fenceSweep();
    if (watermark <= since) return true;
    if (fences === REVIVE_FENCES) {
      throw new Error(
        `${key} is ${DeliveryStatus.RECEIVED} again, but the sweep's watermark passed its pending-index entry ${fences} times in a row: replay it again`,
      );
    }
    since = watermark;
    await store.touchPending(key, since);
  }
}
