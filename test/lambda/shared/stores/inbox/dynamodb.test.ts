/**
 * The inbox store's conditional requests, one by one, against the DynamoDB emulator: what each
 * writes, and what each refuses to change. The handlers' tests rely on these; here each is
 * checked on its own, with the row read back as DynamoDB holds it.
 */
import { createHash } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDbInboxStore, NewDelivery } from '../../../../../lambda/shared/stores/inbox';
import { createTables, resourceNames } from '#twin/testing';
import { uniqueName } from '../../../../support/inbox-fixture';
import { DeliveryStatus } from '../../../../../lib/contract';

const dynamodb = new DynamoDBClient({});
let table: string;
let store: DynamoDbInboxStore;
const T0 = Date.UTC(2026, 8, 18, 10);
const LEASE = 30_000;
const MAX = 3;

beforeEach(async () => {
  const names = resourceNames(uniqueName('inbox-store'));
  await createTables(dynamodb, names);
  table = names.inboxTable;
  store = new DynamoDbInboxStore(dynamodb, table);
});
afterAll(() => dynamodb.destroy());

const sha256 = (text: string | Buffer): Buffer => createHash('sha256').update(text).digest();
const digestOf = (eventId: string): string => sha256(eventId).toString('hex');

const delivery = (eventId: string, overrides: Partial<NewDelivery> = {}): NewDelivery => ({
  provider: 'answerline',
  eventId,
  body: Buffer.from(`{"task":{"id":"${eventId}"}}`),
  digest: digestOf(eventId),
  receivedAt: T0,
  meta: { 'content-type': 'application/json' },
  expiresAt: T0 / 1000 + 86_400,
  ...overrides,
});

async function item(key: string, sk = 'delivery'): Promise<Record<string, unknown> | undefined> {
  const out = await dynamodb.send(new GetItemCommand({ TableName: table, Key: { pk: { S: key }, sk: { S: sk } }, ConsistentRead: true }));
  return (
    out.Item &&
    Object.fromEntries(Object.entries(out.Item).map(([name, value]) => [name, value.S ?? (value.N !== undefined ? Number(value.N) : (value.BOOL ?? value))]))
  );
}

test('insert writes a RECEIVED row in the pending index, once: a second insert of the key changes nothing', async () => {
  expect(await store.insert(delivery('tsk_1', { jobRef: 'job-1', recovered: true }))).toBe(true);
  const first = await item('answerline#tsk_1');
  expect(first).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0, pendingSince: T0, jobRef: 'answerline#job-1', recovered: true });
  expect(first!.pendingShard).toMatch(/^p\d\d$/);
  // The digest is kept as its 32 bytes; the provider and event id only in the key.
  expect(Buffer.from((first!.digest as AttributeValue).B!)).toEqual(sha256('tsk_1'));
  expect(first).not.toHaveProperty('provider');
  expect(first).not.toHaveProperty('eventId');

  expect(await store.insert(delivery('tsk_1', { digest: digestOf('another'), receivedAt: T0 + 1 }))).toBe(false);
  expect(await item('answerline#tsk_1')).toEqual(first);
  expect(await store.originalOf('answerline#tsk_1')).toEqual({ digest: digestOf('tsk_1'), recovered: true });
  expect(await store.originalOf('answerline#absent')).toBeUndefined();
});

test('quarantine keeps one copy per digest beside the row, counting repeats and keeping when it was first seen', async () => {
  await store.insert(delivery('tsk_q'));
  const copy = { provider: 'answerline', digest: 'altered', body: Buffer.from('{}'), meta: {}, receivedAt: T0, expiresAt: T0 / 1000 + 60 };
  await store.quarantine('answerline#tsk_q', copy);
  await store.quarantine('answerline#tsk_q', { ...copy, receivedAt: T0 + 5_000 });
  expect(await item('answerline#tsk_q', 'quarantine#altered')).toMatchObject({ count: 2, receivedAt: T0, lastSeenAt: T0 + 5_000 });
  expect(await store.originalOf('answerline#tsk_q')).toEqual({ digest: digestOf('tsk_q'), recovered: false });
});

test('insert refuses a digest that is not a SHA-256 in hex, naming the field, and writes nothing', async () => {
  await expect(store.insert(delivery('tsk_d', { digest: 'digest-of-tsk_d' }))).rejects.toThrow(/^digest must be a SHA-256/);
  await expect(store.insert(delivery('tsk_d', { digest: digestOf('tsk_d').toUpperCase() }))).rejects.toThrow(/^digest/);
  expect(await item('answerline#tsk_d')).toBeUndefined();
});

