/**
 * The submission ledger and the polling reconciler (docs/DESIGN.md#invariant-10): tasks
 * recorded at submission, checked after their provider's horizon, polled when no delivery came,
 * and final results fed through the same inbox path, exactly once, whatever stops a run.
 * Everything runs against the emulators, the Secrets Manager stand-in and the fake provider APIs
 * of `local/` over real HTTP.
 */
import { randomUUID } from 'node:crypto';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  AdapterKind,
  AnswerlineLifecycle,
  Defaults,
  DeliveryStatus,
  Env,
  MetricName,
  PollingDefaults,
  PollingRuntimeConfig,
  SubmissionState,
} from '../../../lib/contract';
import { InvalidSubmissionError, ProviderDeadlines } from '../../../client';
import { EventBridgeSink } from '../../../lambda/shared/effects/sinks';
import { LedgerDependencies } from '../../../lambda/reconciler/ledger';
import { shardOf } from '../../../lambda/shared/runtime/digest';
import { InboxStore } from '../../../lambda/shared/stores/inbox';
import { SubmissionStore } from '../../../lambda/shared/stores/submission-store';
import { FakeAnswerlineApi, FakeEchonovaApi } from '#twin/testing';
import { BundleHost } from '../../support/bundle-host';
import { apiGatewayEvent, answerOf, bind, Clock, EffectsFixture, InboxHarness, PROVIDER, SecretsFixture } from '../../support/inbox-fixture';
import { expectAccessDenied } from '../../support/iam-fixture';
import { echonovaHeaders, textSecret } from '../../support/senders';

const HORIZON_MS = AnswerlineLifecycle.HORIZON_SECONDS * 1000;
const RECHECK_MS = PollingDefaults.answerline.recheckSeconds * 1000;

const secrets = new SecretsFixture();
let api: FakeAnswerlineApi;
let h: InboxHarness;
let polling: PollingRuntimeConfig;

beforeAll(async () => {
  await secrets.start();
});
afterAll(() => secrets.stop());
beforeEach(async () => {
  api = new FakeAnswerlineApi();
  await api.start();
  h = await InboxHarness.create(secrets, 'ledger', { queue: { visibilityTimeoutSeconds: 1 }, clock: new Clock() });
  polling = await h.pollingConfig(api.apiKey, api.taskUrlTemplate, { timeoutMs: 5_000 });
});
afterEach(async () => {
  h.expectLogsClean();
  h.destroy();
  await api.stop();
});

/** A reconciler run with the ledger wired to the fake Answerline API. */
function reconcile(ledger: Partial<LedgerDependencies> = {}, overrides: Parameters<InboxHarness['reconciler']>[0] = {}) {
  return h.reconciler({ ledger: h.ledger({ polling: [polling], ...ledger }), ...overrides })();
}

/** Tasks known to the fake API (final unless told), each recorded by the app at submission. */
async function submitted(count: number, status: string | readonly string[] = 'COMPLETED', jobKey?: (i: number) => string): Promise<string[]> {
  const ledger = h.submissionLedger();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const task = api.addTask({ status, idempotencyKey: jobKey ? jobKey(i) : `job-${randomUUID()}`, createdAt: new Date(h.clock.now() + i).toISOString() });
    h.markSensitive(`answer-${task.id}`, `failed-${task.id}`);
    expect(await ledger.recordSubmission({ provider: PROVIDER, taskId: task.id, idempotencyKey: task.idempotencyKey! })).toMatchObject({ outcome: 'recorded' });
    ids.push(task.id);
  }
  return ids;
}

const subKey = (taskId: string) => `ledger:${PROVIDER}#${taskId}`;
const rowKey = (taskId: string) => `${PROVIDER}#${taskId}`;
const deliveryRows = async () => (await h.inboxItems()).filter((item) => item.sk === 'delivery');
const polls = () => api.requests.filter((request) => request.id !== undefined).length;

// ---------------------------------------------------------------------------------------------
// Recording
// ---------------------------------------------------------------------------------------------

