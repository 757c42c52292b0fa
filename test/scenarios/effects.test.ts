/**
 * Effects (docs/EFFECTS.md): one per change of a job's winner, one per event of a provider without job
 * semantics, each with a deterministic key, sent through the real EventBridge client to the
 * EventBridge stand-in and through the real Lambda client to the user's function (the Invoke
 * stand-in). The row is the outbox: whatever stops a worker before it completes the row, the
 * retry (SQS redelivery through the real event-source semantics, or the reconciler's sweep)
 * sends the same effect with the same key.
 */
import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { AdapterKind, DeliveryStatus, EffectEvent, MetricName, ProviderRuntimeConfig } from '../../lib/contract';
import {
  answerlineBody,
  answerOf,
  apiGatewayEvent,
  CrashingWorker,
  effectsFixtures,
  INBOX_NAME,
  InboxHarness,
  keyOf,
  LEASE_MS,
  PROVIDER,
  sha256Hex,
  storeUncheckedRow,
  taskIdOf,
} from '../support/inbox-fixture';
import { adaptersFor } from '../../lambda/shared/providers/registry';
import { responseObjectKey } from '../../lambda/shared/stores/body-store';
import { S3BodyStore } from '../../lambda/shared/stores/s3-body-store';
import { SequentialSinks } from '../../lambda/shared/effects/sinks';
import { createBodyBucket, type FaultProxy, RecordedEvent } from '#twin/testing';
import { echonovaHeaders, HeaderMap, stripeHeaders, stripeSecret, textSecret } from '../support/senders';
import { waitFor } from '../support/template-twin-process';
import { createClients, destroyClients } from '../../cli/clients';
import { redrive } from '../../cli/commands/redrive';

const MAX_RECEIVE_COUNT = 3;
const QUEUE = { visibilityTimeoutSeconds: 1, maxReceiveCount: MAX_RECEIVE_COUNT };

const { secrets, fx } = effectsFixtures();
let h: InboxHarness;
let bus: string;
let busSink: ReturnType<InboxHarness['busSink']>['sink'];

beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'effects', { queue: QUEUE });
  ({ bus, sink: busSink } = h.busSink(fx));
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

type Processor = ReturnType<InboxHarness['processor']>;

/** A processor whose effects go on the test's bus (or to `sink`). */
const processor = (overrides: Parameters<InboxHarness['processor']>[0] = {}): Processor =>
  h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(busSink), ...overrides });

/** The events on the test's bus. */
const events = (): RecordedEvent[] => fx.eventBridge.eventsOn(bus);
const effectKeys = (): string[] => events().map((event) => event.detail.effectKey as string);

/** The key of a job's winner, computed here from its definition: sha256 of the JSON array. */
// The documented formulas (docs/EFFECTS.md), written out rather than imported.
const jobKeyOf = (provider: string, jobKey: string, taskId: string, status: string) =>
  sha256Hex(JSON.stringify(['JobResultDecided', INBOX_NAME, provider, jobKey, taskId, status]));
const eventKeyOf = (provider: string, eventId: string) => sha256Hex(JSON.stringify(['WebhookReceived', INBOX_NAME, provider, eventId]));

async function accept(...bodies: string[]): Promise<void> {
  for (const body of bodies) expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
}

async function deliverInOrder(bodies: string[], handler: Processor = processor()): Promise<void> {
  for (const body of bodies) {
    await accept(body);
    expect(await h.drain(handler)).toEqual({ received: 1, failed: 0 });
  }
}

const task = (id: string, idempotencyKey: string, status: string, createdAt: string) => answerlineBody({ id, idempotencyKey, status, createdAt });

const processed = (key: string) => async () => (await h.row(key))?.status === DeliveryStatus.PROCESSED;