describe('claim', () => {
  test('takes a RECEIVED row with a lease and counts the attempt; a held lease refuses, an expired one is taken again', async () => {
    await store.insert(delivery('tsk_c'));
    expect(await store.claim('answerline#tsk_c', 'w1', T0, LEASE, MAX)).toMatchObject({ status: DeliveryStatus.PROCESSING, attempts: 1, recovered: false });
    expect(await item('answerline#tsk_c')).toMatchObject({ leaseOwner: 'w1', leaseUntil: T0 + LEASE });
    expect(await store.claim('answerline#tsk_c', 'w2', T0 + LEASE - 1, LEASE, MAX)).toBeUndefined();
    expect(await store.claim('answerline#tsk_c', 'w2', T0 + LEASE + 1, LEASE, MAX)).toMatchObject({ attempts: 2 });
  });

  test('never takes a row out of attempts, a PROCESSED or a DEAD row, or a row that is not there', async () => {
    await store.insert(delivery('tsk_spent'));
    for (let i = 0; i < MAX; i++) await store.claim('answerline#tsk_spent', `w${i}`, T0 + i * (LEASE + 1), LEASE, MAX);
    expect(await store.claim('answerline#tsk_spent', 'late', T0 + MAX * (LEASE + 1), LEASE, MAX)).toBeUndefined();
    expect(await store.status('answerline#tsk_spent')).toMatchObject({ status: DeliveryStatus.PROCESSING, attempts: MAX });

    await store.insert(delivery('tsk_done'));
    await store.claim('answerline#tsk_done', 'w', T0, LEASE, MAX);
    expect(await store.complete('answerline#tsk_done', 'w', 'winner', T0 + 1)).toBe(true);
    expect(await store.claim('answerline#tsk_done', 'again', T0 + LEASE * 10, LEASE, MAX)).toBeUndefined();

    await store.insert(delivery('tsk_dead'));
    await store.claim('answerline#tsk_dead', 'w', T0, LEASE, MAX);
    await store.release('answerline#tsk_dead', 'w', 'Error', true, T0 + 1);
    expect(await store.claim('answerline#tsk_dead', 'again', T0 + LEASE * 10, LEASE, MAX)).toBeUndefined();

    expect(await store.claim('answerline#never', 'w', T0, LEASE, MAX)).toBeUndefined();
  });
});

test('complete and release act only for the lease owner; a live release restarts the pending clock, a dead one leaves the index', async () => {
  await store.insert(delivery('tsk_r'));
  await store.claim('answerline#tsk_r', 'owner', T0, LEASE, MAX);
  expect(await store.complete('answerline#tsk_r', 'thief', 'winner', T0 + 1)).toBe(false);
  await store.release('answerline#tsk_r', 'thief', 'Error', false, T0 + 1);
  expect(await item('answerline#tsk_r')).toMatchObject({ status: DeliveryStatus.PROCESSING, leaseOwner: 'owner' });

  await store.release('answerline#tsk_r', 'owner', 'MalformedDeliveryError: task: is missing', false, T0 + 2);
  const live = await item('answerline#tsk_r');
  expect(live).toMatchObject({ status: DeliveryStatus.RECEIVED, lastError: 'MalformedDeliveryError: task: is missing', pendingSince: T0 + 2 });
  expect(live).not.toHaveProperty('leaseOwner');

  await store.claim('answerline#tsk_r', 'owner2', T0 + 3, LEASE, MAX);
  await store.release('answerline#tsk_r', 'owner2', 'Error', true, T0 + 4);
  const dead = await item('answerline#tsk_r');
  expect(dead).toMatchObject({ status: DeliveryStatus.DEAD });
  expect(dead).not.toHaveProperty('pendingShard');
  expect(dead).not.toHaveProperty('pendingSince');
});

test('complete marks PROCESSED with its outcome, without lease or error, and leaves its pending-index entry as it was', async () => {
  await store.insert(delivery('tsk_p'));
  const shard = (await item('answerline#tsk_p'))!.pendingShard;
  await store.claim('answerline#tsk_p', 'w', T0, LEASE, MAX);
  await store.complete('answerline#tsk_p', 'w', 'superseded', T0 + 9);
  const done = await item('answerline#tsk_p');
  // Removing or changing either index key would write the index: the entry stays until the TTL.
  expect(done).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'superseded', processedAt: T0 + 9, pendingShard: shard, pendingSince: T0 });
  for (const gone of ['leaseOwner', 'leaseUntil', 'lastError']) expect(done).not.toHaveProperty(gone);
});