describe('recording a submission', () => {
  test('one conditional put: the item, its awaiting-index entry and TTL; a repeat changes nothing', async () => {
    const ledger = h.submissionLedger();
    const submittedAt = h.clock.now();
    const first = await ledger.recordSubmission({ provider: PROVIDER, taskId: 'tsk_1', idempotencyKey: 'job-1-r2' });
    const key = subKey('tsk_1');
    expect(first).toEqual({ outcome: 'recorded', key, dueAt: submittedAt + HORIZON_MS });
    const stored = await h.submission(key);
    expect(stored).toEqual({
      pk: key,
      sk: 'submission',
      provider: PROVIDER,
      taskId: 'tsk_1',
      idempotencyKey: 'job-1-r2',
      jobRef: `${PROVIDER}#job-1-r2`,
      submittedAt,
      state: SubmissionState.AWAITING,
      checks: 0,
      expiresAt: Math.floor(submittedAt / 1000) + Defaults.RETENTION_DAYS * 86_400,
      awaitShard: shardOf(key, 16),
      awaitDueAt: submittedAt + HORIZON_MS,
    });

    h.clock.advance(60_000);
    expect(await ledger.recordSubmission({ provider: PROVIDER, taskId: 'tsk_1', idempotencyKey: 'job-1-r2' })).toEqual({ outcome: 'already_recorded', key });
    expect(await h.submission(key)).toEqual(stored);
  });

  test('known only by its idempotency key: its own item, without task id or job reference', async () => {
    const ledger = h.submissionLedger();
    const out = await ledger.recordSubmission({ provider: PROVIDER, idempotencyKey: 'job-timeout' });
    expect(out).toMatchObject({ outcome: 'recorded', key: `ledger:${PROVIDER}#key:job-timeout` });
    const stored = await h.submission(`ledger:${PROVIDER}#key:job-timeout`);
    expect(stored).toMatchObject({ idempotencyKey: 'job-timeout', state: SubmissionState.AWAITING });
    expect(stored).not.toHaveProperty('taskId');
    expect(stored).not.toHaveProperty('jobRef');
    expect(await ledger.recordSubmission({ provider: PROVIDER, idempotencyKey: 'job-timeout' })).toMatchObject({ outcome: 'already_recorded' });
  });

  test('a record that cannot be stored is refused, naming every problem, and writes nothing', async () => {
    const ledger = h.submissionLedger();
    await expect(ledger.recordSubmission({ provider: PROVIDER })).rejects.toThrow(InvalidSubmissionError);
    await expect(ledger.recordSubmission({ provider: 'Not A Name', taskId: 'key:x', submittedAt: Number.NaN })).rejects.toThrow(
      /provider must be.*taskId must not start with "key:".*submittedAt is not a valid time/,
    );
    await expect(ledger.recordSubmission({ provider: PROVIDER, taskId: '' })).rejects.toThrow(/taskId must be a non-empty string/);
    expect(await h.inboxItems()).toEqual([]);
  });

  test('the ledger grant writes submissions and nothing else: a forged delivery row and an overwrite of an accepted one are refused', async () => {
    const body = JSON.stringify({
      task: { id: 'tsk_accepted', status: 'COMPLETED', idempotencyKey: 'job-a', createdAt: '2026-09-18T10:00:00.000Z' },
      response: { result: 1 },
    });
    expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
    const accepted = await h.row(`${PROVIDER}#tsk_accepted`);
    const app = h.as('app').dynamodb;
    const forged = (id: string) =>
      app.send(
        new PutItemCommand({
          TableName: h.names.inboxTable,
          Item: { pk: { S: `${PROVIDER}#${id}` }, sk: { S: 'delivery' }, status: { S: DeliveryStatus.RECEIVED }, body: { S: '{"forged":true}' } },
        }),
      );
    expectAccessDenied(2);
    await expect(forged('tsk_forged')).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(forged('tsk_accepted')).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(await h.row(`${PROVIDER}#tsk_forged`)).toBeUndefined();
    expect(await h.row(`${PROVIDER}#tsk_accepted`)).toEqual(accepted);
    // What the grant is for still works.
    expect(await h.submissionLedger().recordSubmission({ provider: PROVIDER, taskId: 'tsk_next' })).toMatchObject({
      outcome: 'recorded',
      key: subKey('tsk_next'),
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Recovery by polling
// ---------------------------------------------------------------------------------------------

test('an outage longer than the retry window: every final result is recovered by polling, exactly once', async () => {
  // Two runs of one job (-r1 resubmitted after a FAILED), the rest their own jobs.
  const failed = await submitted(1, 'FAILED', () => 'job-outage');
  const retried = await submitted(1, 'COMPLETED', () => 'job-outage-r1');
  const others = await submitted(8);
  const ids = [...failed, ...retried, ...others];

  // Inside the horizon: nothing is due, nothing polled; the alarm's metric still gets a zero.
  h.clock.advance(HORIZON_MS - 1);
  expect(await reconcile()).toMatchObject({ swept: 0, checked: 0, recovered: 0, overdue: 0 });
  expect(polls()).toBe(0);
  expect(h.capture.lines.some((line) => JSON.parse(line)[MetricName.OVERDUE] === 0)).toBe(true);

  h.clock.advance(1);
  expect(await reconcile()).toMatchObject({ checked: 10, recovered: 10, overdue: 0, stillPending: 0, pollErrors: 0 });
  expect(h.capture.metric(MetricName.RECOVERED)).toBe(10);
  for (const id of ids) {
    expect(await h.row(rowKey(id))).toMatchObject({ status: DeliveryStatus.RECEIVED, recovered: true });
    expect(await h.row(rowKey(id))).not.toHaveProperty(['meta', 'webhook-inbox-recovered']);
    expect(await h.submission(subKey(id))).toMatchObject({ state: SubmissionState.RECOVERED, lastCheck: 'recovered', checks: 1, taskId: id });
    expect(await h.submission(subKey(id))).not.toHaveProperty('awaitDueAt');
  }

  // Enqueued once each, and processed once each by the same processor as a delivery; the job rule holds.
  expect(await h.drain(h.processor())).toEqual({ received: 10, failed: 0 });
  for (const id of ids) expect(await h.row(rowKey(id))).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
  expect(h.capture.metric(MetricName.PROCESSED)).toBe(10);
  expect(await h.result('job-outage')).toMatchObject({ taskId: retried[0], status: 'COMPLETED' });
  expect(await h.result(api.task(failed[0])!.idempotencyKey!)).toMatchObject({ taskId: retried[0] });
  expect(await h.result(api.task(others[3])!.idempotencyKey!)).toMatchObject({ taskId: others[3], status: 'COMPLETED' });

  // The next runs find nothing due: no poll, no row, no message more.
  h.clock.advance(HORIZON_MS);
  expect(await reconcile()).toMatchObject({ swept: 0, checked: 0, recovered: 0 });
  expect(polls()).toBe(10);
  expect(await deliveryRows()).toHaveLength(10);
  expect(await h.takeMessages()).toEqual([]);

  // A late redelivery (from the dashboard) carries other bytes (credits moved on): a duplicate, not an altered copy.
  const late = JSON.parse(api.deliveryBody(others[0])) as { credits: unknown };
  late.credits = { charged: 1, remaining: 1 };
  expect(await h.deliver(JSON.stringify(late))).toEqual({ statusCode: 200, result: 'duplicate' });
  // 10 rows and 10 submissions, no quarantined copy (beside them, the sweep's own watermark item).
  expect((await h.inboxItems()).filter((item) => item.pk !== 'sweep:pending')).toHaveLength(20);
  expect(h.capture.metric(MetricName.QUARANTINED)).toBe(0);
});

test('a submission recorded before the ledger prefix existed (`<provider>#<taskId>`) is still polled and recovered', async () => {
  const task = api.addTask({ status: 'COMPLETED' });
  h.markSensitive(`answer-${task.id}`);
  const legacyKey = `${PROVIDER}#${task.id}`;
  const submittedAt = h.clock.now();
  await h.dynamodb.send(
    new PutItemCommand({
      TableName: h.names.inboxTable,
      Item: {
        pk: { S: legacyKey },
        sk: { S: 'submission' },
        provider: { S: PROVIDER },
        taskId: { S: task.id },
        submittedAt: { N: String(submittedAt) },
        state: { S: SubmissionState.AWAITING },
        checks: { N: '0' },
        expiresAt: { N: String(Math.floor(submittedAt / 1000) + 86_400) },
        awaitShard: { S: shardOf(legacyKey, 16) },
        awaitDueAt: { N: String(submittedAt + HORIZON_MS) },
      },
    }),
  );
  h.clock.advance(HORIZON_MS);
  expect(await reconcile()).toMatchObject({ checked: 1, recovered: 1, overdue: 0 });
  expect(await h.submission(legacyKey)).toMatchObject({ state: SubmissionState.RECOVERED, taskId: task.id });
  expect(await h.row(rowKey(task.id))).toMatchObject({ recovered: true });
});

test('429 mid-run stops polling at once; the next run picks up the rest', async () => {
  const ids = await submitted(6);
  h.clock.advance(HORIZON_MS);
  api.rateLimit({ after: 2 });

  const first = await reconcile();
  expect(first).toMatchObject({ checked: 3, recovered: 2, rateLimited: 1, overdue: 1 });
  expect(polls()).toBe(3);
  expect(h.capture.metric(MetricName.POLL_RATE_LIMITED)).toBe(1);
  expect(h.capture.metric(MetricName.OVERDUE)).toBe(1);
  const states = await Promise.all(ids.map(async (id) => (await h.submission(subKey(id)))!.state));
  expect(states.filter((state) => state === SubmissionState.RECOVERED)).toHaveLength(2);
  // The rest were not touched, the throttled one included: first in line next run.
  for (const id of ids) {
    const item = (await h.submission(subKey(id)))!;
    if (item.state === SubmissionState.AWAITING) expect(item).toMatchObject({ checks: 0 });
  }

  expect(await reconcile()).toMatchObject({ checked: 4, recovered: 4, rateLimited: 0, overdue: 0 });
  expect(await deliveryRows()).toHaveLength(6);
  // Each task answered once with a result; the throttled one was asked twice.
  expect(ids.map((id) => api.requestsFor(id).filter((r) => r.status === 200).length)).toEqual([1, 1, 1, 1, 1, 1]);
  expect(polls()).toBe(7);
});

describe('AWS throttles the ledger and its indexes lag (injected by the fault proxy)', () => {
  test('the awaiting index lags its table: a submission checked a moment ago is not polled again while the index still lists its old due time', async () => {
    const [id] = await submitted(1, 'PROCESSING');
    const faults = await h.faults();
    faults.lagIndexes(5_000, h.clock.now);
    h.clock.advance(HORIZON_MS);
    expect(await reconcile()).toMatchObject({ checked: 1, stillPending: 1, overdue: 1 });
    expect(await h.submission(subKey(id))).toMatchObject({ awaitDueAt: h.clock.now() + RECHECK_MS, checks: 1 });

    // A second later the index still has it due (its entry moves in 5 s); the item says it is not.
    h.clock.advance(1_000);
    expect(await reconcile()).toMatchObject({ checked: 0, overdue: 0, stillPending: 0 });
    expect(faults.injectedOf('index lagged')).toBeGreaterThan(0);
    expect(polls()).toBe(1);
    expect(h.capture.metric(MetricName.OVERDUE)).toBe(1);
    expect(await h.submission(subKey(id))).toMatchObject({ checks: 1 });

    // Due again after its recheck interval: polled once more, and recovered.
    api.setStatus(id, 'COMPLETED');
    h.clock.advance(RECHECK_MS);
    expect(await reconcile()).toMatchObject({ checked: 1, recovered: 1 });
    expect(polls()).toBe(2);
  });

  test('the job-ref index lags: a key-only submission whose delivery was written within the lag is resolved by a later check', async () => {
    const ledger = h.submissionLedger();
    await ledger.recordSubmission({ provider: PROVIDER, idempotencyKey: 'job-lagging-ref' });
    h.clock.advance(HORIZON_MS);
    const faults = await h.faults();
    faults.lagIndexes(5_000, h.clock.now);
    const body = JSON.stringify({
      task: { id: 'tsk_lagging_ref', status: 'COMPLETED', idempotencyKey: 'job-lagging-ref', createdAt: '2026-09-18T10:00:00.000Z' },
      response: { result: 1 },
    });
    expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });

    expect(await reconcile()).toMatchObject({ checked: 1, delivered: 0, overdue: 1 });
    expect(await h.submission(`ledger:${PROVIDER}#key:job-lagging-ref`)).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'awaiting_key' });
    h.clock.advance(RECHECK_MS);
    expect(await reconcile()).toMatchObject({ checked: 1, delivered: 1 });
    expect(await h.submission(`ledger:${PROVIDER}#key:job-lagging-ref`)).toMatchObject({ state: SubmissionState.DELIVERED, taskId: 'tsk_lagging_ref' });
  });

  test('a polled result whose insert is throttled past the SDK’s attempts fails the run; the submission stays due, and the next run feeds it once', async () => {
    const [id] = await submitted(1);
    h.clock.advance(HORIZON_MS);
    const faults = await h.faults();
    faults.throttle({ operations: ['PutItem'], where: (call) => call.input.TableName === h.names.inboxTable, calls: await h.sdkAttempts('dynamodb') });

    await expect(reconcile()).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(await h.submission(subKey(id))).toMatchObject({ state: SubmissionState.AWAITING, checks: 0 });
    expect(await deliveryRows()).toEqual([]);

    expect(await reconcile()).toMatchObject({ checked: 1, recovered: 1 });
    expect(await h.row(rowKey(id))).toMatchObject({ recovered: true, status: DeliveryStatus.RECEIVED });
    expect(await h.takeMessages()).toEqual([rowKey(id)]);
    expect(h.capture.metric(MetricName.RECOVERED)).toBe(1);
  });
});

describe('resources that are gone, and deadlines', () => {
  const fx = new EffectsFixture();
  let bus: string;
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());
  beforeEach(() => {
    bus = fx.createBus();
    h.useEffectTargets({ eventBusName: bus });
  });

  /** The reconciler's ledger with its ResourceUnavailable events on the bus, through the reconciler's own client. */
  function reconcileWithBus(ledger: Partial<LedgerDependencies> = {}) {
    // One attempt per call: an injected failure reaches the reconciler, as the processor's sink tests do.
    const busSink = new EventBridgeSink(h.as('reconciler', undefined, 1).eventBridge, bus);
    return reconcile({ unavailableEvents: { bus: busSink, inboxName: 'ledger-events' }, ...ledger });
  }
  const unavailableEvents = () => fx.eventBridge.eventsOn(bus).filter((event) => event.detailType === 'ResourceUnavailable');

  test('404: the task is unknown or no longer kept → UNAVAILABLE, one ResourceUnavailable event each, never polled again', async () => {
    const [kept] = await submitted(1);
    const ledger = h.submissionLedger();
    await ledger.recordSubmission({ provider: PROVIDER, taskId: 'tsk_never_created', idempotencyKey: 'job-never' });
    const [forgotten] = await submitted(1);
    api.forget(forgotten);
    h.clock.advance(HORIZON_MS);

    expect(await reconcileWithBus()).toMatchObject({ checked: 3, recovered: 1, unavailable: 2, unknown: 0, overdue: 0 });
    expect(h.capture.metric(MetricName.RESOURCE_UNAVAILABLE)).toBe(2);
    for (const id of ['tsk_never_created', forgotten]) {
      const item = await h.submission(subKey(id));
      expect(item).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'not_found', checks: 1 });
      expect(item).not.toHaveProperty('awaitShard');
    }
    expect(await h.submission(subKey(kept))).toMatchObject({ state: SubmissionState.RECOVERED });
    const events = unavailableEvents();
    expect(events.map((event) => event.detail.taskId).sort()).toEqual(['tsk_never_created', forgotten].sort());
    expect(events.find((event) => event.detail.taskId === 'tsk_never_created')).toMatchObject({
      source: 'cdk-webhook-inbox',
      detail: {
        schemaVersion: 1,
        inbox: 'ledger-events',
        provider: PROVIDER,
        reason: 'not_found',
        submissionKey: subKey('tsk_never_created'),
        effectKey: `ledger-events|${subKey('tsk_never_created')}|unavailable`,
        idempotencyKey: 'job-never',
        submittedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        detectedAt: new Date(h.clock.now()).toISOString(),
      },
    });
    // Nothing was regenerated: no new task, no row for the gone ones.
    expect((await deliveryRows()).map((row) => row.pk)).toEqual([rowKey(kept)]);

    h.clock.advance(HORIZON_MS);
    expect(await reconcileWithBus()).toMatchObject({ checked: 0 });
    expect(polls()).toBe(3);
    expect(unavailableEvents()).toHaveLength(2);
  });

  test('an event the bus refuses leaves the submission AWAITING: the next run announces it again, with the same effect key, then settles it', async () => {
    await h.submissionLedger().recordSubmission({ provider: PROVIDER, taskId: 'tsk_gone' });
    h.clock.advance(HORIZON_MS);
    fx.eventBridge.failNextCalls(1);
    expect(await reconcileWithBus()).toMatchObject({ checked: 1, unavailable: 0 });
    expect(h.capture.metric(MetricName.EFFECT_FAILURES)).toBe(1);
    expect(await h.submission(subKey('tsk_gone'))).toMatchObject({ state: SubmissionState.AWAITING });
    expect(await reconcileWithBus()).toMatchObject({ checked: 1, unavailable: 1 });
    expect(unavailableEvents().map((event) => event.detail.effectKey)).toEqual([`ledger-events|${subKey('tsk_gone')}|unavailable`]);
    expect(await h.submission(subKey('tsk_gone'))).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'not_found' });
  });

  test('a deadline is stored on the record; the submission is polled a warning margin before it, counted near its deadline, and looked at last at the deadline', async () => {
    const warningMs = Defaults.DEADLINE_WARNING_SECONDS * 1000;
    const ledger = h.submissionLedger();
    const submittedAt = h.clock.now();
    const deadline = submittedAt + 3_600_000; // an hour: well inside Answerline's horizon
    const late = api.addTask({ status: 'PROCESSING' });
    const lost = api.addTask({ status: 'PROCESSING' });
    for (const task of [late, lost]) h.markSensitive(`answer-${task.id}`);
    const recorded = await ledger.recordSubmission({ provider: PROVIDER, taskId: late.id, deadline: new Date(deadline) });
    await ledger.recordSubmission({ provider: PROVIDER, taskId: lost.id, deadline });
    // Due at the margin's start, not at the horizon; kept (TTL) past the deadline.
    expect(recorded).toMatchObject({ outcome: 'recorded', deadlineAt: deadline, dueAt: deadline - warningMs });
    expect(await h.submission(subKey(late.id))).toMatchObject({ deadlineAt: deadline, awaitDueAt: deadline - warningMs });

    // Before the margin: not due, not polled, not counted.
    h.clock.advance(deadline - warningMs - 1 - submittedAt);
    expect(await reconcileWithBus()).toMatchObject({ checked: 0, nearDeadline: 0 });
    expect(polls()).toBe(0);
    expect(h.capture.metric(MetricName.NEAR_DEADLINE)).toBe(0);

    // Inside the margin: polled (still PROCESSING), counted near its deadline, due again at the deadline (sooner than the recheck).
    h.clock.advance(1);
    expect(await reconcileWithBus()).toMatchObject({ checked: 2, stillPending: 2, nearDeadline: 2 });
    expect(polls()).toBe(2);
    expect(h.capture.metric(MetricName.NEAR_DEADLINE)).toBe(2);
    expect(await h.submission(subKey(late.id))).toMatchObject({ state: SubmissionState.AWAITING, awaitDueAt: deadline, lastCheck: 'pending:PROCESSING' });

    // At the deadline: one result is final after all (recovered); the other is settled UNAVAILABLE, announced once.
    api.setStatus(late.id, 'COMPLETED');
    h.clock.advance(warningMs);
    expect(await reconcileWithBus()).toMatchObject({ checked: 2, recovered: 1, unavailable: 1, nearDeadline: 0 });
    expect(await h.submission(subKey(late.id))).toMatchObject({ state: SubmissionState.RECOVERED });
    expect(await h.submission(subKey(lost.id))).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'deadline_passed' });
    expect(unavailableEvents().map((event) => event.detail)).toEqual([
      expect.objectContaining({ taskId: lost.id, reason: 'deadline_passed', deadline: new Date(deadline).toISOString() }),
    ]);
    expect(api.task(lost.id)!.polls).toBe(2);
  });

  test('a deadline inside the warning margin that no run saw before it passed is counted near its deadline by the run that settles it, once', async () => {
    const warningMs = Defaults.DEADLINE_WARNING_SECONDS * 1000;
    const ledger = h.submissionLedger();
    const unseen = api.addTask({ status: 'PROCESSING' });
    const seen = api.addTask({ status: 'PROCESSING' });
    for (const task of [unseen, seen]) h.markSensitive(`answer-${task.id}`);
    // Both deadlines are shorter than the margin: due at once.
    const deadline = h.clock.now() + warningMs / 20;
    await ledger.recordSubmission({ provider: PROVIDER, taskId: seen.id, deadline });
    expect(await reconcileWithBus()).toMatchObject({ checked: 1, stillPending: 1, nearDeadline: 1 });
    expect(h.capture.metric(MetricName.NEAR_DEADLINE)).toBe(1);

    // Recorded after that run; the next runs come only once the deadline has passed (late,
    // failed or stopped runs, or a schedule slower than the deadline is short).
    await ledger.recordSubmission({ provider: PROVIDER, taskId: unseen.id, deadline });
    h.clock.advance(deadline - h.clock.now());
    expect(await reconcileWithBus()).toMatchObject({ checked: 2, unavailable: 2, nearDeadline: 1 });
    expect(await h.submission(subKey(unseen.id))).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'deadline_passed' });
    // The one a run had counted inside its margin is not counted again; the other is counted now.
    expect(h.capture.metric(MetricName.NEAR_DEADLINE)).toBe(2);
    // Looked at once, at its deadline, still unread.
    expect(api.task(unseen.id)!.polls).toBe(1);
    expect(await reconcileWithBus()).toMatchObject({ checked: 0, nearDeadline: 0 });
    expect(h.capture.metric(MetricName.NEAR_DEADLINE)).toBe(2);
  });

  test('a provider without polling: a deadline passed without a delivery settles the submission UNAVAILABLE', async () => {
    const ledger = h.submissionLedger({ deadlineSeconds: { [PROVIDER]: ProviderDeadlines.OPENAI_UNSTORED_BACKGROUND_RESPONSE_SECONDS } });
    const deadlineMs = ProviderDeadlines.OPENAI_UNSTORED_BACKGROUND_RESPONSE_SECONDS * 1000;
    const first = await ledger.recordSubmission({ provider: PROVIDER, taskId: 'resp_unread' });
    expect(first.deadlineAt).toBe(h.clock.now() + deadlineMs);
    // Ten minutes of deadline inside a ten-minute margin: due at once.
    expect(first.dueAt).toBe(h.clock.now());
    const noPolling = () => reconcileWithBus({ providers: h.ledger().providers });

    expect(await noPolling()).toMatchObject({ checked: 1, overdue: 1, nearDeadline: 1 });
    expect(await h.submission(subKey('resp_unread'))).toMatchObject({ state: SubmissionState.AWAITING, awaitDueAt: first.deadlineAt });
    h.clock.advance(deadlineMs);
    expect(await noPolling()).toMatchObject({ checked: 1, unavailable: 1 });
    expect(await h.submission(subKey('resp_unread'))).toMatchObject({ state: SubmissionState.UNAVAILABLE, lastCheck: 'deadline_passed' });
    expect(unavailableEvents()).toHaveLength(1);
  });

  test('a deadline that is not later than the submission is refused, naming the field; nothing is written', async () => {
    const ledger = h.submissionLedger();
    const now = h.clock.now();
    await expect(ledger.recordSubmission({ provider: PROVIDER, taskId: 'tsk_past', deadline: now })).rejects.toThrow(
      new InvalidSubmissionError(['deadline must be later than submittedAt']),
    );
    await expect(ledger.recordSubmission({ provider: PROVIDER, taskId: 'tsk_nan', deadline: Number.NaN })).rejects.toThrow(/deadline is not a valid time/);
    expect((await h.inboxItems()).filter((item) => item.sk === 'submission')).toEqual([]);
  });
});