describe('one effect per change of a job’s winner', () => {
  test('a result becomes one JobResultDecided event carrying the decision and its deterministic key', async () => {
    const body = task('tsk_1', 'job-1-r2', 'COMPLETED', '2026-09-18T10:00:00.000Z');

    await deliverInOrder([body]);

    const row = await h.row(keyOf(body));
    expect(row).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
    expect(events()).toHaveLength(1);
    const [event] = events();
    expect(event).toMatchObject({ source: EffectEvent.SOURCE, detailType: EffectEvent.JOB_RESULT_DECIDED });
    expect(event.detail).toEqual({
      schemaVersion: 1,
      inbox: 'test-inbox',
      provider: PROVIDER,
      effectKey: jobKeyOf(PROVIDER, 'job-1', 'tsk_1', 'COMPLETED'),
      eventKey: keyOf(body),
      eventId: 'tsk_1',
      receivedAt: new Date(row!.receivedAt as number).toISOString(),
      recovered: false,
      meta: row!.meta,
      jobKey: 'job-1',
      resultVersion: 1,
      winnerOrder: expect.stringMatching(/^2\|2026-09-18T10:00:00\.0+Z\|tsk_1$/),
      taskId: 'tsk_1',
      status: 'COMPLETED',
      createdAt: '2026-09-18T10:00:00.000000000Z',
      response: JSON.parse(body).response,
    });
    expect(event.detail.meta).not.toHaveProperty('webhook-signature');
    expect(h.capture.metric(MetricName.EFFECTS_DISPATCHED, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.EFFECT_FAILURES, PROVIDER)).toBe(0);
    expect(h.capture.logs('processed')).toMatchObject([
      { reconcileResult: 'winner', offer: 'won', effect: 'JobResultDecided', effectKey: event.detail.effectKey },
    ]);
  });

  const earlier = task('tsk_a', 'job-2', 'COMPLETED', '2026-09-18T10:00:00.000Z');
  const later = task('tsk_b', 'job-2-r1', 'COMPLETED', '2026-09-18T11:30:00.000Z');

  test.each([
    ['in creation order: each is the winner in turn, two effects', [earlier, later], ['tsk_a', 'tsk_b']],
    ['in reverse order: the later-created wins at once, one effect', [later, earlier], ['tsk_b']],
  ])('two results for one job delivered %s', async (_order, bodies, winners) => {
    await deliverInOrder(bodies);

    expect(effectKeys()).toEqual(winners.map((taskId) => jobKeyOf(PROVIDER, 'job-2', taskId, 'COMPLETED')));
    expect(events().map((event) => event.detail.taskId)).toEqual(winners);
    expect(h.capture.metric(MetricName.WINNER_CHANGED, PROVIDER)).toBe(winners.length);
    expect(h.capture.metric(MetricName.EFFECTS_DISPATCHED, PROVIDER)).toBe(winners.length);
  });

  test('each decision carries its result version and winner order: a consumer keeping the greatest keeps the newest, whatever order the events reach it in', async () => {
    await deliverInOrder([earlier, later]);

    const decided = events().map((event) => event.detail);
    expect(decided.map((detail) => [detail.taskId, detail.resultVersion])).toEqual([
      ['tsk_a', 1],
      ['tsk_b', 2],
    ]);
    // The rule's order as text: rank, creation time, task id.
    expect(decided.map((detail) => detail.winnerOrder)).toEqual([
      expect.stringMatching(/^2\|2026-09-18T10:00:00\.0+Z\|tsk_a$/),
      expect.stringMatching(/^2\|2026-09-18T11:30:00\.0+Z\|tsk_b$/),
    ]);
    const keepNewest = (arrivals: typeof decided) =>
      arrivals.reduce((kept, detail) => (Number(detail.resultVersion) > Number(kept.resultVersion) ? detail : kept));
    expect(keepNewest([...decided].reverse()).taskId).toBe('tsk_b');
    expect(String(decided[1].winnerOrder) > String(decided[0].winnerOrder)).toBe(true);
  });

  test('a FAILED task created later never replaces a COMPLETED one, and sends nothing', async () => {
    await deliverInOrder([task('tsk_ok', 'job-3', 'COMPLETED', '2026-09-18T10:00:00.000Z'), task('tsk_no', 'job-3-r1', 'FAILED', '2026-09-18T12:00:00.000Z')]);

    expect(events().map((event) => [event.detail.taskId, event.detail.status])).toEqual([['tsk_ok', 'COMPLETED']]);
  });

  test('a processed row delivered again, and a non-final status (a row stored before the edge refused those), send nothing', async () => {
    const body = task('tsk_4', 'job-4', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    const running = answerlineBody({ status: 'PROCESSING', idempotencyKey: 'job-5', response: undefined });
    await deliverInOrder([body]);
    await storeUncheckedRow(h, running);
    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });
    await h.queue.enqueue([keyOf(body), keyOf(running)]);
    expect(await h.drain(processor())).toEqual({ received: 2, failed: 0 });

    expect(effectKeys()).toEqual([jobKeyOf(PROVIDER, 'job-4', 'tsk_4', 'COMPLETED')]);
    expect(await h.row(keyOf(running))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'no_final_result' });
  });

  test('the effects of one SQS batch go out in one PutEvents call', async () => {
    const bodies = Array.from({ length: 10 }, () => answerlineBody());
    await accept(...bodies);

    expect(await h.pollOnce(processor())).toEqual({ received: 10, failed: 0 });

    expect(fx.eventBridge.callsTo(bus)).toEqual([{ buses: [bus], entries: 10, bytes: expect.any(Number), accepted: 10, failed: 0 }]);
    expect(new Set(effectKeys())).toEqual(new Set(bodies.map((body) => jobKeyOf(PROVIDER, JSON.parse(body).task.idempotencyKey, taskIdOf(body), 'COMPLETED'))));
  });
});

