/**
 * The sweep's examination and the revive's fence, over in-memory ports: no DynamoDB. The store's
 * tests (dynamodb.test.ts) run the same rules against the emulator; here each clause of the rule
 * is checked on its own, and a property checks the whole rule, stated independently below, on
 * arbitrary indexes.
 */
import fc from 'fast-check';
import type { RangeRead, ReadBound, ShardedEntry } from '../../../../../lambda/shared/stores/dynamo';
import type { PendingState } from '../../../../../lambda/shared/stores/inbox';
import {
  examinePending,
  PendingIndexReader,
  ReadState,
  reviveFenced,
  shardsToRead,
  SweepFence,
  SweepMark,
  UNREAD,
} from '../../../../../lambda/shared/stores/inbox/sweep';
import { DeliveryStatus } from '../../../../../lib/contract';

const BOUND: ReadBound = { pageEntries: 100, pagesPerShard: 2 };

/** A row's state in the in-memory index: its status and clock, gone, or left unread by the read. */
type RowInMemory = PendingState | 'gone' | 'unread';

/** A pending index and rows held in memory, recording what the examination asked of it. */
class MemoryIndex implements PendingIndexReader {
  readonly ranges: { from: number; before: number; bound: ReadBound; shards: number }[] = [];
  readonly statesAsked: string[][] = [];
  /** The most state reads that were in flight at once. */
  mostInFlight = 0;
  private inFlight = 0;

  constructor(
    private readonly index: { entries: ShardedEntry[]; readBefore: number; rows: Record<string, RowInMemory>; mark?: SweepMark },
    readonly statesPerRead = 100,
    readonly pendingShards = 16,
  ) {}

  async sweepMark(): Promise<SweepMark> {
    return this.index.mark ?? { watermark: 0 };
  }

  async pendingEntries(from: number, before: number, bound: ReadBound, shards: number): Promise<RangeRead> {
    this.ranges.push({ from, before, bound, shards });
    return { entries: this.index.entries, readBefore: this.index.readBefore };
  }

  async pendingStates(keys: readonly string[]): Promise<Map<string, ReadState>> {
    if (keys.length > this.statesPerRead) throw new Error(`asked ${keys.length} states, more than ${this.statesPerRead} at once`);
    this.statesAsked.push([...keys]);
    this.mostInFlight = Math.max(this.mostInFlight, ++this.inFlight);
    // Answered a moment later, as a network read is: reads asked meanwhile overlap it.
    await new Promise((resolve) => setImmediate(resolve));
    this.inFlight -= 1;
    return new Map(
      keys.map((key) => {
        const row = this.index.rows[key];
        return [key, row === 'unread' ? UNREAD : row === 'gone' || row === undefined ? undefined : row];
      }),
    );
  }
}

const entry = (key: string, sort: number): ShardedEntry => ({ key, sort });
const received = (pendingSince?: number): PendingState => ({ status: DeliveryStatus.RECEIVED, ...(pendingSince !== undefined ? { pendingSince } : {}) });
const keysOf = (entries: readonly ShardedEntry[] | undefined) => (entries ?? []).map((found) => found.key);