test('PROCESSING → QUEUED → COMPLETED is followed across runs, checked again after recheckSeconds', async () => {
  const [id] = await submitted(1, ['PROCESSING', 'QUEUED', 'COMPLETED']);
  h.clock.advance(HORIZON_MS);

  expect(await reconcile()).toMatchObject({ checked: 1, stillPending: 1, overdue: 1 });
  expect(await h.submission(subKey(id))).toMatchObject({
    state: SubmissionState.AWAITING,
    lastCheck: 'pending:PROCESSING',
    checks: 1,
    awaitDueAt: h.clock.now() + RECHECK_MS,
  });
  expect(await h.row(rowKey(id))).toBeUndefined();

  // Not due again yet.
  h.clock.advance(RECHECK_MS - 1);
  expect(await reconcile()).toMatchObject({ checked: 0, overdue: 0 });

  h.clock.advance(1);
  expect(await reconcile()).toMatchObject({ checked: 1, stillPending: 1, overdue: 1 });
  expect(await h.submission(subKey(id))).toMatchObject({ lastCheck: 'pending:QUEUED', checks: 2 });

  h.clock.advance(RECHECK_MS);
  expect(await reconcile()).toMatchObject({ checked: 1, recovered: 1, overdue: 0 });
  expect(await h.submission(subKey(id))).toMatchObject({ state: SubmissionState.RECOVERED, checks: 3 });
  expect(h.capture.metric(MetricName.STILL_PENDING)).toBe(2);
  expect(h.capture.metric(MetricName.OVERDUE)).toBe(2);
  expect(api.requestsFor(id)).toHaveLength(3);
});

