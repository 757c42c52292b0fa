import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { Defaults, DeliveryStatus, MetricName, PendingIndex } from '../../../lib/contract';
import { shardOf } from '../../../lambda/shared/runtime/digest';
import { DynamoDbInboxStore, InboxStore } from '../../../lambda/shared/stores/inbox';
import type { EffectSink } from '../../../lambda/shared/effects/sinks';
import { answerlineBody, bind, InboxHarness, keyOf, LEASE_MS, SecretsFixture, sha256Hex, taskIdOf } from '../../support/inbox-fixture';

const SWEEP_AFTER_MS = Defaults.SWEEP_AFTER_SECONDS * 1000;

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'reconciler', { queue: { visibilityTimeoutSeconds: 1 } });
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

/**
 * Rows whose enqueue failed: accepted and stored, but no work message exists. Each arrives a
 * second after the previous one, so the order of their pending clocks is known.
 */
async function strand(count: number, ids: readonly string[] = Array.from({ length: count }, (_, i) => `tsk_stranded_${i}`)): Promise<string[]> {
  const verifier = h.verifier({ queue: h.missingQueue() });
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = answerlineBody({ id: ids[i] });
    expect(await h.deliver(body, verifier)).toMatchObject({ statusCode: 202 });
    keys.push(keyOf(body));
    h.clock.advance(1_000);
  }
  expect(await h.takeMessages()).toEqual([]);
  return keys;
}

/**
 * A Lambda context whose remaining time is each of `remaining` in turn, then the last one for
 * good: a run's clock as its steps use it up, without waiting for it.
 */
function shrinkingTime(remaining: readonly number[]): () => { getRemainingTimeInMillis(): number } {
  return () => {
    let call = 0;
    return { getRemainingTimeInMillis: () => remaining[Math.min(call++, remaining.length - 1)] };
  };
}

test('a row whose enqueue failed is re-enqueued once after sweepAfter, then processed', async () => {
  const body = answerlineBody({ idempotencyKey: 'job-stranded' });
  expect(await h.deliver(body, h.verifier({ queue: h.missingQueue() }))).toMatchObject({ statusCode: 202 });
  const key = keyOf(body);
  const reconcile = h.reconciler();

  // Not yet overdue: nothing is swept.
  h.clock.advance(SWEEP_AFTER_MS - 1);
  expect(await reconcile()).toMatchObject({ swept: 0 });
  expect(await h.takeMessages()).toEqual([]);

  h.clock.advance(2);
  expect(await reconcile()).toMatchObject({ swept: 1 });
  expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, pendingSince: h.clock.now() });
  // A second run within the window sends nothing more.
  h.clock.advance(SWEEP_AFTER_MS - 1);
  expect(await reconcile()).toMatchObject({ swept: 0 });
  expect(h.capture.metric(MetricName.SWEPT)).toBe(1);

  expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
  expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 1 });
  expect(await h.result('job-stranded')).toMatchObject({ taskId: taskIdOf(body), version: 1 });

  // Processed: never swept again, however long we wait.
  h.clock.advance(100 * SWEEP_AFTER_MS);
  expect(await reconcile()).toMatchObject({ swept: 0 });
  expect(await h.takeMessages()).toEqual([]);
});

test('processed and dead rows are never swept; a row whose worker crashed is', async () => {
  const [processed, dead, crashed] = [answerlineBody(), answerlineBody(), answerlineBody()];
  for (const body of [processed, dead, crashed]) expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
  await h.takeMessages();
  await h.queue.enqueue([keyOf(processed)]);
  expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
  // A row that exhausted its receives is released as dead (the DLQ owns it now).
  await h.inbox.claim(keyOf(dead), 'worker-1', h.clock.now(), LEASE_MS, Defaults.MAX_RECEIVE_COUNT);
  await h.inbox.release(keyOf(dead), 'worker-1', 'MalformedDeliveryError: task: is missing', true, h.clock.now());
  // A worker claimed this row and died holding it; its message is gone.
  await h.inbox.claim(keyOf(crashed), 'worker-2', h.clock.now(), LEASE_MS, Defaults.MAX_RECEIVE_COUNT);

  h.clock.advance(SWEEP_AFTER_MS + 1);
  expect(await h.reconciler()()).toMatchObject({ swept: 1 });

  expect(await h.takeMessages()).toEqual([keyOf(crashed)]);
  expect(await h.row(keyOf(processed))).toMatchObject({ status: DeliveryStatus.PROCESSED });
  expect(await h.row(keyOf(dead))).toMatchObject({ status: DeliveryStatus.DEAD });
});

