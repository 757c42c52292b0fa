import { Defaults, MetricName, PendingIndex } from '../../../lib/contract';
import { shardOf } from '../../../lambda/shared/runtime/digest';
import { answerlineBody, InboxHarness, keyOf, LEASE_MS, SecretsFixture, taskIdOf } from '../../support/inbox-fixture';

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
async function strand(count: number): Promise<string[]> {
  const verifier = h.verifier({ queue: h.missingQueue() });
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = answerlineBody({ id: `tsk_stranded_${i}` });
    expect(await h.deliver(body, verifier)).toMatchObject({ statusCode: 202 });
    keys.push(keyOf(body));
    h.clock.advance(1_000);
  }
  expect(await h.takeMessages()).toEqual([]);
  return keys;
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
  expect(await h.row(key)).toMatchObject({ status: 'RECEIVED', pendingSince: h.clock.now() });
  // A second run within the window sends nothing more.
  h.clock.advance(SWEEP_AFTER_MS - 1);
  expect(await reconcile()).toMatchObject({ swept: 0 });
  expect(h.capture.metric(MetricName.SWEPT)).toBe(1);

  expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
  expect(await h.row(key)).toMatchObject({ status: 'PROCESSED', outcome: 'winner', attempts: 1 });
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
  expect(await h.row(keyOf(processed))).toMatchObject({ status: 'PROCESSED' });
  expect(await h.row(keyOf(dead))).toMatchObject({ status: 'DEAD' });
});

test('a run re-enqueues at most batchSize rows, oldest first, and the next runs take the rest', async () => {
  const keys = await strand(12);
  h.clock.advance(SWEEP_AFTER_MS);
  const reconcile = h.reconciler({ batchSize: 5 });

  const runs: string[][] = [];
  for (let run = 0; run < 4; run++) {
    await reconcile();
    runs.push(await h.takeMessages());
  }

  expect(runs.map((run) => run.length)).toEqual([5, 5, 2, 0]);
  expect(runs.slice(0, 3).map((run) => [...run].sort())).toEqual([keys.slice(0, 5), keys.slice(5, 10), keys.slice(10)].map((k) => [...k].sort()));
  expect(h.capture.metric(MetricName.SWEPT)).toBe(12);
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