test('a delivery that arrives before the horizon → DELIVERED, never polled; its row carries the job reference', async () => {
  const [id] = await submitted(1);
  expect(await h.deliver(api.deliveryBody(id))).toMatchObject({ statusCode: 202 });
  expect(await h.row(rowKey(id))).toMatchObject({ jobRef: `${PROVIDER}#${api.task(id)!.idempotencyKey}` });
  expect(await h.row(rowKey(id))).not.toHaveProperty('recovered');
  h.clock.advance(HORIZON_MS);

  expect(await reconcile()).toMatchObject({ checked: 1, delivered: 1, recovered: 0, overdue: 0 });
  expect(await h.submission(subKey(id))).toMatchObject({ state: SubmissionState.DELIVERED, lastCheck: 'delivered' });
  expect(polls()).toBe(0);
  expect(h.capture.metric(MetricName.RECOVERED)).toBe(0);
});

describe('known only by its idempotency key (create timed out, retry got 409)', () => {
  test('resolved when its delivery arrives: the task id is filled in, nothing is polled', async () => {
    const task = api.addTask({ status: 'COMPLETED', idempotencyKey: 'job-409' });
    h.markSensitive(`answer-${task.id}`);
    await h.submissionLedger().recordSubmission({ provider: PROVIDER, idempotencyKey: 'job-409' });
    const key = `ledger:${PROVIDER}#key:job-409`;
    h.clock.advance(HORIZON_MS);

    // Nothing to poll by: overdue until the key shows up.
    expect(await reconcile()).toMatchObject({ checked: 1, overdue: 1, stillPending: 0 });
    expect(await h.submission(key)).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'awaiting_key' });

    expect(await h.deliver(api.deliveryBody(task.id))).toMatchObject({ statusCode: 202 });
    h.clock.advance(PollingDefaults.answerline.recheckSeconds * 1000);
    expect(await reconcile()).toMatchObject({ checked: 1, delivered: 1, overdue: 0 });
    expect(await h.submission(key)).toMatchObject({ state: SubmissionState.DELIVERED, taskId: task.id, lastCheck: 'delivered_by_key' });
    expect(polls()).toBe(0);
  });

  test('a later record by id with the same key links them: the key-only record is LINKED, the one by id recovers', async () => {
    const task = api.addTask({ status: 'COMPLETED', idempotencyKey: 'job-linked' });
    h.markSensitive(`answer-${task.id}`);
    const ledger = h.submissionLedger();
    await ledger.recordSubmission({ provider: PROVIDER, idempotencyKey: 'job-linked' });
    h.clock.advance(1_000);
    await ledger.recordSubmission({ provider: PROVIDER, taskId: task.id, idempotencyKey: 'job-linked' });
    h.clock.advance(HORIZON_MS);

    expect(await reconcile()).toMatchObject({ checked: 2, linked: 1, recovered: 1, overdue: 0 });
    expect(await h.submission(`ledger:${PROVIDER}#key:job-linked`)).toMatchObject({
      state: SubmissionState.LINKED,
      taskId: task.id,
      lastCheck: 'linked_by_key',
    });
    expect(await h.submission(subKey(task.id))).toMatchObject({ state: SubmissionState.RECOVERED });
    expect(api.requestsFor(task.id)).toHaveLength(1);
    expect(await deliveryRows()).toHaveLength(1);
  });
});