describe('which entries are stranded', () => {
  test('a row is stranded when present, neither PROCESSED nor DEAD, and its clock was not restarted after its entry', async () => {
    const reader = new MemoryIndex({
      entries: [
        entry('p#received', 10),
        entry('p#processing', 11),
        entry('p#processed', 12),
        entry('p#dead', 13),
        entry('p#gone', 14),
        entry('p#restarted', 15),
        entry('p#older-clock', 16),
        entry('p#no-clock', 17),
      ],
      readBefore: 100,
      rows: {
        'p#received': received(10),
        'p#processing': { status: DeliveryStatus.PROCESSING, pendingSince: 11 },
        'p#processed': { status: DeliveryStatus.PROCESSED, pendingSince: 12 },
        'p#dead': { status: DeliveryStatus.DEAD },
        'p#gone': 'gone',
        // Its clock restarted after this entry was read: its newer entry is the one that counts.
        'p#restarted': received(40),
        // An eventually consistent read may show an older clock: enqueueing once more is harmless.
        'p#older-clock': received(3),
        'p#no-clock': received(),
      },
    });
    const look = await examinePending(reader, 100, BOUND);
    expect(keysOf(look.stranded)).toEqual(['p#received', 'p#processing', 'p#older-clock', 'p#no-clock']);
    expect(look).toEqual({ stranded: look.stranded, watermark: 0, examinedBefore: 100 });
  });

  test('the look reads the index from the watermark to the cutoff, within the bound, and returns the watermark and revision it started from', async () => {
    const reader = new MemoryIndex({ entries: [], readBefore: 500, rows: {}, mark: { watermark: 120, revision: 3 } });
    expect(await examinePending(reader, 500, BOUND)).toEqual({ stranded: [], watermark: 120, revision: 3, examinedBefore: 500 });
    expect(reader.ranges).toEqual([{ from: 120, before: 500, bound: BOUND, shards: 16 }]);
    expect(reader.statesAsked).toEqual([]);
  });

  test('where the read ended short of the cutoff, the watermark may move only there; rows the read reached beyond it are still found', async () => {
    const reader = new MemoryIndex({ entries: [entry('p#a', 10), entry('p#b', 30)], readBefore: 20, rows: { 'p#a': received(10), 'p#b': received(30) } });
    expect(await examinePending(reader, 100, BOUND)).toEqual({ stranded: [entry('p#a', 10), entry('p#b', 30)], watermark: 0, examinedBefore: 20 });
  });

  test('every stranded row of the read is taken, however many: no count bounds a look, only the read does', async () => {
    const sorts = Array.from({ length: 450 }, (_, i) => i + 1);
    const reader = new MemoryIndex({
      entries: sorts.map((sort) => entry(`p#${sort}`, sort)),
      readBefore: 1_000,
      rows: Object.fromEntries(sorts.map((sort) => [`p#${sort}`, received(sort)])),
    });
    const look = await examinePending(reader, 1_000, BOUND);
    expect(look.stranded).toHaveLength(450);
    expect(look.examinedBefore).toBe(1_000);
  });
});

describe('which shards the look reads', () => {
  test('every shard the inbox writes, and every shard it wrote before: the most a reconciler recorded, at least the 16 of an older inbox', () => {
    expect(shardsToRead(16, undefined)).toBe(16);
    expect(shardsToRead(64, undefined)).toBe(64);
    // Grown from 16: the old shards are among the new ones.
    expect(shardsToRead(64, 16)).toBe(64);
    // Lowered after a reconciler recorded 64: entries written under 64 are still read.
    expect(shardsToRead(16, 64)).toBe(64);
    expect(shardsToRead(32, 64)).toBe(64);
  });

  test('the look reads as many shards as shardsToRead says, and returns what the watermark item recorded', async () => {
    const lowered = new MemoryIndex({ entries: [], readBefore: 500, rows: {}, mark: { watermark: 0, shards: 64 } }, 100, 16);
    expect(await examinePending(lowered, 500, BOUND)).toEqual({ stranded: [], watermark: 0, recordedShards: 64, examinedBefore: 500 });
    expect(lowered.ranges.map((range) => range.shards)).toEqual([64]);
    const grown = new MemoryIndex({ entries: [], readBefore: 500, rows: {} }, 100, 40);
    await examinePending(grown, 500, BOUND);
    expect(grown.ranges.map((range) => range.shards)).toEqual([40]);
  });
});