describe('the row is the outbox: an intent is never lost and never becomes a second intent', () => {
  test('PutEvents fails: the row is released with the error, redelivered, and its effect sent once with the same key', async () => {
    const body = task('tsk_r', 'job-r', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    await accept(body);
    fx.eventBridge.failNextCalls(1);
    const handler = processor();

    expect(await h.pollOnce(handler)).toEqual({ received: 1, failed: 1 });
    // Decided, not sent: the winner is stored, the row is pending with the error.
    expect(await h.result('job-r')).toMatchObject({ taskId: 'tsk_r', version: 1 });
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 1, lastError: expect.stringContaining('InternalException') });
    expect(events()).toEqual([]);

    await h.pollUntil(handler, processed(keyOf(body)));

    expect(effectKeys()).toEqual([jobKeyOf(PROVIDER, 'job-r', 'tsk_r', 'COMPLETED')]);
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 2 });
    expect(await h.row(keyOf(body))).not.toHaveProperty('lastError');
    expect(await h.result('job-r')).toMatchObject({ version: 1 });
    // The retry found its own earlier win: the winner changed once, not twice.
    expect(h.capture.logs('processed')).toMatchObject([{ offer: 'already_won' }]);
    expect(h.capture.metric(MetricName.WINNER_CHANGED, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.EFFECT_FAILURES, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.EFFECTS_DISPATCHED, PROVIDER)).toBe(1);
  });

  test('a partial PutEvents failure (FailedEntryCount) retries only the rows whose entries failed', async () => {
    const bodies = Array.from({ length: 3 }, () => answerlineBody());
    await accept(...bodies);
    fx.eventBridge.failNextEntries(1);
    const handler = processor();

    expect(await h.pollOnce(handler)).toEqual({ received: 3, failed: 1 });
    const pending = [];
    for (const body of bodies) if ((await h.row(keyOf(body)))?.status !== DeliveryStatus.PROCESSED) pending.push(body);
    expect(pending).toHaveLength(1);
    expect(await h.row(keyOf(pending[0]))).toMatchObject({
      status: DeliveryStatus.RECEIVED,
      lastError: 'EffectDispatchError: PutEvents entry failed: InternalFailure',
    });

    await h.pollUntil(handler, processed(keyOf(pending[0])));

    const keys = effectKeys();
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
    expect(fx.eventBridge.callsTo(bus)).toMatchObject([
      { entries: 3, accepted: 2, failed: 1 },
      { entries: 1, accepted: 1, failed: 0 },
    ]);
    expect(h.capture.metric(MetricName.EFFECT_FAILURES, PROVIDER)).toBe(1);
  });

  test('a worker dies after deciding, before sending: past its lease the retry sends the effect exactly once', async () => {
    const body = task('tsk_c', 'job-c', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    await accept(body);
    const worker = new CrashingWorker(h.inbox);

    await h.pollOnce(processor({ inbox: worker.inbox(), effects: h.effects(worker.crashBeforeSending()) }));

    // What the dead worker left: the decision, its lease, no effect.
    expect(await h.result('job-c')).toMatchObject({ taskId: 'tsk_c', eventKey: keyOf(body) });
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSING, attempts: 1 });
    expect(events()).toEqual([]);

    const handler = processor();
    // While the lease holds, the redelivered message goes back to the queue.
    await h.pollUntil(handler, async () => h.capture.logs('lease held by another worker').length > 0);
    expect(events()).toEqual([]);
    h.clock.advance(LEASE_MS + 1);
    await h.pollUntil(handler, processed(keyOf(body)));

    expect(effectKeys()).toEqual([jobKeyOf(PROVIDER, 'job-c', 'tsk_c', 'COMPLETED')]);
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 2 });
    expect(await h.takeMessages()).toEqual([]);
  });

  test('a decided row whose message is gone is found by the reconciler’s sweep and its effect sent', async () => {
    const body = task('tsk_s', 'job-s', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    await accept(body);
    const worker = new CrashingWorker(h.inbox);
    await h.pollOnce(processor({ inbox: worker.inbox(), effects: h.effects(worker.crashBeforeSending()) }));
    // The message is lost too (say, dropped on its last receive while the dead worker's lease held):
    // once its visibility timeout runs out, it is taken off the queue.
    await waitFor('the crashed worker’s message back on the queue', async () => ((await h.takeMessages()).length > 0 ? true : undefined));

    h.clock.advance(10 * 60_000);
    expect(await h.reconciler()()).toMatchObject({ swept: 1 });
    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });

    expect(effectKeys()).toEqual([jobKeyOf(PROVIDER, 'job-s', 'tsk_s', 'COMPLETED')]);
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
  });

  test('a worker dies after sending, before completing: the retry repeats the same effect, byte for byte', async () => {
    const body = task('tsk_d', 'job-d', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    await accept(body);
    const worker = new CrashingWorker(h.inbox);

    await h.pollOnce(processor({ inbox: worker.inbox(), effects: h.effects(worker.crashAfterSending(busSink)) }));
    expect(events()).toHaveLength(1);
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSING });

    h.clock.advance(LEASE_MS + 1);
    await h.pollUntil(processor(), processed(keyOf(body)));

    // At least once: a consumer sees the same intent twice, and deduplicates it by effectKey.
    const [first, second] = events();
    expect(events()).toHaveLength(2);
    expect(second.detail.effectKey).toBe(jobKeyOf(PROVIDER, 'job-d', 'tsk_d', 'COMPLETED'));
    expect(second.detailText).toBe(first.detailText);
    expect(second.eventId).not.toBe(first.eventId);
  });
});