test('Echonova jobs are polled and fed as job.completed / job.failed events; a delivered one is not polled', async () => {
  const echonova = new FakeEchonovaApi();
  await echonova.start();
  try {
    const signing = textSecret();
    const config = await h.addProvider('echonova', AdapterKind.ECHONOVA, signing);
    const providers = [h.providerConfig(), config];
    const echonovaPolling = await h.pollingConfig(echonova.apiKey, echonova.jobUrlTemplate, {
      provider: 'echonova',
      horizonSeconds: PollingDefaults.echonova.horizonSeconds,
      recheckSeconds: PollingDefaults.echonova.recheckSeconds,
    });
    const done = echonova.addJob({ status: 'completed', outcome: { result: { transcriptUrl: 'https://files.example/t/1' } } });
    const broken = echonova.addJob({ status: 'failed', outcome: { error: { code: 'UNSUPPORTED_AUDIO' } } });
    const running = echonova.addJob({ status: 'processing' });
    const delivered = echonova.addJob({ status: 'completed' });
    const ledger = h.submissionLedger({ horizonSeconds: { echonova: PollingDefaults.echonova.horizonSeconds } });
    for (const job of [done, broken, running, delivered]) await ledger.recordSubmission({ provider: 'echonova', taskId: job.jobId });

    // One job's event did arrive, signed by Echonova.
    const body = JSON.stringify({ jobId: delivered.jobId, status: 'completed', createdAt: delivered.createdAt });
    const verifier = h.verifier({ providers });
    const event = apiGatewayEvent(body, echonovaHeaders(body, signing, h.clock.seconds, 'job.completed'), { path: '/hooks/echonova' });
    expect(answerOf(await verifier(event))).toMatchObject({ statusCode: 202 });
    h.clock.advance(PollingDefaults.echonova.horizonSeconds * 1000);

    const report = await h.reconciler({ ledger: h.ledger({ configs: providers, polling: [echonovaPolling] }) })();
    expect(report).toMatchObject({ checked: 4, recovered: 2, delivered: 1, stillPending: 1, overdue: 1 });
    expect(echonova.requestsFor(delivered.jobId)).toHaveLength(0);
    expect(await h.row(`echonova#${done.jobId}:job`)).toMatchObject({ recovered: true, meta: { 'x-webhook-event': 'job.completed' } });
    expect(await h.row(`echonova#${broken.jobId}:job`)).toMatchObject({ recovered: true, meta: { 'x-webhook-event': 'job.failed' } });
    expect(await h.submission(`ledger:echonova#${running.jobId}`)).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'pending:processing' });

    await h.takeMessages();
    await h.queue.enqueue([`echonova#${done.jobId}:job`, `echonova#${broken.jobId}:job`]);
    expect(await h.drain(h.processor({ providers }))).toEqual({ received: 2, failed: 0 });
    expect(await h.result(done.jobId, 'echonova')).toMatchObject({ status: 'COMPLETED', taskId: done.jobId });
    expect(await h.result(broken.jobId, 'echonova')).toMatchObject({ status: 'FAILED', taskId: broken.jobId });
  } finally {
    await echonova.stop();
  }
});