describe('where the examination stops', () => {
  test('rows that need nothing do not stop it', async () => {
    const reader = new MemoryIndex({
      entries: [entry('p#a', 10), entry('p#done', 20), entry('p#b', 30)],
      readBefore: 100,
      rows: { 'p#a': received(10), 'p#done': { status: DeliveryStatus.PROCESSED }, 'p#b': received(30) },
    });
    expect(await examinePending(reader, 100, BOUND)).toEqual({ stranded: [entry('p#a', 10), entry('p#b', 30)], watermark: 0, examinedBefore: 100 });
  });

  test('at a row whose state the read left unread: nothing at or after it is taken', async () => {
    const reader = new MemoryIndex({
      entries: [entry('p#a', 10), entry('p#unread', 20), entry('p#b', 30)],
      readBefore: 100,
      rows: { 'p#a': received(10), 'p#unread': 'unread', 'p#b': received(30) },
    });
    expect(await examinePending(reader, 100, BOUND)).toEqual({ stranded: [entry('p#a', 10)], watermark: 0, examinedBefore: 20 });
  });

  test('at a row left unread, below the read’s end when that is lower still', async () => {
    const reader = new MemoryIndex({ entries: [entry('p#a', 10), entry('p#unread', 30)], readBefore: 25, rows: { 'p#a': received(10), 'p#unread': 'unread' } });
    expect((await examinePending(reader, 100, BOUND)).examinedBefore).toBe(25);
  });

  test('states are asked statesPerRead at a time, several reads in flight at once, taken in the index’s order', async () => {
    const sorts = Array.from({ length: 40 }, (_, i) => i + 1);
    const reader = new MemoryIndex(
      { entries: sorts.map((sort) => entry(`p#${sort}`, sort)), readBefore: 100, rows: Object.fromEntries(sorts.map((sort) => [`p#${sort}`, received(sort)])) },
      2,
    );
    expect(keysOf((await examinePending(reader, 100, BOUND)).stranded)).toEqual(sorts.map((sort) => `p#${sort}`));
    expect(reader.statesAsked).toEqual(Array.from({ length: 20 }, (_, i) => [`p#${2 * i + 1}`, `p#${2 * i + 2}`]));
    expect(reader.mostInFlight).toBeGreaterThan(1);
    expect(reader.mostInFlight).toBeLessThanOrEqual(8);
  });

  test('a read that fails stops the look with its error; reads ahead of it that fail too are not left unhandled', async () => {
    const sorts = Array.from({ length: 10 }, (_, i) => i + 1);
    const reader = new MemoryIndex({ entries: sorts.map((sort) => entry(`p#${sort}`, sort)), readBefore: 100, rows: {} }, 1);
    reader.pendingStates = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('throttled');
    };
    await expect(examinePending(reader, 100, BOUND)).rejects.toThrow('throttled');
  });
});

describe('entries that are not a delivery row’s', () => {
  test('are refused below where the examination ended, never read, never stranded', async () => {
    const reader = new MemoryIndex({
      entries: [entry('ledger:p#job', 5), entry('p#a', 10), entry('sweep:pending', 15), entry('p#unread', 20), entry('rejected:p#x', 25)],
      readBefore: 100,
      rows: { 'p#a': received(10), 'p#unread': 'unread' },
    });
    const look = await examinePending(reader, 100, BOUND);
    expect(look).toEqual({ stranded: [entry('p#a', 10)], refused: [entry('ledger:p#job', 5), entry('sweep:pending', 15)], watermark: 0, examinedBefore: 20 });
    expect(reader.statesAsked.flat()).toEqual(['p#a', 'p#unread']);
  });
});

/**
 * The rule, stated on its own. A delivery row's entry (`<provider>#<id>`, the provider a lower-case
 * name) is owed when its row is present, neither PROCESSED nor DEAD, with no clock or a clock at
 * or before the entry. The examination takes owed entries in order; it ends at the read's end, or
 * earlier at the first entry whose state was not read. Every owed entry below that end is taken;
 * any other entry below it is refused.
 */
const isDelivery = (key: string) => /^[a-z][a-z0-9-]*#.+$/.test(key);
const isOwed = (row: RowInMemory | undefined, at: ShardedEntry) =>
  typeof row === 'object' &&
  row.status !== DeliveryStatus.PROCESSED &&
  row.status !== DeliveryStatus.DEAD &&
  (row.pendingSince === undefined || row.pendingSince <= at.sort);

const STATUSES = [DeliveryStatus.RECEIVED, DeliveryStatus.PROCESSING, DeliveryStatus.PROCESSED, DeliveryStatus.DEAD];
const rowArbitrary: fc.Arbitrary<RowInMemory> = fc.oneof(
  fc.constantFrom<RowInMemory>('gone', 'unread'),
  fc
    .record({ status: fc.constantFrom(...STATUSES), pendingSince: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }) })
    .map(({ status, pendingSince }): RowInMemory => ({ status, ...(pendingSince !== undefined ? { pendingSince } : {}) })),
);
const indexArbitrary = fc
  .uniqueArray(
    fc.record({
      key: fc.oneof(
        fc.integer({ min: 0, max: 9999 }).map((id) => `p#${id}`),
        fc.constantFrom('ledger:p#1', 'rejected:p#2', 'sweep:pending'),
      ),
      sort: fc.integer({ min: 0, max: 50 }),
      row: rowArbitrary,
    }),
    { maxLength: 40, selector: (item) => item.key },
  )
  .map((items) => items.sort((a, b) => a.sort - b.sort || (a.key < b.key ? -1 : 1)));