describe('EventBridge throttles and answers in part, the store throttles the completion (injected by the fault proxy)', () => {
  /** A bus whose PutEvents go through the fault proxy, with the SDK's own attempts. */
  async function throughFaults(): Promise<{ faults: FaultProxy; handler: Processor; eventsOnBus: () => RecordedEvent[] }> {
    const faults = await h.faults();
    const { bus: faultedBus, sink } = h.busSink(fx, await h.sdkAttempts('eventBridge'));
    return { faults, handler: processor({ effects: h.effects(sink) }), eventsOnBus: () => fx.eventBridge.eventsOn(faultedBus) };
  }

  test('PutEvents throttled past the SDK’s attempts: nothing sent, every row released; the redelivery sends each effect once', async () => {
    const { faults, handler, eventsOnBus } = await throughFaults();
    const bodies = [task('tsk_t1', 'job-t1', 'COMPLETED', '2026-09-18T10:00:00.000Z'), task('tsk_t2', 'job-t2', 'COMPLETED', '2026-09-18T10:00:00.000Z')];
    await accept(...bodies);
    const fault = faults.throttle({ operations: ['PutEvents'], calls: await h.sdkAttempts('eventBridge') });

    expect(await h.pollOnce(handler)).toEqual({ received: 2, failed: 2 });
    expect(fault.injected).toBe(await h.sdkAttempts('eventBridge'));
    expect(eventsOnBus()).toEqual([]);
    for (const body of bodies)
      expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 1, lastError: 'ThrottlingException' });
    expect(h.capture.metric(MetricName.EFFECT_FAILURES, PROVIDER)).toBe(2);

    for (const body of bodies) await h.pollUntil(handler, processed(keyOf(body)));
    expect(
      eventsOnBus()
        .map((event) => event.detail.effectKey)
        .sort(),
    ).toEqual([jobKeyOf(PROVIDER, 'job-t1', 'tsk_t1', 'COMPLETED'), jobKeyOf(PROVIDER, 'job-t2', 'tsk_t2', 'COMPLETED')].sort());
    expect(h.capture.logs('processed')).toMatchObject([{ offer: 'already_won' }, { offer: 'already_won' }]);
  });

  test('PutEvents answers an entry failed (FailedEntryCount): only its row is retried, and every effect goes out once', async () => {
    const { faults, handler, eventsOnBus } = await throughFaults();
    const bodies = [1, 2, 3].map((n) => task(`tsk_f${n}`, `job-f${n}`, 'COMPLETED', '2026-09-18T10:00:00.000Z'));
    await accept(...bodies);
    faults.refuseEntries({ operations: ['PutEvents'], calls: 1 });

    expect(await h.pollOnce(handler)).toEqual({ received: 3, failed: 1 });
    const released = [];
    for (const body of bodies) if ((await h.row(keyOf(body)))?.status !== DeliveryStatus.PROCESSED) released.push(body);
    expect(released).toHaveLength(1);
    expect(await h.row(keyOf(released[0]))).toMatchObject({ lastError: 'EffectDispatchError: PutEvents entry failed: ThrottlingException' });

    await h.pollUntil(handler, processed(keyOf(released[0])));
    const keys = eventsOnBus().map((event) => event.detail.effectKey);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
  });

  test('the completion throttled after the effect went out: the row is released, and the retry repeats the same intent under the same key, decided once', async () => {
    const { faults, handler, eventsOnBus } = await throughFaults();
    const body = task('tsk_ct', 'job-ct', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    await accept(body);
    // A lone row is completed by its conditional UpdateItem, the one that sets processedAt.
    faults.throttle({
      operations: ['UpdateItem'],
      where: (call) => String(call.input.UpdateExpression).includes('#processedAt'),
      calls: await h.sdkAttempts('dynamodb'),
    });

    expect(await h.pollOnce(handler)).toEqual({ received: 1, failed: 1 });
    expect(eventsOnBus()).toHaveLength(1);
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED, lastError: 'ProvisionedThroughputExceededException' });

    await h.pollUntil(handler, processed(keyOf(body)));
    // At least once, as docs/EFFECTS.md says: the same key twice, one decision, one completion.
    expect(eventsOnBus().map((event) => event.detail.effectKey)).toEqual([
      jobKeyOf(PROVIDER, 'job-ct', 'tsk_ct', 'COMPLETED'),
      jobKeyOf(PROVIDER, 'job-ct', 'tsk_ct', 'COMPLETED'),
    ]);
    expect(await h.result('job-ct')).toMatchObject({ version: 1 });
    expect(h.capture.logs('processed')).toHaveLength(1);
    expect(h.capture.metric(MetricName.WINNER_CHANGED, PROVIDER)).toBe(1);
  });
});