test('bounded batches: each run checks at most batchSize due submissions, earliest first', async () => {
  const ids = await submitted(7);
  h.clock.advance(HORIZON_MS);
  const runs: number[] = [];
  for (let run = 0; run < 4; run++) {
    const before = polls();
    await reconcile({ batchSize: 3 });
    runs.push(polls() - before);
  }
  expect(runs).toEqual([3, 3, 1, 0]);
  // All due at once (ties broken by key): each polled exactly once over the runs.
  expect(ids.map((id) => api.requestsFor(id).length)).toEqual([1, 1, 1, 1, 1, 1, 1]);
  expect(await deliveryRows()).toHaveLength(7);
});

describe('a run that dies part-way loses nothing and repeats nothing', () => {
  /** Thrown where a real run would die (timeout, out of memory): nothing after it happens. */
  class RunDied extends Error {
    override readonly name = 'RunDied';
  }

  test('after k settled items, mid-item between the enqueue and the settle', async () => {
    const ids = await submitted(6);
    h.clock.advance(HORIZON_MS);
    const real = h.submissionStore();
    let settles = 0;
    const dying: SubmissionStore = {
      ...bind(real),
      settle: async (...args) => {
        if (++settles > 2) throw new RunDied('died before the third settle');
        return real.settle(...args);
      },
    };
    await expect(reconcile({ submissions: dying })).rejects.toThrow(RunDied);
    expect(await deliveryRows()).toHaveLength(3);
    expect(polls()).toBe(3);

    expect(await reconcile()).toMatchObject({ checked: 4, recovered: 4 });
    // The third was fed before the run died: recognised by its row, not polled again.
    expect(polls()).toBe(6);
    expect(ids.map((id) => api.requestsFor(id).length)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(await deliveryRows()).toHaveLength(6);
    for (const id of ids) expect(await h.submission(subKey(id))).toMatchObject({ state: SubmissionState.RECOVERED });
    // Every recovery counted once, though the dying run had counted two before it died.
    expect(h.capture.metric(MetricName.RECOVERED)).toBe(6);

    const keys = await h.takeMessages();
    expect([...new Set(keys)].sort()).toEqual(ids.map(rowKey).sort());
    expect(keys).toHaveLength(6);
    for (const key of keys) await h.queue.enqueue([key]);
    expect(await h.drain(h.processor())).toEqual({ received: 6, failed: 0 });
    for (const id of ids) expect(await h.row(rowKey(id))).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
  });

  test('between the insert and the enqueue: the sweep enqueues the row, the ledger settles it without polling', async () => {
    const [id] = await submitted(1);
    h.clock.advance(HORIZON_MS);
    const dying: InboxStore = {
      ...bind(h.inbox),
      insert: async (delivery) => {
        await h.inbox.insert(delivery);
        throw new RunDied('died after the insert');
      },
    };
    await expect(h.reconciler({ inbox: dying, ledger: h.ledger({ polling: [polling] }) })()).rejects.toThrow(RunDied);
    expect(await h.row(rowKey(id))).toMatchObject({ status: DeliveryStatus.RECEIVED, recovered: true });
    expect(await h.takeMessages()).toEqual([]);

    h.clock.advance(Defaults.SWEEP_AFTER_SECONDS * 1000 + 1);
    expect(await reconcile()).toMatchObject({ swept: 1, checked: 1, recovered: 1 });
    expect(api.requestsFor(id)).toHaveLength(1);
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    expect(await h.row(rowKey(id))).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
  });
});

test('other poll errors are counted and retried next run; a refused key is read again once', async () => {
  const [id] = await submitted(1);
  h.clock.advance(HORIZON_MS);
  api.inject(500);
  // One reconciler across runs, as a warm Lambda keeps it: its secret cache holds the key.
  const run = h.reconciler({ ledger: h.ledger({ polling: [polling] }) });
  expect(await run()).toMatchObject({ checked: 1, pollErrors: 1, overdue: 1 });
  expect(await h.submission(subKey(id))).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'error:http_500', awaitDueAt: h.clock.now() });
  expect(h.capture.metric(MetricName.POLL_ERRORS)).toBe(1);

  // The key was rotated at the provider and in Secrets Manager: the cached one is refused once.
  const rotated = await rotateApiKey();
  h.clock.advance(60_000);
  expect(await run()).toMatchObject({ checked: 1, recovered: 1, pollErrors: 0 });
  expect(api.requestsFor(id).map((request) => [request.authorized, request.status])).toEqual([
    [true, 500],
    [false, 401],
    [true, 200],
  ]);
  expect(rotated).toBe(api.apiKey);
});