test('one run re-enqueues every stranded row, however many, a bounded step at a time, moving the watermark after each step', async () => {
  const keys = await strand(12);
  h.clock.advance(SWEEP_AFTER_MS);
  // One entry of each shard a step: the twelve rows take several steps.
  const report = await h.reconciler({ sweepStep: { pageEntries: 1, pagesPerShard: 1 } })();

  expect(report).toMatchObject({ swept: 12, sweepLagSeconds: 0 });
  expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
  const [line] = h.capture.logs('sweep');
  expect(line).toMatchObject({ swept: 12, lagSeconds: 0, level: 'WARN' });
  expect(line.steps).toBeGreaterThan(1);
  expect(h.capture.metric(MetricName.SWEPT)).toBe(12);
  expect(await h.row('sweep:pending', 'watermark')).toMatchObject({ sweptBefore: h.clock.now() - SWEEP_AFTER_MS });
});

test('rows spread across the pending-index shards are all found', async () => {
  const keys = await strand(48);
  // The test is only meaningful when the rows really do span the shards: these ids fill all of them.
  const shards = new Set(keys.map((key) => shardOf(key, PendingIndex.SHARD_COUNT)));
  expect(shards.size).toBe(PendingIndex.SHARD_COUNT);
  expect(new Set((await h.inboxItems()).map((item) => item.pendingShard))).toEqual(shards);
  h.clock.advance(SWEEP_AFTER_MS);

  expect(await h.reconciler()()).toMatchObject({ swept: 48 });

  expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
  expect(h.capture.logs('sweep')).toMatchObject([{ swept: 48, level: 'WARN' }]);
});

test('the sweep and the ledger run side by side: a sweep that fails does not keep the ledger from its work, and the run still fails', async () => {
  await strand(2);
  h.clock.advance(SWEEP_AFTER_MS);
  await expect(h.reconciler({ queue: h.missingQueue() })()).rejects.toMatchObject({ name: 'EnqueueError' });
  // The ledger looked at its due submissions all the same (there are none here) and said so.
  expect(h.capture.logs('submissions')).toMatchObject([{ checked: 0 }]);
  expect(h.capture.logs('sweep')).toMatchObject([{ swept: 0, notSent: 2, level: 'WARN' }]);
});