test('markExhausted kills only a row whose attempts are spent and whose last lease ran out', async () => {
  await store.insert(delivery('tsk_x'));
  await store.claim('answerline#tsk_x', 'w', T0, LEASE, MAX);
  expect(await store.markExhausted('answerline#tsk_x', 'AttemptsExhausted: …', T0 + LEASE + 1, MAX)).toBe(false);
  for (let i = 1; i < MAX; i++) await store.claim('answerline#tsk_x', `w${i}`, T0 + i * (LEASE + 1), LEASE, MAX);
  expect(await store.markExhausted('answerline#tsk_x', 'AttemptsExhausted: …', T0 + (MAX - 1) * (LEASE + 1) + 1, MAX)).toBe(false);
  expect(await store.markExhausted('answerline#tsk_x', 'AttemptsExhausted: …', T0 + MAX * (LEASE + 1), MAX)).toBe(true);
  expect(await item('answerline#tsk_x')).toMatchObject({ status: DeliveryStatus.DEAD, lastError: 'AttemptsExhausted: …' });
});

test('revive puts back only a row still in the status the operator saw, with a fresh budget and in the pending index', async () => {
  await store.insert(delivery('tsk_v'));
  await store.claim('answerline#tsk_v', 'w', T0, LEASE, MAX);
  await store.release('answerline#tsk_v', 'w', 'Error', true, T0 + 1);
  expect(await store.revive('answerline#tsk_v', DeliveryStatus.PROCESSED, T0 + 2)).toBe(false);
  expect(await store.revive('answerline#tsk_v', DeliveryStatus.DEAD, T0 + 2)).toBe(true);
  expect(await item('answerline#tsk_v')).toMatchObject({
    status: DeliveryStatus.RECEIVED,
    attempts: 0,
    pendingSince: T0 + 2,
    pendingShard: expect.stringMatching(/^p\d\d$/),
  });
});

const keysOf = (found: { stranded: { key: string }[] }): string[] => found.stranded.map((entry) => entry.key);
const WIDE = { pageEntries: 1000, pagesPerShard: 8 };

test('a revive fences the sweep: a look that read the watermark before it moves nothing, and an entry the watermark passed meanwhile restarts at the watermark', async () => {
  await store.insert(delivery('tsk_r'));
  await store.claim('answerline#tsk_r', 'w', T0, LEASE, MAX);
  await store.release('answerline#tsk_r', 'w', 'Error', true, T0 + 1);
  expect(await store.advanceSweepWatermark(T0 + 10_000)).toBe(true);
  // A sweep's look, started before the revive.
  const look = await store.findStranded(T0 + 20_000, WIDE);
  expect(look).toEqual({ stranded: [], watermark: T0 + 10_000, examinedBefore: T0 + 20_000 });

  // The operator's clock is far behind the watermark, and another sweep moves the watermark
  // between the revive's write and its fence (that sweep read the index before the write).
  let raced = false;
  const racingClient = {
    send: async (command: UpdateItemCommand) => {
      const out = await dynamodb.send(command);
      if (!raced && command instanceof UpdateItemCommand && command.input.Key?.sk?.S === 'delivery') {
        raced = true;
        const other = await store.findStranded(T0 + 30_000, WIDE);
        expect(await store.advanceSweepWatermark(T0 + 30_000, other.revision)).toBe(true);
      }
      return out;
    },
  } as unknown as DynamoDBClient;
  expect(await new DynamoDbInboxStore(racingClient, table).revive('answerline#tsk_r', DeliveryStatus.DEAD, T0 + 2)).toBe(true);
  expect(raced).toBe(true);
  expect(await item('answerline#tsk_r')).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0, pendingSince: T0 + 30_000 });
  expect(await item('sweep:pending', 'watermark')).toEqual({ pk: 'sweep:pending', sk: 'watermark', sweptBefore: T0 + 30_000, revision: 2 });

  // The look from before the revive cannot move the watermark; a new one finds the row, then can.
  expect(await store.advanceSweepWatermark(T0 + 40_000, look.revision)).toBe(false);
  const next = await store.findStranded(T0 + 40_000, WIDE);
  expect(next).toMatchObject({ stranded: [{ key: 'answerline#tsk_r', sort: T0 + 30_000 }], watermark: T0 + 30_000, revision: 2 });
  expect(await store.advanceSweepWatermark(T0 + 40_000, next.revision)).toBe(true);
  expect(await store.sweepWatermark()).toBe(T0 + 40_000);
});

