/**
 * Batches in the submission ledger: a batch recorded with the custom ids of its requests, polled
 * until its provider ended it, then its results read a page at a time, each request's terminal
 * state stored as a row of its own exactly once, whatever order the pages list them in and
 * however often a run is repeated after dying part-way, and one summary per batch. Everything
 * runs against the emulators, the Secrets Manager stand-in and the fake batch API over real HTTP.
 */
import { randomUUID } from 'node:crypto';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import {
  AdapterKind,
  Defaults,
  DeliveryStatus,
  MetricName,
  PollingDefaults,
  PollingRuntimeConfig,
  ProviderRuntimeConfig,
  SubmissionState,
} from '../../../lib/contract';
import { InvalidSubmissionError } from '../../../client';
import { LedgerDependencies } from '../../../lambda/reconciler/ledger';
import { EventBridgeSink } from '../../../lambda/shared/effects/sinks';
import { sha256Hex } from '../../../lambda/shared/runtime/digest';
import { InboxStore } from '../../../lambda/shared/stores/inbox';
import { SubmissionStore } from '../../../lambda/shared/stores/submission-store';
import { FakeMessageBatchesApi, RecordedEvent } from '#twin/testing';
import { bind, Clock, effectsFixtures, INBOX_NAME, InboxHarness, Item } from '../../support/inbox-fixture';

const BATCHES = 'batches';
const HORIZON_MS = PollingDefaults['message-batches'].horizonSeconds * 1000;
const RECHECK_MS = PollingDefaults['message-batches'].recheckSeconds * 1000;
// The runs read pages of 10, four a run: the paging's rules at a tenth of the rows (the
// construct's 100 and 20 are what the first test of a polled batch reads with).
const PAGING = { pageSize: 10, pagesPerRun: 4 };
const PAGE = PAGING.pageSize;
/** A run that reads a batch's results as the construct deploys it. */
const AS_DEPLOYED = { batchResultPaging: undefined };
const DAY_MS = 86_400_000;
// The documented lifecycle (docs/providers/message-batches.md): a batch expires 24 h after its
// creation, and its results stay readable for 29 days after it.
const EXPIRY_MS = DAY_MS;
const RESULTS_KEPT_MS = 29 * DAY_MS;
const WARNING_MS = Defaults.DEADLINE_WARNING_SECONDS * 1000;

const { secrets, fx } = effectsFixtures();
let api: FakeMessageBatchesApi;
let h: InboxHarness;
let provider: ProviderRuntimeConfig;
let polling: PollingRuntimeConfig;
let bus: string;
let busSink: ReturnType<InboxHarness['busSink']>['sink'];

beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'batches', { queue: { visibilityTimeoutSeconds: 1 }, clock: new Clock() });
  api = new FakeMessageBatchesApi(undefined, h.clock.now);
  await api.start();
  provider = await h.addProvider(BATCHES, AdapterKind.MESSAGE_BATCHES, `placeholder-${randomUUID()}`);
  polling = await h.pollingConfig(api.apiKey, api.batchUrlTemplate, {
    provider: BATCHES,
    horizonSeconds: PollingDefaults['message-batches'].horizonSeconds,
    recheckSeconds: PollingDefaults['message-batches'].recheckSeconds,
    timeoutMs: 5_000,
  });
  ({ bus, sink: busSink } = h.busSink(fx));
});
afterEach(async () => {
  h.expectLogsClean();
  h.destroy();
  await api.stop();
});

/** One reconciler run with the batch provider's ledger, its ResourceUnavailable events on the bus through the reconciler's own client. */
function reconcile(ledger: Partial<LedgerDependencies> = {}, overrides: Parameters<InboxHarness['reconciler']>[0] = {}) {
  const unavailableEvents = { bus: new EventBridgeSink(h.as('reconciler', undefined, 1).eventBridge, bus), inboxName: INBOX_NAME };
  return h.reconciler({
    ledger: h.ledger({ configs: [provider], polling: [polling], unavailableEvents, batchResultPaging: PAGING, ...ledger }),
    ...overrides,
  })();
}