describe('the watermark: completed rows keep their pending-index entries, and the sweep reads past them', () => {
  /** The sweep's watermark as stored: the item `sweep:pending` / `watermark`, its `sweptBefore` (epoch ms). */
  async function watermark(): Promise<number | undefined> {
    return (await h.row('sweep:pending', 'watermark'))?.sweptBefore as number | undefined;
  }

  /** Rows accepted and processed, one a second: each keeps its entry in the pending index. */
  async function processed(ids: readonly string[]): Promise<string[]> {
    const keys: string[] = [];
    for (const id of ids) {
      const body = answerlineBody({ id });
      expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
      keys.push(keyOf(body));
      h.clock.advance(1_000);
    }
    expect(await h.drain(h.processor())).toEqual({ received: ids.length, failed: 0 });
    for (const key of keys)
      expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, pendingShard: expect.any(String), pendingSince: expect.any(Number) });
    return keys;
  }

  test('many processed entries ahead of one stranded row: a run with time for one step at a time finds it over several runs, the watermark and SweepLag moving each run', async () => {
    // The stranded row's shard holds twelve processed rows before it; the others hold some too.
    const shard = shardOf('answerline#tsk_stranded_0', PendingIndex.SHARD_COUNT);
    const ids = Array.from({ length: 400 }, (_, i) => `tsk_done_${i}`);
    const sameShard = ids.filter((id) => shardOf(`answerline#${id}`, PendingIndex.SHARD_COUNT) === shard).slice(0, 12);
    await processed([...sameShard, ...ids.filter((id) => !sameShard.includes(id)).slice(0, 28)]);
    const [stranded] = await strand(1);
    expect(stranded).toBe('answerline#tsk_stranded_0');
    h.clock.advance(SWEEP_AFTER_MS);
    // One page of two entries per shard a step, and a run whose every step leaves less time than another needs.
    const reconcile = h.reconciler({ sweepStep: { pageEntries: 2, pagesPerShard: 1 } });
    const oneStep = shrinkingTime([60_000, 10_000]);

    const marks: number[] = [];
    const lags: number[] = [];
    let sent: string[] = [];
    while (sent.length === 0 && marks.length < 41) {
      lags.push((await reconcile(undefined, oneStep()))!.sweepLagSeconds!);
      sent = await h.takeMessages();
      marks.push((await watermark())!);
    }
    expect(sent).toEqual([stranded]);
    expect(marks.length).toBeGreaterThan(1);
    for (let run = 1; run < marks.length; run++) expect(marks[run]).toBeGreaterThan(marks[run - 1]);
    for (let run = 1; run < lags.length; run++) expect(lags[run]).toBeLessThanOrEqual(lags[run - 1]);
    expect(lags[0]).toBeGreaterThan(0);
    expect(marks.at(-1)).toBeLessThanOrEqual(h.clock.now() - SWEEP_AFTER_MS);
    expect(h.capture.logs('sweep').every((line) => line.steps === 1)).toBe(true);
    expect(h.capture.logs('sweep').filter((line) => line.stopped === 'time_budget').length).toBeGreaterThan(0);
    expect(h.capture.metric(MetricName.SWEPT)).toBe(1);

    // A run with time reads the rest through to the cutoff; no processed row is ever enqueued.
    expect(await reconcile()).toMatchObject({ swept: 0, sweepLagSeconds: 0 });
    expect(await watermark()).toBe(h.clock.now() - SWEEP_AFTER_MS);
    expect(await h.takeMessages()).toEqual([]);
  });

  test('a failed enqueue holds the watermark at the first stranded row; a failed clock restart holds it at that row, which the next run enqueues again', async () => {
    const keys = await strand(3);
    h.clock.advance(SWEEP_AFTER_MS);
    await expect(h.reconciler({ queue: h.missingQueue() })()).rejects.toThrow();
    // Nothing was sent: the watermark goes no further than the first stranded row, nothing below it needed anything.
    expect(await watermark()).toBe((await h.row(keys[0]))!.pendingSince);

    const inbox = new DynamoDbInboxStore(h.as('reconciler').dynamodb, h.names.inboxTable);
    const losing: InboxStore = {
      ...bind(inbox),
      touchPending: async (key, now) => {
        if (key === keys[1]) throw new Error('touch lost');
        return inbox.touchPending(key, now);
      },
    };
    const since = (await h.row(keys[1]))!.pendingSince as number;
    await expect(h.reconciler({ inbox: losing })()).rejects.toThrow('touch lost');
    expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
    // Everything below the failed row was handled; the row itself was not.
    expect(await watermark()).toBe(since);

    expect(await h.reconciler()()).toMatchObject({ swept: 1 });
    expect(await h.takeMessages()).toEqual([keys[1]]);
    expect(await watermark()).toBe(h.clock.now() - SWEEP_AFTER_MS);
  });

  test('a row SQS refuses beyond where a bounded read got holds the watermark there, not at the row: the rows of a shard the read stopped in are still found', async () => {
    // Three rows of one shard, then a later row of another: with pages of two entries the first
    // shard's read stops at its second row, the other shard's reaches its row.
    const shardOfId = (id: string) => shardOf(`answerline#${id}`, PendingIndex.SHARD_COUNT);
    const candidates = Array.from({ length: 400 }, (_, i) => `tsk_held_${i}`);
    const inOne = candidates.filter((id) => shardOfId(id) === shardOfId(candidates[0])).slice(0, 3);
    const other = candidates.find((id) => shardOfId(id) !== shardOfId(candidates[0]))!;
    const keys = await strand(4, [...inOne, other]);
    h.clock.advance(SWEEP_AFTER_MS);
    const faults = await h.faults();
    // SQS keeps refusing the later row (the last entry of every batch that holds it).
    const refusing = faults.refuseEntries({
      operations: ['SendMessageBatch'],
      where: (call) => JSON.stringify(call.input).includes(other),
      refuse: (index, count) => index === count - 1,
    });
    const reconcile = h.reconciler({ sweepStep: { pageEntries: 2, pagesPerShard: 1 } });
    const secondSince = (await h.row(keys[1]))!.pendingSince;

    await expect(reconcile()).rejects.toMatchObject({ name: 'EnqueueError' });
    // Everything below the first shard's page end was handled; the third row of that shard was never read.
    expect(await watermark()).toBe(secondSince);
    refusing.stop();
    await reconcile();
    const sent = await h.takeMessages();
    expect(sent).toEqual(expect.arrayContaining([keys[2], keys[3]]));
  });

  test('an upgraded inbox (no watermark yet): its old-format pending rows are swept, its old completed rows have no entry', async () => {
    const now = h.clock.now();
    // Rows as versions before the compact row format wrote them; a completion then removed the pending attributes.
    const oldRow = (id: string, status: string, pending: boolean) => {
      const body = Buffer.from(answerlineBody({ id }));
      return {
        pk: { S: `answerline#${id}` },
        sk: { S: 'delivery' },
        provider: { S: 'answerline' },
        eventId: { S: id },
        body: { B: body },
        digest: { S: sha256Hex(body) },
        receivedAt: { N: String(now) },
        meta: { M: {} },
        status: { S: status },
        attempts: { N: status === DeliveryStatus.PROCESSED ? '1' : '0' },
        expiresAt: { N: String(Math.floor(now / 1000) + 86_400) },
        ...(pending ? { pendingShard: { S: shardOf(`answerline#${id}`, PendingIndex.SHARD_COUNT) }, pendingSince: { N: String(now) } } : {}),
      };
    };
    for (const item of [oldRow('tsk_old_pending', DeliveryStatus.RECEIVED, true), oldRow('tsk_old_done', DeliveryStatus.PROCESSED, false)]) {
      await h.dynamodb.send(new PutItemCommand({ TableName: h.names.inboxTable, Item: item }));
    }
    expect(await watermark()).toBeUndefined();
    h.clock.advance(SWEEP_AFTER_MS + 1);

    expect(await h.reconciler()()).toMatchObject({ swept: 1 });
    expect(await h.takeMessages()).toEqual(['answerline#tsk_old_pending']);
    expect(await watermark()).toBe(h.clock.now() - SWEEP_AFTER_MS);
    await h.queue.enqueue(['answerline#tsk_old_pending']);
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    expect(await h.row('answerline#tsk_old_pending')).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
  });

  test('two runs at once both enqueue only stranded rows and leave the watermark at the cutoff; a late run with an earlier clock never moves it back', async () => {
    await processed(Array.from({ length: 10 }, (_, i) => `tsk_done_${i}`));
    const keys = await strand(6);
    h.clock.advance(SWEEP_AFTER_MS);
    const cutoff = h.clock.now() - SWEEP_AFTER_MS;

    const [first, second] = await Promise.all([h.reconciler()(), h.reconciler()()]);
    const sent = await h.takeMessages();
    // Each stranded row at least once (perhaps by both runs: its claim makes that harmless), nothing else.
    expect(new Set(sent)).toEqual(new Set(keys));
    expect(first.swept + second.swept).toBe(sent.length);
    expect(await watermark()).toBe(cutoff);
    for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, pendingSince: h.clock.now() });

    // A retried invocation whose clock is a minute behind, whose write of the watermark comes
    // after a current run's: the watermark stays where the current run put it.
    h.clock.advance(2 * SWEEP_AFTER_MS);
    const inbox = new DynamoDbInboxStore(h.as('reconciler').dynamodb, h.names.inboxTable);
    let reached!: () => void;
    let release!: () => void;
    const atWrite = new Promise<void>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const late = h.reconciler({
      now: () => h.clock.now() - 60_000,
      inbox: {
        ...bind(inbox),
        advanceSweepWatermark: async (to) => {
          reached();
          await released;
          return inbox.advanceSweepWatermark(to);
        },
      },
    })();
    await atWrite;
    // The late run enqueued the rows and restarted their clocks before its write: nothing left here.
    expect(await h.reconciler()()).toMatchObject({ swept: 0 });
    expect(await watermark()).toBe(h.clock.now() - SWEEP_AFTER_MS);
    release();
    expect(await late).toMatchObject({ swept: 6 });
    expect(await watermark()).toBe(h.clock.now() - SWEEP_AFTER_MS);
    expect(new Set(await h.takeMessages())).toEqual(new Set(keys));
  });
});