test('the pending index: stranded rows oldest first, from the watermark up; a touch restarts the clock; processed rows are never stranded', async () => {
  for (let i = 0; i < 5; i++) await store.insert(delivery(`tsk_s${i}`, { receivedAt: T0 + i }));
  expect(await store.findStranded(T0 + 3, WIDE)).toEqual({
    stranded: [0, 1, 2].map((i) => ({ key: `answerline#tsk_s${i}`, sort: T0 + i })),
    watermark: 0,
    examinedBefore: T0 + 3,
  });
  await store.touchPending('answerline#tsk_s0', T0 + 100);
  expect(keysOf(await store.findStranded(T0 + 10, WIDE))).toEqual(['answerline#tsk_s1', 'answerline#tsk_s2', 'answerline#tsk_s3', 'answerline#tsk_s4']);

  await store.claim('answerline#tsk_s1', 'w', T0, LEASE, MAX);
  await store.complete('answerline#tsk_s1', 'w', 'winner', T0 + 1);
  // A processed row's clock is not restarted: its entry stays where it is.
  await store.touchPending('answerline#tsk_s1', T0 + 200);
  expect(await item('answerline#tsk_s1')).toMatchObject({ status: DeliveryStatus.PROCESSED, pendingSince: T0 + 1 });
  expect(keysOf(await store.findStranded(T0 + 1_000, WIDE))).toEqual(['answerline#tsk_s2', 'answerline#tsk_s3', 'answerline#tsk_s4', 'answerline#tsk_s0']);

  // Past the watermark only; it moves forward only.
  expect(await store.advanceSweepWatermark(T0 + 3)).toBe(true);
  expect(await store.advanceSweepWatermark(T0 + 2)).toBe(false);
  expect(await store.advanceSweepWatermark(T0 + 3)).toBe(false);
  expect(await store.sweepWatermark()).toBe(T0 + 3);
  expect(await store.findStranded(T0 + 1_000, WIDE)).toMatchObject({
    stranded: [{ key: 'answerline#tsk_s3' }, { key: 'answerline#tsk_s4' }, { key: 'answerline#tsk_s0' }],
    watermark: T0 + 3,
    examinedBefore: T0 + 1_000,
  });
  // A watermark past the cutoff (a longer sweepAfter since): nothing to read.
  expect(await store.findStranded(T0 + 2, WIDE)).toEqual({ stranded: [], watermark: T0 + 3, examinedBefore: T0 + 2 });
});

test('the watermark item is its own, beside no delivery row, quarantined copy or submission', async () => {
  await store.advanceSweepWatermark(T0);
  expect(await item('sweep:pending', 'watermark')).toEqual({ pk: 'sweep:pending', sk: 'watermark', sweptBefore: T0 });
});