const processor = () => h.processor({ providers: [provider], effects: h.effects(busSink) });
const ids = (count: number, prefix = 'req') => Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
const subKey = (batchId: string) => `ledger:${BATCHES}#${batchId}`;
// The documented row key of a request's result: `<provider>#<batchId>:<customId>`; the summary's `…:~batch`.
const childKey = (batchId: string, customId: string) => `${BATCHES}#${encodeURIComponent(batchId)}:${encodeURIComponent(customId)}`;
const summaryKey = (batchId: string) => `${BATCHES}#${encodeURIComponent(batchId)}:~batch`;
const deliveryRows = async (): Promise<Item[]> => (await h.inboxItems()).filter((item) => item.sk === 'delivery');
const bodyOf = (row: Item) => JSON.parse((row.body as Buffer).toString('utf8')) as Record<string, unknown>;
const events = (): RecordedEvent[] => fx.eventBridge.eventsOn(bus);

/** A batch at the fake and in the ledger, recorded as an app records it. */
async function submittedBatch(customIds: readonly string[], options: { errored?: readonly string[]; listing?: readonly string[] } = {}) {
  const batch = api.addBatch({ customIds, ...options });
  expect(await h.submissionLedger().recordBatch({ provider: BATCHES, batchId: batch.id, childIds: customIds })).toMatchObject({ outcome: 'recorded' });
  return batch;
}

/** Every stored row of a batch's children, by custom id; fails on a row stored twice. */
async function childRows(batchId: string): Promise<Map<string, Item>> {
  const rows = new Map<string, Item>();
  for (const row of await deliveryRows()) {
    const body = bodyOf(row);
    if (body.batch_id !== batchId || body.type !== 'message_batch.result') continue;
    expect(rows.has(body.custom_id as string)).toBe(false);
    rows.set(body.custom_id as string, row);
  }
  return rows;
}

describe('recording a batch', () => {
  test('its custom ids go into items of 2,000 beside the batch, never into one; a repeat changes nothing', async () => {
    const customIds = ids(4_100);
    const out = await h.submissionLedger().recordBatch({ provider: BATCHES, batchId: 'msgbatch_big', childIds: customIds });
    expect(out).toEqual({ outcome: 'recorded', key: subKey('msgbatch_big'), dueAt: h.clock.now() + HORIZON_MS, deadlineAt: h.clock.now() + RESULTS_KEPT_MS });
    const items = (await h.inboxItems()).filter((item) => item.pk === subKey('msgbatch_big'));
    const chunks = items.filter((item) => String(item.sk).startsWith('children#'));
    expect(chunks.map((item) => item.sk).sort()).toEqual(['children#00000', 'children#00001', 'children#00002']);
    expect(chunks.map((item) => (item.childIds as string[]).length).sort()).toEqual([100, 2000, 2000]);
    expect(new Set(chunks.flatMap((item) => item.childIds as string[]))).toEqual(new Set(customIds));
    expect(items.find((item) => item.sk === 'submission')).toMatchObject({
      submissionKind: 'batch',
      childCount: 4_100,
      childChunks: 3,
      state: SubmissionState.AWAITING,
    });

    expect(await h.submissionLedger().recordBatch({ provider: BATCHES, batchId: 'msgbatch_big', childIds: customIds })).toMatchObject({
      outcome: 'already_recorded',
    });
    expect((await h.inboxItems()).filter((item) => item.pk === subKey('msgbatch_big'))).toHaveLength(4);
  });

  test('a batch that cannot be recorded is refused, naming every problem, and writes nothing', async () => {
    const ledger = h.submissionLedger();
    await expect(ledger.recordBatch({ provider: BATCHES, batchId: 'b1', childIds: [] })).rejects.toThrow(InvalidSubmissionError);
    await expect(ledger.recordBatch({ provider: BATCHES, batchId: 'b1', childIds: ['ok', 'has space', 'ok'] })).rejects.toThrow(
      /childIds\[1\] must be 1 to 64 letters.*childIds\[2\] repeats an earlier custom id/,
    );
    await expect(ledger.recordBatch({ provider: BATCHES, batchId: 'b1', childIds: ids(100_001) })).rejects.toThrow(/a batch holds at most 100000/);
    expect(await h.inboxItems()).toEqual([]);
  });
});