test('on any index, the look takes every owed entry below where it ended and nothing else, and ends only where the rule lets it', async () => {
  await fc.assert(
    fc.asyncProperty(indexArbitrary, fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 5 }), async (items, readBefore, statesPerRead) => {
      const entries = items.map(({ key, sort }) => entry(key, sort));
      const rows = Object.fromEntries(items.map(({ key, row }) => [key, row]));
      const look = await examinePending(new MemoryIndex({ entries, readBefore, rows }, statesPerRead), 100, BOUND);
      const end = look.examinedBefore;
      const owed = items.filter((item) => isDelivery(item.key) && isOwed(item.row, item));

      expect(end).toBeLessThanOrEqual(readBefore);
      // Taken in the index's order, each one owed.
      expect(look.stranded).toEqual(owed.slice(0, look.stranded.length).map(({ key, sort }) => entry(key, sort)));
      // Every owed entry below the end is taken; every other entry below it is refused or needs nothing.
      for (const item of owed.filter((owedItem) => owedItem.sort < end)) expect(keysOf(look.stranded)).toContain(item.key);
      expect(keysOf(look.refused)).toEqual(items.filter((item) => item.sort < end && !isDelivery(item.key)).map((item) => item.key));
      // Short of the read's end only at an entry whose state was not read.
      if (end < readBefore) expect(items.find((item) => isDelivery(item.key) && item.sort === end && item.row === 'unread')).toBeDefined();
    }),
    { numRuns: 500 },
  );
});

/** A sweep's watermark item and one row, in memory, with a sweep that may move the watermark between a revive's requests. */
class MemoryFence implements SweepFence {
  readonly calls: string[] = [];

  constructor(
    private status: DeliveryStatus,
    private readonly watermarks: number[],
  ) {}

  async reviveRow(key: string, seen: DeliveryStatus, since: number): Promise<boolean> {
    this.calls.push(`revive ${key} at ${since}`);
    if (this.status !== seen) return false;
    this.status = DeliveryStatus.RECEIVED;
    return true;
  }

  async fenceSweep(): Promise<number> {
    const watermark = this.watermarks.length > 1 ? this.watermarks.shift()! : this.watermarks[0];
    this.calls.push(`fence: watermark ${watermark}`);
    return watermark;
  }

  async touchPending(key: string, since: number): Promise<void> {
    this.calls.push(`touch ${key} at ${since}`);
  }
}

describe('the revive’s fence', () => {
  test('a row no longer as the operator saw it is left alone, and the sweep is not fenced', async () => {
    const fence = new MemoryFence(DeliveryStatus.PROCESSED, [0]);
    expect(await reviveFenced(fence, 'p#1', DeliveryStatus.DEAD, 1_000)).toBe(false);
    expect(fence.calls).toEqual(['revive p#1 at 1000']);
  });

  test('an entry at or above the watermark the fence returns is seen by the next sweep: one fence', async () => {
    const fence = new MemoryFence(DeliveryStatus.DEAD, [1_000]);
    expect(await reviveFenced(fence, 'p#1', DeliveryStatus.DEAD, 1_000)).toBe(true);
    expect(fence.calls).toEqual(['revive p#1 at 1000', 'fence: watermark 1000']);
  });

  test('an entry the watermark passed (a clock behind) restarts at the watermark, and the fence is taken again', async () => {
    const fence = new MemoryFence(DeliveryStatus.PROCESSED, [5_000, 5_000]);
    expect(await reviveFenced(fence, 'p#1', DeliveryStatus.PROCESSED, 1_000)).toBe(true);
    expect(fence.calls).toEqual(['revive p#1 at 1000', 'fence: watermark 5000', 'touch p#1 at 5000', 'fence: watermark 5000']);
  });

  test('a watermark that passes the entry at five fences in a row is reported, naming the row', async () => {
    const fence = new MemoryFence(DeliveryStatus.DEAD, [2_000, 3_000, 4_000, 5_000, 6_000, 7_000]);
    await expect(reviveFenced(fence, 'p#1', DeliveryStatus.DEAD, 1_000)).rejects.toThrow(
      "p#1 is RECEIVED again, but the sweep's watermark passed its pending-index entry 5 times in a row: replay it again",
    );
    expect(fence.calls.filter((call) => call.startsWith('fence'))).toHaveLength(5);
    expect(fence.calls.filter((call) => call.startsWith('touch'))).toEqual([
      'touch p#1 at 2000',
      'touch p#1 at 3000',
      'touch p#1 at 4000',
      'touch p#1 at 5000',
    ]);
  });
});