describe('the shard count grows on a deployed inbox', () => {
  /** Rows whose shard under `count` is past the 16 an inbox had before (p16 and up), `n` of them. */
  async function rowsBeyondSixteen(writer: DynamoDbInboxStore, n: number, label: string): Promise<string[]> {
    const keys: string[] = [];
    for (let i = 0; keys.length < n; i++) {
      await writer.insert(delivery(`tsk_${label}${i}`, { receivedAt: T0 + i }));
      const shard = Number(String((await item(`answerline#tsk_${label}${i}`))!.pendingShard).slice(1));
      if (shard >= 16) keys.push(`answerline#tsk_${label}${i}`);
    }
    return keys;
  }

  test('rows written under 16 shards and rows written under 64 are all found by a sweep configured with 64', async () => {
    const oldKeys = ['a', 'b', 'c', 'd'].map((id) => `answerline#tsk_old_${id}`);
    for (const [i, key] of oldKeys.entries()) await store.insert(delivery(key.slice('answerline#'.length), { receivedAt: T0 + i }));
    const grown = new DynamoDbInboxStore(dynamodb, table, 64);
    const newKeys = await rowsBeyondSixteen(grown, 3, 'grown');

    const look = await grown.findStranded(T0 + 10_000, WIDE);
    expect(keysOf(look)).toEqual(expect.arrayContaining([...oldKeys, ...newKeys]));
    // A sweep still on 16 (a deployment in progress) would not see the new shards: nothing was recorded yet.
    expect(keysOf(await store.findStranded(T0 + 10_000, WIDE))).not.toEqual(expect.arrayContaining(newKeys));
  });

  test('once a sweep on 64 recorded it, a sweep configured with fewer still reads 64, and the record is never lowered', async () => {
    const grown = new DynamoDbInboxStore(dynamodb, table, 64);
    const newKeys = await rowsBeyondSixteen(grown, 3, 'rec');
    await grown.notePendingShards((await grown.findStranded(T0 + 10_000, WIDE)).recordedShards);
    expect(await item('sweep:pending', 'watermark')).toMatchObject({ shards: 64 });

    const lowered = new DynamoDbInboxStore(dynamodb, table, 16);
    const look = await lowered.findStranded(T0 + 10_000, WIDE);
    expect(look.recordedShards).toBe(64);
    expect(keysOf(look)).toEqual(expect.arrayContaining(newKeys));
    await lowered.notePendingShards(look.recordedShards);
    await new DynamoDbInboxStore(dynamodb, table, 32).notePendingShards(16);
    expect(await item('sweep:pending', 'watermark')).toMatchObject({ shards: 64 });
  });

  test('an inbox on the default count records nothing: its watermark item stays as older versions wrote it', async () => {
    await store.notePendingShards(undefined);
    expect(await item('sweep:pending', 'watermark')).toBeUndefined();
  });
});

test("a bounded read examines only below where a stopped shard's last page ended, and entries sharing one time are read on past the bound", async () => {
  // Three rows in one shard (the shard of each key is fixed by its digest): find three that share one.
  const ids: string[] = [];
  const byShard = new Map<string, string[]>();
  for (let i = 0; ids.length < 3; i++) {
    const id = `tsk_b${i}`;
    await store.insert(delivery(id, { receivedAt: T0 + i }));
    const shard = (await item(`answerline#${id}`))!.pendingShard as string;
    byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
    if (byShard.get(shard)!.length === 3) ids.push(...byShard.get(shard)!);
  }
  const times = await Promise.all(ids.map(async (id) => (await item(`answerline#${id}`))!.pendingSince as number));
  const oneEntryPages = { pageEntries: 1, pagesPerShard: 1 };
  const found = await store.findStranded(T0 + 10_000, oneEntryPages);
  // The shard's first page ended at its first entry: the rest of it is not read, and the
  // examination reaches no further than that entry, though the entry itself was read.
  expect(found.examinedBefore).toBeLessThanOrEqual(times[0]);
  expect(keysOf(found)).toContain(`answerline#${ids[0]}`);
  expect(keysOf(found)).not.toContain(`answerline#${ids[1]}`);
  expect(keysOf(found)).not.toContain(`answerline#${ids[2]}`);

  // Entries sharing the watermark's time hold it there until every one is read, bound or not.
  for (const id of ids) await store.touchPending(`answerline#${id}`, T0 + 5_000);
  await store.advanceSweepWatermark(T0 + 5_000);
  const tied = await store.findStranded(T0 + 10_000, oneEntryPages);
  expect(keysOf(tied)).toEqual(expect.arrayContaining(ids.map((id) => `answerline#${id}`)));
  expect(tied.examinedBefore).toBeGreaterThan(T0 + 5_000);
});