describe('a batch polled to its end', () => {
  test('in progress: not overdue within its time, its expiry recorded; ended: every request a row of its own, listed in any order, and a summary', async () => {
    const customIds = ids(Defaults.BATCH_RESULTS_PAGE_SIZE * 2 + 17);
    const errored = customIds.filter((_, i) => i % 10 === 3);
    // The API lists results in an order of its own, not the submitted one.
    const listing = customIds.map((_, i) => customIds[(i * 37) % customIds.length]);
    const batch = await submittedBatch(customIds, { errored, listing });
    h.clock.advance(HORIZON_MS);

    expect(await reconcile(AS_DEPLOYED)).toMatchObject({ checked: 1, stillPending: 1, overdue: 0 });
    expect(await h.submission(subKey(batch.id))).toMatchObject({
      state: SubmissionState.AWAITING,
      lastCheck: 'pending:in_progress',
      batchStatus: 'in_progress',
      batchExpiresAt: batch.createdAt + 86_400_000,
      awaitDueAt: h.clock.now() + RECHECK_MS,
    });
    expect(await deliveryRows()).toEqual([]);

    api.end(batch.id);
    h.clock.advance(RECHECK_MS);
    expect(await reconcile(AS_DEPLOYED)).toMatchObject({ checked: 1, recovered: 1, overdue: 0 });
    const rows = await childRows(batch.id);
    expect([...rows.keys()].sort()).toEqual([...customIds].sort());
    for (const id of customIds) {
      const row = rows.get(id)!;
      expect(row).toMatchObject({ pk: childKey(batch.id, id), status: DeliveryStatus.RECEIVED, recovered: true });
      expect((bodyOf(row).result as { type: string }).type).toBe(errored.includes(id) ? 'errored' : 'succeeded');
    }
    const summary = bodyOf((await h.row(summaryKey(batch.id)))!);
    expect(summary).toMatchObject({
      type: 'message_batch.settled',
      outcome: 'partial',
      children: customIds.length,
      counts: { succeeded: customIds.length - errored.length, errored: errored.length, canceled: 0, expired: 0 },
      missing: 0,
      unexpected: 0,
    });
    expect(await h.submission(subKey(batch.id))).toMatchObject({
      state: SubmissionState.RECOVERED,
      lastCheck: 'batch_partial',
      resultsDone: true,
      resultsRead: customIds.length,
      childSucceeded: customIds.length - errored.length,
      childErrored: errored.length,
    });
    expect(h.capture.metric(MetricName.BATCH_CHILDREN_RECORDED)).toBe(customIds.length);
    expect(h.capture.metric(MetricName.BATCHES_SETTLED)).toBe(1);
    expect(h.capture.metric(MetricName.RECOVERED)).toBe(0);
    // Three pages of results, read once each.
    expect(api.requests.filter((request) => request.path.endsWith('/results')).length).toBe(3);

    // Another run changes nothing: the batch left the awaiting index.
    h.clock.advance(RECHECK_MS);
    expect(await reconcile(AS_DEPLOYED)).toMatchObject({ checked: 0 });
    expect(await deliveryRows()).toHaveLength(customIds.length + 1);
  });

  test('one effect per request and one for the summary, each with its own key; a partial batch is neither succeeded nor failed', async () => {
    const batch = await submittedBatch(['a', 'b', 'c'], { errored: ['b'] });
    api.end(batch.id);
    h.clock.advance(HORIZON_MS);
    await reconcile();
    expect(await h.drain(processor())).toEqual({ received: 4, failed: 0 });

    const byType = (type: string) => events().filter((event) => event.detailType === type);
    const children = byType('BatchChildSettled');
    expect(children.map((event) => [event.detail.customId, event.detail.childState]).sort()).toEqual([
      ['a', 'succeeded'],
      ['b', 'errored'],
      ['c', 'succeeded'],
    ]);
    // The documented keys (docs/EFFECTS.md), written out: sha256 of the JSON array.
    for (const event of children) {
      expect(event.detail).toMatchObject({ batchId: batch.id, recovered: true, provider: BATCHES });
      expect(event.detail.effectKey).toBe(sha256Hex(JSON.stringify(['BatchChildSettled', INBOX_NAME, BATCHES, batch.id, event.detail.customId])));
      expect((event.detail.payload as { result: { type: string } }).result.type).toBe(event.detail.childState);
    }
    const [summary] = byType('BatchSettled');
    expect(byType('BatchSettled')).toHaveLength(1);
    expect(summary.detail).toMatchObject({ batchId: batch.id, batchOutcome: 'partial' });
    expect(summary.detail.effectKey).toBe(sha256Hex(JSON.stringify(['BatchSettled', INBOX_NAME, BATCHES, batch.id])));
    expect(events()).toHaveLength(4);
  });

  test('cancelled part-way: the processed requests keep their results, the rest are canceled; the summary is partial', async () => {
    const customIds = ids(12);
    const batch = await submittedBatch(customIds);
    api.finish(batch.id, customIds.slice(0, 5));
    api.cancel(batch.id);
    h.clock.advance(HORIZON_MS);
    // The poll that sees `canceling` is not the end yet.
    expect(await reconcile()).toMatchObject({ stillPending: 1, overdue: 0 });
    h.clock.advance(RECHECK_MS);
    expect(await reconcile()).toMatchObject({ recovered: 1 });
    const states = [...(await childRows(batch.id)).entries()].map(([id, row]): [string, string] => [id, (bodyOf(row).result as { type: string }).type]);
    expect(new Map(states)).toEqual(new Map(customIds.map((id, i) => [id, i < 5 ? 'succeeded' : 'canceled'])));
    expect(bodyOf((await h.row(summaryKey(batch.id)))!)).toMatchObject({ outcome: 'partial', counts: { succeeded: 5, canceled: 7 } });
  });

  test('expired with nothing done: every request expired, the summary failed; past its expiry a running batch is overdue, not near its deadline', async () => {
    const batch = await submittedBatch(ids(3));
    h.clock.set(batch.createdAt + 86_400_000);
    // The expiry loses nothing (the results of an expired batch are read as any): overdue, not unavailable.
    expect(await reconcile()).toMatchObject({ stillPending: 1, overdue: 1, nearDeadline: 0, unavailable: 0 });
    api.expire(batch.id);
    h.clock.advance(RECHECK_MS);
    await reconcile();
    expect(bodyOf((await h.row(summaryKey(batch.id)))!)).toMatchObject({ outcome: 'failed', counts: { succeeded: 0, expired: 3 } });
  });

  test('a result naming no recorded request is never stored; a recorded request the results never name is counted missing', async () => {
    const batch = api.addBatch({ customIds: ['a', 'b', 'stranger'] });
    await h.submissionLedger().recordBatch({ provider: BATCHES, batchId: batch.id, childIds: ['a', 'b', 'lost'] });
    api.end(batch.id);
    h.clock.advance(HORIZON_MS);
    await reconcile();
    expect([...(await childRows(batch.id)).keys()].sort()).toEqual(['a', 'b']);
    expect(bodyOf((await h.row(summaryKey(batch.id)))!)).toMatchObject({ outcome: 'partial', missing: 1, unexpected: 1, counts: { succeeded: 2 } });
    expect(h.capture.logs('batch results incomplete')).toHaveLength(1);
  });

  test('results no longer kept, or a batch the provider does not know: UNAVAILABLE with a ResourceUnavailable event each, nothing stored', async () => {
    const batch = await submittedBatch(ids(2));
    api.end(batch.id);
    api.forgetResults(batch.id);
    await h.submissionLedger().recordBatch({ provider: BATCHES, batchId: 'msgbatch_unknown', childIds: ids(4) });
    h.clock.advance(HORIZON_MS);
    expect(await reconcile()).toMatchObject({ checked: 2, unavailable: 2, unknown: 0 });
    expect(await h.submission(subKey(batch.id))).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'results_not_found' });
    expect(await h.submission(subKey('msgbatch_unknown'))).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'not_found' });
    expect(await deliveryRows()).toEqual([]);
    const gone = events().filter((event) => event.detailType === 'ResourceUnavailable');
    expect(gone.map((event) => [event.detail.taskId, event.detail.reason, event.detail.childCount, event.detail.childrenRead]).sort()).toEqual([
      [batch.id, 'results_not_found', 2, 0],
      ['msgbatch_unknown', 'not_found', 4, 0],
    ]);
  });

  test('a large batch is read over several runs, at most its page budget each, without counting it overdue', async () => {
    const pages = PAGING.pagesPerRun + 3;
    const customIds = ids(PAGE * pages);
    const batch = await submittedBatch(customIds);
    api.end(batch.id);
    h.clock.advance(HORIZON_MS);
    expect(await reconcile()).toMatchObject({ checked: 1, overdue: 0, recovered: 0 });
    expect(await h.submission(subKey(batch.id))).toMatchObject({
      state: SubmissionState.AWAITING,
      lastCheck: 'reading_results',
      resultsRead: PAGE * PAGING.pagesPerRun,
    });
    expect(await reconcile()).toMatchObject({ checked: 1, recovered: 1, overdue: 0 });
    expect((await childRows(batch.id)).size).toBe(customIds.length);
    expect(api.requests.filter((request) => request.path.endsWith('/results')).length).toBe(pages);
    expect(api.batch(batch.id).polls).toBe(1);
  }, 120_000);
});