describe('AWS answers the sweep in part, throttles it, and its index lags (injected by the fault proxy)', () => {
  /** The sweep's watermark as stored (`sweep:pending` / `watermark`). */
  const watermark = async () => (await h.row('sweep:pending', 'watermark'))?.sweptBefore as number | undefined;

  test('a BatchGetItem that leaves keys unprocessed stops the step there: the watermark stays below them, and the next step enqueues them, each row once', async () => {
    const keys = await strand(5);
    h.clock.advance(SWEEP_AFTER_MS);
    const faults = await h.faults();
    const fault = faults.refuseEntries({ operations: ['BatchGetItem'], calls: 1 });
    const inbox = new DynamoDbInboxStore(h.as('reconciler').dynamodb, h.names.inboxTable);
    const advances: number[] = [];
    const reconcile = h.reconciler({
      inbox: { ...bind(inbox), advanceSweepWatermark: async (to, revision) => (advances.push(to), inbox.advanceSweepWatermark(to, revision)) },
    });

    const secondSince = (await h.row(keys[1]))!.pendingSince;
    // The second key (oldest first) came back unprocessed: the first step examined only the first.
    expect(await reconcile()).toMatchObject({ swept: 5, sweepLagSeconds: 0 });
    expect(fault.injected).toBe(1);
    expect(advances[0]).toBe(secondSince);
    expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
    expect(await reconcile()).toMatchObject({ swept: 0 });
    expect(await h.takeMessages()).toEqual([]);
  });

  test('the sweep’s index read throttled past the SDK’s attempts fails the run with the watermark where it was; the next run sweeps', async () => {
    const keys = await strand(2);
    h.clock.advance(SWEEP_AFTER_MS);
    const faults = await h.faults();
    // Every attempt at every shard of the pending index (the ledger's queries of its own index go on beside them).
    faults.throttle({
      operations: ['Query'],
      where: (call) => call.input.IndexName === PendingIndex.NAME,
      calls: (await h.sdkAttempts('dynamodb')) * PendingIndex.SHARD_COUNT,
    });
    const reconcile = h.reconciler();

    await expect(reconcile()).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(await watermark()).toBeUndefined();
    expect(await h.takeMessages()).toEqual([]);

    faults.clear();
    expect(await reconcile()).toMatchObject({ swept: 2 });
    expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
  });

  test('SendMessageBatch answers some entries Failed: they are sent again after a back-off, and every stranded row is enqueued exactly once', async () => {
    const keys = await strand(5);
    h.clock.advance(SWEEP_AFTER_MS);
    const faults = await h.faults();
    const fault = faults.refuseEntries({ operations: ['SendMessageBatch'], calls: 1 });

    expect(await h.reconciler()()).toMatchObject({ swept: 5 });
    expect(fault.injected).toBe(1);
    expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
    expect(await watermark()).toBe(h.clock.now() - SWEEP_AFTER_MS);
  });

  test('SendMessageBatch throttled for fewer calls than the SDK attempts, while many batches are in flight: every stranded row is enqueued exactly once, in one run', async () => {
    const keys = await strand(45);
    h.clock.advance(SWEEP_AFTER_MS);
    const faults = await h.faults();
    const attempts = await h.sdkAttempts('sqs');
    // The first attempts of as many batches as the SDK retries each: all of them are retried, after its back-off.
    const fault = faults.throttle({ operations: ['SendMessageBatch'], calls: attempts - 1, error: 'ThrottlingException' });

    expect(await h.reconciler()()).toMatchObject({ swept: 45, sweepLagSeconds: 0 });
    expect(fault.injected).toBe(attempts - 1);
    const sent = await h.takeMessages();
    expect(sent.sort()).toEqual([...keys].sort());
    expect(await watermark()).toBe(h.clock.now() - SWEEP_AFTER_MS);
  });

  test('SendMessageBatch throttled past the SDK’s attempts: the run fails with the watermark below every row not sent, and the next run sends those: none lost, none twice', async () => {
    const keys = await strand(45);
    h.clock.advance(SWEEP_AFTER_MS);
    const faults = await h.faults();
    const fault = faults.throttle({ operations: ['SendMessageBatch'], error: 'ThrottlingException' });
    const reconcile = h.reconciler();

    await expect(reconcile()).rejects.toMatchObject({ name: 'EnqueueError' });
    expect(fault.injected).toBeGreaterThan(0);
    expect(await h.takeMessages()).toEqual([]);
    // Nothing was sent: the watermark goes no further than the first stranded row.
    expect(await watermark()).toBe((await h.row(keys[0]))!.pendingSince);

    fault.stop();
    expect(await reconcile()).toMatchObject({ swept: 45 });
    expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
  });

  test('SendMessageBatch refusing entries on every call: the rows sent are restarted, the watermark held at the first refused one, which the next run enqueues', async () => {
    const keys = await strand(12);
    h.clock.advance(SWEEP_AFTER_MS);
    const faults = await h.faults();
    const fault = faults.refuseEntries({ operations: ['SendMessageBatch'] });
    const reconcile = h.reconciler();

    await expect(reconcile()).rejects.toMatchObject({ name: 'EnqueueError' });
    // Both chunks were sent; what SQS kept refusing is left for the next run, below the watermark's new place.
    const sent = await h.takeMessages();
    const refused = keys.filter((key) => !sent.includes(key));
    expect(sent.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(sent).size).toBe(sent.length);
    expect(await watermark()).toBe((await h.row(refused[0]))!.pendingSince);

    fault.stop();
    await reconcile();
    const rest = await h.takeMessages();
    expect([...sent, ...rest].sort()).toEqual([...keys].sort());
  });

  test('an index that lags its table by seconds still lists a released row where it was: the sweep reads the row, and leaves it to the queue', async () => {
    const body = answerlineBody({ idempotencyKey: 'job-lagging' });
    expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
    const key = keyOf(body);
    const since = (await h.row(key))!.pendingSince as number;
    const faults = await h.faults();
    faults.lagIndexes(5_000, h.clock.now);
    // Its message is received late, and its processing fails: the release restarts its clock, which the index shows 5 s later.
    h.clock.advance(SWEEP_AFTER_MS + 1);
    const failing: EffectSink = { dispatch: async (effects) => effects.map(() => ({ ok: false, error: new Error('bus down') })) };
    expect(await h.pollOnce(h.processor({ effects: h.effects(failing) }))).toEqual({ received: 1, failed: 1 });
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, pendingSince: h.clock.now() });

    // The failed message comes back when its 1 s visibility timeout ends (real time): taken first, so
    // that a message after the sweep could only be the sweep's.
    let released: string[] = [];
    for (let tries = 0; released.length === 0 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      released = await h.takeMessages();
    }
    expect(released).toEqual([key]);

    // The index still has the entry at its old place, below the cutoff; the row says its clock restarted.
    expect(await h.reconciler()()).toMatchObject({ swept: 0 });
    expect(faults.injectedOf('index lagged')).toBeGreaterThan(0);
    expect(await h.takeMessages()).toEqual([]);
    expect(since).toBeLessThan(h.clock.now() - SWEEP_AFTER_MS);
  });
});