/** A new API key at the fake and in the stand-in's secret, as an operator's rotation leaves them. */
async function rotateApiKey(): Promise<string> {
  const fresh = `al_key_${randomUUID().replace(/-/g, '')}`;
  h.markSensitive(fresh);
  api.rotateApiKey(fresh);
  await secrets.rotate(polling.apiKeySecretId, fresh);
  return fresh;
}

test('a submission recorded with a shorter horizon than its provider’s is postponed to it, not polled and not overdue', async () => {
  const task = api.addTask({ status: 'COMPLETED' });
  h.markSensitive(`answer-${task.id}`);
  await h.submissionLedger({ horizonSeconds: { [PROVIDER]: 60 } }).recordSubmission({ provider: PROVIDER, taskId: task.id });
  const submittedAt = h.clock.now();
  h.clock.advance(60_000);

  expect(await reconcile()).toMatchObject({ checked: 0, rescheduled: 1, overdue: 0 });
  expect(await h.submission(subKey(task.id))).toMatchObject({ awaitDueAt: submittedAt + HORIZON_MS, checks: 0 });
  expect(polls()).toBe(0);

  h.clock.set(submittedAt + HORIZON_MS);
  expect(await reconcile()).toMatchObject({ checked: 1, recovered: 1 });
});

test('a provider without polling: its submissions are checked for a delivery and counted overdue', async () => {
  await h.submissionLedger().recordSubmission({ provider: PROVIDER, taskId: 'tsk_ledger_only' });
  h.clock.advance(HORIZON_MS);
  expect(await h.reconciler({ ledger: h.ledger() })()).toMatchObject({ checked: 1, overdue: 1, stillPending: 0, pollErrors: 0 });
  expect(await h.submission(subKey('tsk_ledger_only'))).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'no_delivery' });
  expect(h.capture.metric(MetricName.OVERDUE)).toBe(1);
  expect(polls()).toBe(0);
});