describe('the user’s own processing function', () => {
  test('receives the normalized event and its effect key, in the EventBridge event shape', async () => {
    const { functionName, sink } = h.functionSink(fx, () => ({ ok: true }));
    const body = task('tsk_u', 'job-u', 'COMPLETED', '2026-09-18T10:00:00.000Z');

    await deliverInOrder([body], processor({ effects: h.effects(new SequentialSinks([sink, busSink])) }));

    const invocations = fx.invocationsOf(functionName);
    expect(invocations).toHaveLength(1);
    expect(fx.lambda.invocations.at(-1)?.invocationType).toBe('RequestResponse');
    const row = await h.row(keyOf(body));
    expect(invocations[0]).toEqual({
      source: 'cdk-webhook-inbox',
      'detail-type': 'JobResultDecided',
      time: new Date(row!.receivedAt as number).toISOString(),
      detail: expect.objectContaining({
        effectKey: jobKeyOf(PROVIDER, 'job-u', 'tsk_u', 'COMPLETED'),
        provider: PROVIDER,
        jobKey: 'job-u',
        taskId: 'tsk_u',
        status: 'COMPLETED',
        response: JSON.parse(body).response,
      }),
    });
    // The bus carries the very same detail, after the function accepted it.
    expect(events().map((event) => event.detail)).toEqual([(invocations[0] as { detail: unknown }).detail]);
  });

  test('fails twice, then succeeds: invoked three times with one key, the bus event sent once, after the success', async () => {
    let calls = 0;
    const { functionName, sink } = h.functionSink(fx, () => {
      calls += 1;
      if (calls <= 2) throw Object.assign(new Error('downstream is down'), { name: 'DownstreamUnavailable' });
      return { ok: true };
    });
    const body = task('tsk_f', 'job-f', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    await accept(body);

    await h.pollUntil(processor({ effects: h.effects(new SequentialSinks([sink, busSink])) }), processed(keyOf(body)));

    const keys = fx.invocationsOf(functionName).map((payload) => (payload as { detail: { effectKey: string } }).detail.effectKey);
    expect(keys).toEqual(Array(3).fill(jobKeyOf(PROVIDER, 'job-f', 'tsk_f', 'COMPLETED')));
    expect(effectKeys()).toEqual([keys[0]]);
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 3 });
    expect(h.capture.metric(MetricName.EFFECT_FAILURES, PROVIDER)).toBe(2);
    expect(h.capture.metric(MetricName.EFFECTS_DISPATCHED, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.WINNER_CHANGED, PROVIDER)).toBe(1);
  });

  test('fails every time: after maxReceiveCount the message is in the DLQ and the row DEAD with its error, body intact', async () => {
    const { functionName, sink } = h.functionSink(fx, () => {
      throw Object.assign(new Error(`secret-ish detail ${randomUUID()}`), { name: 'DownstreamUnavailable' });
    });
    const body = task('tsk_x', 'job-x', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    await accept(body);
    const handler = processor({ effects: h.effects(sink) });

    await h.pollUntil(handler, async () => (await h.row(keyOf(body)))?.status === DeliveryStatus.DEAD);
    const deadLettered: string[] = [];
    await h.pollUntil(handler, async () => deadLettered.push(...(await h.takeMessages(h.deadLetterQueueUrl))) > 0, 5);

    expect(deadLettered).toEqual([keyOf(body)]);
    const row = await h.row(keyOf(body));
    expect(row).toMatchObject({
      status: DeliveryStatus.DEAD,
      attempts: MAX_RECEIVE_COUNT,
      // Only the error type: the function's message could carry content.
      lastError: 'EffectDispatchError: the processing function failed (Unhandled: DownstreamUnavailable)',
      digest: sha256Hex(body),
    });
    expect((row!.body as Buffer).toString('utf8')).toBe(body);
    // Decided all along: the result is stored; only its effect is owed (a redrive sends it).
    expect(await h.result('job-x')).toMatchObject({ taskId: 'tsk_x', version: 1 });
    expect(fx.invocationsOf(functionName)).toHaveLength(MAX_RECEIVE_COUNT);
    expect(h.capture.metric(MetricName.EFFECT_FAILURES, PROVIDER)).toBe(MAX_RECEIVE_COUNT);
    expect(h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.EFFECTS_DISPATCHED, PROVIDER)).toBe(0);
  });
});