describe("a batch's deadline: when its results stop being readable", () => {
  const unavailable = () => events().filter((event) => event.detailType === 'ResourceUnavailable');

  test('recorded 29 days after submission, and kept a day past it however short the retention', async () => {
    const out = await h.submissionLedger({ retentionSeconds: 7 * 86_400 }).recordBatch({ provider: BATCHES, batchId: 'msgbatch_kept', childIds: ['a'] });
    expect(out).toMatchObject({ outcome: 'recorded', deadlineAt: h.clock.now() + RESULTS_KEPT_MS });
    const item = await h.submission(subKey('msgbatch_kept'));
    expect(item).toMatchObject({ deadlineAt: h.clock.now() + RESULTS_KEPT_MS });
    expect(item!.expiresAt as number).toBeGreaterThanOrEqual(Math.floor((h.clock.now() + RESULTS_KEPT_MS + DAY_MS) / 1000));
  });

  test('an ended batch whose results cannot be read is counted near its deadline inside the margin, then settled UNAVAILABLE at it with one event naming what was read', async () => {
    const customIds = ids(PAGE * 2 + 5);
    const batch = await submittedBatch(customIds);
    api.end(batch.id);
    // The batch and its first page are served; every request after that fails.
    api.inject(500, { after: 2, times: 1_000_000 });
    h.clock.advance(HORIZON_MS);
    expect(await reconcile()).toMatchObject({ checked: 1, pollErrors: 1, overdue: 1, nearDeadline: 0 });
    expect(await h.submission(subKey(batch.id))).toMatchObject({
      state: SubmissionState.AWAITING,
      resultsRead: PAGE,
      batchExpiresAt: batch.createdAt + EXPIRY_MS,
    });

    // The provider's expires_at, one expiry after creation, puts the results deadline 29 days after creation.
    const deadline = batch.createdAt + RESULTS_KEPT_MS;
    h.clock.set(deadline - WARNING_MS - 1000);
    expect(await reconcile()).toMatchObject({ checked: 1, nearDeadline: 0, unavailable: 0 });
    // Due again no later than the margin's start.
    expect((await h.submission(subKey(batch.id)))!.awaitDueAt as number).toBeLessThanOrEqual(deadline - WARNING_MS);

    h.clock.set(deadline - WARNING_MS + 1000);
    expect(await reconcile()).toMatchObject({ checked: 1, nearDeadline: 1, unavailable: 0 });
    expect(h.capture.metric(MetricName.NEAR_DEADLINE)).toBe(1);
    expect(unavailable()).toEqual([]);

    h.clock.set(deadline);
    expect(await reconcile()).toMatchObject({ checked: 1, unavailable: 1, nearDeadline: 0 });
    expect(await h.submission(subKey(batch.id))).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'deadline_passed' });
    expect(unavailable().map((event) => event.detail)).toEqual([
      expect.objectContaining({
        provider: BATCHES,
        taskId: batch.id,
        reason: 'deadline_passed',
        deadline: new Date(deadline).toISOString(),
        childCount: customIds.length,
        childrenRead: PAGE,
      }),
    ]);
    // What was read stays, each once; no summary is made of a batch whose results were not all read.
    expect((await childRows(batch.id)).size).toBe(PAGE);
    expect(await h.row(summaryKey(batch.id))).toBeUndefined();
    h.clock.advance(RECHECK_MS);
    expect(await reconcile()).toMatchObject({ checked: 0 });
  });

  test('results still served past the deadline are read to the end, counted near the deadline, never overdue', async () => {
    const customIds = ids(PAGE * PAGING.pagesPerRun + 1);
    const batch = await submittedBatch(customIds);
    api.end(batch.id);
    h.clock.set(batch.createdAt + RESULTS_KEPT_MS + 1000);
    expect(await reconcile()).toMatchObject({ checked: 1, nearDeadline: 1, overdue: 0, unavailable: 0, recovered: 0 });
    expect(await h.submission(subKey(batch.id))).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'reading_results' });
    expect(await reconcile()).toMatchObject({ checked: 1, recovered: 1, unavailable: 0 });
    expect((await childRows(batch.id)).size).toBe(customIds.length);
    expect(await h.row(summaryKey(batch.id))).toBeDefined();
    expect(unavailable()).toEqual([]);
  }, 120_000);

  test('a batch item written before deadlines existed has one: 29 days after its submission while the provider has named no expiry', async () => {
    const batch = await submittedBatch(ids(3));
    // The previous format: no deadlineAt on the item.
    await h.dynamodb.send(
      new UpdateItemCommand({
        TableName: h.names.inboxTable,
        Key: { pk: { S: subKey(batch.id) }, sk: { S: 'submission' } },
        UpdateExpression: 'REMOVE deadlineAt',
      }),
    );
    expect(await h.submission(subKey(batch.id))).not.toHaveProperty('deadlineAt');
    // Every poll fails, so the provider never names its expiry.
    api.inject(503, { times: 1_000_000 });
    const deadline = h.clock.now() + RESULTS_KEPT_MS;
    h.clock.set(deadline - WARNING_MS + 1000);
    expect(await reconcile()).toMatchObject({ checked: 1, nearDeadline: 1 });
    h.clock.set(deadline);
    expect(await reconcile()).toMatchObject({ checked: 1, unavailable: 1 });
    expect(unavailable().map((event) => [event.detail.reason, event.detail.deadline])).toEqual([['deadline_passed', new Date(deadline).toISOString()]]);
  });
});