test('a run close to its Lambda timeout stops before the next poll', async () => {
  await submitted(2);
  h.clock.advance(HORIZON_MS);
  const run = h.reconciler({ ledger: h.ledger({ polling: [polling] }) });
  expect(await run(undefined, { getRemainingTimeInMillis: () => 1_000 })).toMatchObject({ checked: 0, stopped: 'time_budget' });
  expect(polls()).toBe(0);
  expect(await run(undefined, { getRemainingTimeInMillis: () => 60_000 })).toMatchObject({ checked: 2, recovered: 2 });
});

test('an expired submission still awaiting leaves the index as UNKNOWN without a poll', async () => {
  const [id] = await submitted(1, 'QUEUED');
  h.clock.advance(Defaults.RETENTION_DAYS * 86_400 * 1000);
  expect(await reconcile()).toMatchObject({ checked: 1, unknown: 1 });
  expect(await h.submission(subKey(id))).toMatchObject({ state: SubmissionState.UNKNOWN, lastCheck: 'expired' });
  expect(polls()).toBe(0);
});

/** An object with the methods of a class instance, bound, so that a test can replace one of them. */

test('the bundled reconciler, configured only through its environment, polls and recovers', async () => {
  // The bundle runs on the real clock: the task was submitted a horizon ago by that clock.
  const ledger = h.submissionLedger({ now: () => Date.now() - HORIZON_MS - 1_000 });
  const due = api.addTask({ status: 'COMPLETED' });
  h.markSensitive(`answer-${due.id}`);
  await ledger.recordSubmission({ provider: PROVIDER, taskId: due.id, idempotencyKey: due.idempotencyKey! });

  const env = {
    ...h.environmentAs('reconciler', { providers: [h.providerConfig()], polling: [polling] }),
    [Env.INBOX_NAME]: 'test-inbox',
    [Env.INBOX_TABLE]: h.names.inboxTable,
    [Env.WORK_QUEUE_URL]: h.workQueueUrl,
    [Env.PROVIDERS]: JSON.stringify([h.providerConfig()]),
    [Env.POLLING]: JSON.stringify([polling]),
    [Env.POLL_BATCH_SIZE]: '10',
  };
  const bundles = new BundleHost();
  const stdout = bundles.lines;
  try {
    const handler = bundles.handler<(event?: unknown) => Promise<Record<string, unknown>>>('reconciler', env);
    expect(await handler({})).toMatchObject({ checked: 1, recovered: 1, overdue: 0 });
  } finally {
    await bundles.stop();
  }
  expect(await h.row(rowKey(due.id))).toMatchObject({ recovered: true, status: DeliveryStatus.RECEIVED });
  expect(await h.takeMessages()).toEqual([rowKey(due.id)]);
  const emf = stdout.map((line) => JSON.parse(line) as Record<string, unknown>).filter((doc) => '_aws' in doc);
  expect(emf.reduce((sum, doc) => sum + Number(doc[MetricName.RECOVERED] ?? 0), 0)).toBe(1);
  expect(emf.some((doc) => doc[MetricName.OVERDUE] === 0)).toBe(true);
  for (const needle of h.sensitive) expect(stdout.filter((line) => line.includes(needle))).toEqual([]);
});

test('the fake Answerline API answers as the reconciler relies on: Bearer key, task bodies, status counts, 404, 429', async () => {
  const queued = api.addTask({ status: 'QUEUED' });
  api.addTask({ status: ['PROCESSING', 'COMPLETED'] });
  const get = (path: string, key: string = api.apiKey) => fetch(`${api.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  expect((await get(`/v1/async/task/${queued.id}`, '')).status).toBe(401);
  expect((await get(`/v1/async/task/${queued.id}`, 'wrong')).status).toBe(401);
  const answer = await get(`/v1/async/task/${queued.id}`);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({
    task: { id: queued.id, status: 'QUEUED', idempotencyKey: queued.idempotencyKey, createdAt: queued.createdAt },
    credits: { charged: 0, remaining: 500 },
  });
  expect(await (await get('/v1/async/status')).json()).toEqual({ queuedTasks: 1, processingTasks: 1 });
  expect((await get('/v1/async/task/tsk_unknown')).status).toBe(404);
  api.rateLimit({ retryAfterSeconds: 7 });
  const limited = await get(`/v1/async/task/${queued.id}`);
  expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
  expect((await fetch(`${api.url}/v1/async/task/${queued.id}`, { method: 'POST', headers: { authorization: `Bearer ${api.apiKey}` } })).status).toBe(405);
  expect(api.requestsFor(queued.id).map((request) => request.status)).toEqual([401, 401, 200, 429, 405]);
});