describe('a decided winner whose effect never went out', () => {
  test('is sent by a redrive: an Echonova job.completed nested 6,000 deep, stored before the edge refused such bodies, decided on its first attempt, its attempts spent without an effect', async () => {
    const config = await h.addProvider('echonova', AdapterKind.ECHONOVA, textSecret());
    const jobId = `job_${randomUUID()}`;
    const body = `{"jobId":"${jobId}","status":"completed","createdAt":"2026-09-18T10:00:00.000Z","transcript":${'['.repeat(6_000)}${']'.repeat(6_000)}}`;
    h.markSensitive(body);
    // The row as a verifier that acknowledged the delivery wrote it (the edge now answers it 400 body_too_deep).
    const key = `echonova#${jobId}:job`;
    const bytes = Buffer.from(body, 'utf8');
    const receivedAt = h.clock.now();
    const meta = { 'x-webhook-event': 'job.completed', 'x-webhook-timestamp': String(h.clock.seconds) };
    await h.inbox.insert({
      provider: 'echonova',
      eventId: `${jobId}:job`,
      body: bytes,
      digest: sha256Hex(bytes),
      receivedAt,
      meta,
      expiresAt: h.clock.seconds + 86_400,
    });
    await h.queue.enqueue([key]);

    // Every attempt decides the winner and sends nothing (the processing function fails), until the row is DEAD.
    const { sink: failing } = h.functionSink(fx, () => {
      throw Object.assign(new Error('downstream down'), { name: 'DownstreamUnavailable' });
    });
    const failingProcessor = processor({ providers: [config], effects: h.effects(failing) });
    await h.pollUntil(failingProcessor, async () => (await h.row(key))?.status === DeliveryStatus.DEAD);
    expect(await h.result(jobId, 'echonova')).toMatchObject({ taskId: jobId, version: 1 });
    expect(events()).toEqual([]);

    // The operator's redrive (the ops CLI's): the message back from the DLQ, the row revived.
    const clients = createClients();
    try {
      let moved = 0;
      await h.pollUntil(failingProcessor, async () => (moved += (await redrive(clients, h.opsConfig(), { now: h.clock.now, waitTimeSeconds: 1 })).moved) > 0);
      expect(moved).toBe(1);
    } finally {
      destroyClients(clients);
    }
    expect(await h.drain(processor({ providers: [config] }))).toEqual({ received: 1, failed: 0 });

    // The stored decision stands and its effect goes out, the content too deep to re-serialize as its text.
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({
      detailType: 'JobResultDecided',
      detail: { eventKey: key, effectKey: jobKeyOf('echonova', jobId, jobId, 'COMPLETED'), resultVersion: 1, response: body },
    });
    expect(h.capture.logs('processed').at(-1)).toMatchObject({ offer: 'already_won' });
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
  });
});