describe('rows written before the compact row format', () => {
  // Exactly what the previous insert wrote: provider and event id attributes, the digest in hex,
  // the body deflated in `body` with its encoding beside it.
  const body = Buffer.from(JSON.stringify({ task: { id: 'tsk_old', status: 'COMPLETED' }, note: 'x'.repeat(600) }));
  const oldRow = (eventId: string): Record<string, AttributeValue> => ({
    pk: { S: `answerline#${eventId}` },
    sk: { S: 'delivery' },
    provider: { S: 'answerline' },
    eventId: { S: eventId },
    body: { B: deflateRawSync(body) },
    bodyEncoding: { S: 'deflate-raw' },
    digest: { S: sha256(body).toString('hex') },
    receivedAt: { N: String(T0) },
    meta: { M: { 'content-type': { S: 'application/json' } } },
    status: { S: DeliveryStatus.RECEIVED },
    attempts: { N: '0' },
    expiresAt: { N: String(T0 / 1000 + 86_400) },
    pendingShard: { S: 'p03' },
    pendingSince: { N: String(T0) },
  });

  test('are read as before: the digest for a duplicate check, the claim with its provider, event id and exact body, the completion', async () => {
    await dynamodb.send(new PutItemCommand({ TableName: table, Item: oldRow('tsk_old') }));
    expect(await store.originalOf('answerline#tsk_old')).toEqual({ digest: sha256(body).toString('hex'), recovered: false });
    expect(keysOf(await store.findStranded(T0 + 1, WIDE))).toEqual(['answerline#tsk_old']);

    const claimed = await store.claim('answerline#tsk_old', 'w', T0, LEASE, MAX);
    expect(claimed).toMatchObject({ key: 'answerline#tsk_old', provider: 'answerline', eventId: 'tsk_old', digest: sha256(body).toString('hex'), attempts: 1 });
    expect(claimed!.body).toEqual(body);

    expect(await store.completeLeased([{ row: claimed!, outcome: 'winner' }], T0 + 5)).toEqual([]);
    expect(await item('answerline#tsk_old')).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', digest: sha256(body).toString('hex') });
  });

  test('a quarantined copy kept in the old form and repeated now holds one body form: the same bytes', async () => {
    const copy = { provider: 'answerline', digest: sha256(body).toString('hex'), body, meta: {}, receivedAt: T0, expiresAt: T0 / 1000 + 60 };
    const sk = `quarantine#${copy.digest}`;
    await dynamodb.send(
      new PutItemCommand({
        TableName: table,
        Item: { ...oldRow('tsk_qold'), sk: { S: sk }, count: { N: '1' } },
      }),
    );
    await store.quarantine('answerline#tsk_qold', copy);
    const stored = await item('answerline#tsk_qold', sk);
    expect(stored).not.toHaveProperty('body');
    expect(stored).not.toHaveProperty('bodyEncoding');
    expect(stored).toMatchObject({ count: 2 });
  });
});

test('a claimed row of a 1 KiB JSON delivery, with the headers and job reference a provider sends, is billed one write unit', async () => {
  // Words of a made-up language, in no order: deflated, as long as 1 KiB of English prose (520–560 bytes).
  const syllables = 'ka ri to ne mu sa lo pe di fa gu ho ve ni zo ra'.split(' ');
  let answer = '';
  for (let seed = 7; Buffer.byteLength(answer) < 900;) {
    const word: string[] = [];
    do {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      word.push(syllables[Math.floor((seed / 2 ** 31) * syllables.length)]);
    } while (seed % 3 !== 0 && word.length < 4);
    answer += `${word.join('')} `;
  }
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const text = JSON.stringify({
    task: { id: `tsk_${id}`, status: 'COMPLETED', idempotencyKey: `job-${id}`, createdAt: '2026-09-18T10:00:00.000Z' },
    response: { result: { answer, confidence: 0.93 } },
  }).slice(0, 1024);
  expect(Buffer.byteLength(text)).toBe(1024);
  expect(deflateRawSync(text).length).toBeGreaterThan(540);
  expect(deflateRawSync(text).length).toBeLessThan(560);
  await store.insert({
    provider: 'answerline',
    eventId: `tsk_${id}`,
    body: Buffer.from(text),
    digest: sha256(text).toString('hex'),
    receivedAt: T0,
    meta: {
      'webhook-id': `msg_${'2f'.repeat(16)}`,
      'webhook-timestamp': String(T0 / 1000),
      'content-type': 'application/json',
      'content-length': '1024',
      'user-agent': 'Answerline-Webhooks/1.0',
    },
    expiresAt: T0 / 1000 + 86_400 * 7,
    jobRef: `job-${id}`,
    eventAt: T0,
  });
  await store.claim(`answerline#tsk_${id}`, 'Xq3vR8mK1pZ0aB2c', T0, LEASE, MAX);
  const out = await dynamodb.send(
    new GetItemCommand({ TableName: table, Key: { pk: { S: `answerline#tsk_${id}` }, sk: { S: 'delivery' } }, ConsistentRead: true }),
  );
  // Writing the claimed item over itself costs the units of its size, as DynamoDB counts them.
  const put = await dynamodb.send(new PutItemCommand({ TableName: table, Item: out.Item, ReturnConsumedCapacity: 'TOTAL' }));
  expect(put.ConsumedCapacity?.CapacityUnits).toBe(1);
});