describe('a run that dies part-way loses nothing and repeats nothing', () => {
  class RunDied extends Error {
    override readonly name = 'RunDied';
  }

  test('after a page was stored but before its cursor moved, and mid-page after some inserts: each request once, the counts exact', async () => {
    const customIds = ids(PAGE * 3);
    const batch = await submittedBatch(customIds, { errored: customIds.slice(0, 7) });
    api.end(batch.id);
    h.clock.advance(HORIZON_MS);

    const real = h.submissionStore();
    let advances = 0;
    const dyingCursor: SubmissionStore = {
      ...bind(real),
      advanceResults: async (...args) => {
        if (++advances === 2) throw new RunDied('died before moving the cursor past the second page');
        return real.advanceResults(...args);
      },
    };
    await expect(reconcile({ submissions: dyingCursor })).rejects.toThrow(RunDied);
    expect((await childRows(batch.id)).size).toBe(PAGE * 2);
    expect(await h.submission(subKey(batch.id))).toMatchObject({ state: SubmissionState.AWAITING, resultsRead: PAGE });

    let inserts = 0;
    const dyingInbox: InboxStore = {
      ...bind(h.inbox),
      insert: async (delivery) => {
        const inserted = await h.inbox.insert(delivery);
        if (inserted && ++inserts === Math.ceil(PAGE * 0.3)) throw new RunDied('died mid-page');
        return inserted;
      },
    };
    await expect(reconcile({}, { inbox: dyingInbox })).rejects.toThrow(RunDied);

    expect(await reconcile()).toMatchObject({ recovered: 1 });
    const rows = await childRows(batch.id);
    expect(rows.size).toBe(customIds.length);
    expect(await h.submission(subKey(batch.id))).toMatchObject({
      state: SubmissionState.RECOVERED,
      resultsRead: customIds.length,
      childSucceeded: customIds.length - 7,
      childErrored: 7,
    });
    expect(bodyOf((await h.row(summaryKey(batch.id)))!)).toMatchObject({
      children: customIds.length,
      counts: { succeeded: customIds.length - 7, errored: 7 },
      missing: 0,
    });
    // Every row counted once, though pages were read again.
    expect(h.capture.metric(MetricName.BATCH_CHILDREN_RECORDED)).toBe(customIds.length);
    expect(h.capture.metric(MetricName.BATCHES_SETTLED)).toBe(1);

    // The row stored just before the run died was never enqueued: the sweep enqueues it. Each is processed once.
    expect(await h.drain(processor())).toMatchObject({ received: customIds.length, failed: 0 });
    h.clock.advance(Defaults.SWEEP_AFTER_SECONDS * 1000 + 1);
    expect(await reconcile()).toMatchObject({ swept: 1, checked: 0 });
    expect(await h.drain(processor())).toMatchObject({ received: 1, failed: 0 });
    const keys = events().map((event) => event.detail.effectKey as string);
    expect(new Set(keys).size).toBe(customIds.length + 1);
    expect(keys).toHaveLength(customIds.length + 1);
  }, 60_000);

  test('a request’s insert throttled past the SDK’s attempts (injected by the fault proxy) fails the run mid-page; the next run reads the page again: each request once, the counts exact', async () => {
    // One page: the run fails mid-way through it.
    const customIds = ids(PAGE);
    const batch = await submittedBatch(customIds);
    api.end(batch.id);
    h.clock.advance(HORIZON_MS);
    const faults = await h.faults();
    const throttled = childKey(batch.id, customIds[PAGE / 2]);
    faults.throttle({
      operations: ['PutItem'],
      where: (call) => (call.input.Item as { pk?: { S?: string } } | undefined)?.pk?.S === throttled,
      calls: await h.sdkAttempts('dynamodb'),
    });

    await expect(reconcile()).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(await h.row(throttled)).toBeUndefined();
    expect(await h.submission(subKey(batch.id))).not.toHaveProperty('resultsRead');

    expect(await reconcile()).toMatchObject({ recovered: 1 });
    expect((await childRows(batch.id)).size).toBe(customIds.length);
    expect(h.capture.metric(MetricName.BATCH_CHILDREN_RECORDED)).toBe(customIds.length);
    expect(h.capture.metric(MetricName.BATCHES_SETTLED)).toBe(1);
  });

  test('between the summary and the settle: the next run settles it without a second summary', async () => {
    const batch = await submittedBatch(ids(3));
    api.end(batch.id);
    h.clock.advance(HORIZON_MS);
    const real = h.submissionStore();
    const dying: SubmissionStore = {
      ...bind(real),
      settle: async () => {
        throw new RunDied('died before the settle');
      },
    };
    await expect(reconcile({ submissions: dying })).rejects.toThrow(RunDied);
    expect(await h.row(summaryKey(batch.id))).toBeDefined();
    expect(await reconcile()).toMatchObject({ recovered: 1 });
    expect(await deliveryRows()).toHaveLength(4);
    expect(api.requests.filter((request) => request.path.endsWith('/results')).length).toBe(1);
  });
});