describe('providers without job semantics: one effect per event', () => {
  let configs: ProviderRuntimeConfig[];
  let secretOf: Record<string, string>;

  beforeEach(async () => {
    secretOf = { stripe: stripeSecret(), echonova: textSecret() };
    configs = [await h.addProvider('stripe', AdapterKind.STRIPE, secretOf.stripe), await h.addProvider('echonova', AdapterKind.ECHONOVA, secretOf.echonova)];
  });

  async function deliverAs(provider: string, body: string, headers: HeaderMap): Promise<void> {
    h.markSensitive(body);
    const answer = answerOf(await h.verifier({ providers: configs })(apiGatewayEvent(body, headers, { path: `/hooks/${provider}` })));
    expect(answer).toMatchObject({ statusCode: 202 });
    expect(await h.drain(processor({ providers: configs }))).toEqual({ received: 1, failed: 0 });
  }

  test('a Stripe event becomes one WebhookReceived event with its payload; a redelivery of the message sends nothing', async () => {
    const id = `evt_${randomUUID().replace(/-/g, '')}`;
    const body = JSON.stringify({ id, object: 'event', type: 'charge.succeeded', data: { object: { id: 'ch_1', amount: 500, note: `note-${randomUUID()}` } } });

    await deliverAs('stripe', body, stripeHeaders(body, h.clock.seconds, secretOf.stripe));
    await h.queue.enqueue([`stripe#${id}`]);
    expect(await h.drain(processor({ providers: configs }))).toEqual({ received: 1, failed: 0 });

    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({
      detailType: 'WebhookReceived',
      detail: { provider: 'stripe', eventId: id, eventKey: `stripe#${id}`, effectKey: eventKeyOf('stripe', id), payload: JSON.parse(body) },
    });
    expect(events()[0].detail).not.toHaveProperty('jobKey');
    expect(await h.row(`stripe#${id}`)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'event' });
  });

  test('Echonova: job.completed is a job result, spending.* an event, job.started (not final: answered at the edge, never stored) nothing', async () => {
    const jobId = `job_${randomUUID()}`;
    const started = JSON.stringify({ jobId, status: 'processing', createdAt: '2026-09-18T10:00:00.000Z' });
    const completed = JSON.stringify({ jobId, status: 'completed', createdAt: '2026-09-18T10:00:00.000Z', transcript: `transcript-${randomUUID()}` });
    const spending = JSON.stringify({ apiKeyId: 'key_1', billingCycle: '2026-09', percent: 80 });
    const sign = (body: string, event: string) => echonovaHeaders(body, secretOf.echonova, h.clock.seconds, event);

    h.markSensitive(started);
    const startedAnswer = answerOf(
      await h.verifier({ providers: configs })(apiGatewayEvent(started, sign(started, 'job.started'), { path: '/hooks/echonova' })),
    );
    expect(startedAnswer).toMatchObject({ statusCode: 200, result: 'not_final' });
    await deliverAs('echonova', completed, sign(completed, 'job.completed'));
    await deliverAs('echonova', spending, sign(spending, 'spending.threshold'));

    expect(events().map((event) => [event.detailType, event.detail.effectKey])).toEqual([
      ['JobResultDecided', jobKeyOf('echonova', jobId, jobId, 'COMPLETED')],
      ['WebhookReceived', eventKeyOf('echonova', 'key_1:spending.threshold:2026-09')],
    ]);
    expect(await h.row(`echonova#${jobId}:job`)).toMatchObject({ outcome: 'winner' });
    expect(events()[1].detail.meta).toMatchObject({ 'x-webhook-event': 'spending.threshold' });
  });

  test('the reportsJob rule of each adapter', () => {
    const adapters = adaptersFor([h.providerConfig(), ...configs]);
    expect(adapters.get(PROVIDER)!.reportsJob({})).toBe(true);
    expect(adapters.get('echonova')!.reportsJob({ 'x-webhook-event': 'job.failed' })).toBe(true);
    expect(adapters.get('echonova')!.reportsJob({ 'x-webhook-event': 'spending.exhausted' })).toBe(false);
    expect(adapters.get('stripe')!.reportsJob({})).toBe(false);
  });
});

describe('content too large for an event travels by reference to the body bucket', () => {
  const s3 = new S3Client({ forcePathStyle: true });
  let bodies: S3BodyStore;
  afterAll(() => s3.destroy());
  beforeEach(async () => {
    await createBodyBucket(s3, h.names);
    bodies = new S3BodyStore(s3, h.names.bodyBucket);
  });

  /** An Answerline delivery whose answer is `bytes` of text. */
  const withAnswer = (bytes: number, idempotencyKey: string) =>
    answerlineBody({ idempotencyKey, response: { result: { answer: `answer-${randomUUID()} ${'x'.repeat(bytes)}` } } });

  test('a 1 MB result: the event names the result’s object instead of carrying it', async () => {
    const body = withAnswer(1_000_000, 'job-large');
    const verifier = h.verifier({ bodies, inlineBodyBytes: 64 * 1024 });
    expect(await h.deliver(body, verifier)).toMatchObject({ statusCode: 202 });

    await h.drain(processor({ bodies: h.bodyStore('processor'), inlineBodyBytes: 64 * 1024, effects: h.effects(busSink, { bodyBucket: h.names.bodyBucket }) }));

    const result = await h.result('job-large');
    expect(events()).toHaveLength(1);
    const { detail } = events()[0];
    expect(detail).toMatchObject({ responseRef: result!.responseRef, bodyBucket: h.names.bodyBucket, taskId: taskIdOf(body) });
    expect(detail).not.toHaveProperty('response');
    expect((await bodies.get(detail.responseRef as string)).toString('utf8')).toBe(JSON.stringify(JSON.parse(body).response));
    expect(fx.eventBridge.callsTo(bus).map((call) => call.bytes)).toEqual([expect.any(Number)]);
    expect(fx.eventBridge.callsTo(bus)[0].bytes).toBeLessThan(4096);
  });

  test('a result kept inline in the results table but too large for an event is put in the bucket for it', async () => {
    const body = withAnswer(150_000, 'job-mid');
    await accept(body);
    // The results table keeps up to 300 KB inline; an event carries at most 64 KB of it.
    await h.drain(processor({ bodies: h.bodyStore('processor'), inlineBodyBytes: 300_000, effects: h.effects(busSink, { bodyBucket: h.names.bodyBucket }) }));

    const response = JSON.stringify(JSON.parse(body).response);
    expect(await h.result('job-mid')).toMatchObject({ response });
    const { detail } = events()[0];
    expect(detail).toMatchObject({ responseRef: responseObjectKey(PROVIDER, sha256Hex(response)), bodyBucket: h.names.bodyBucket });
    expect((await bodies.get(detail.responseRef as string)).toString('utf8')).toBe(response);
  });

  test('without a body bucket such content cannot be sent: the row fails with the reason, and is kept', async () => {
    const body = withAnswer(150_000, 'job-nowhere');
    await accept(body);

    expect(await h.pollOnce(processor())).toEqual({ received: 1, failed: 1 });

    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED, lastError: expect.stringContaining('no body bucket is configured') });
    expect(events()).toEqual([]);
  });

  test('ten 60 KB effects in one batch are split into PutEvents calls of at most 256 KB each', async () => {
    const bodies10 = Array.from({ length: 10 }, (_, i) => withAnswer(60_000, `job-split-${i}`));
    await accept(...bodies10);

    expect(await h.pollOnce(processor())).toEqual({ received: 10, failed: 0 });

    const calls = fx.eventBridge.callsTo(bus);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.every((call) => call.bytes <= 256 * 1024 && call.failed === 0 && call.error === undefined)).toBe(true);
    expect(calls.reduce((sum, call) => sum + call.entries, 0)).toBe(10);
    expect(new Set(effectKeys()).size).toBe(10);
    // Each carries its response inline: under the per-piece limit.
    expect(events().every((event) => typeof event.detail.response === 'object')).toBe(true);
  });
});
