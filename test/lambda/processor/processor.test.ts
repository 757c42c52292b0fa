import { deflateRawSync } from 'node:zlib';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { Defaults, DeliveryStatus, MetricName } from '../../../lib/contract';
import { DynamoDbInboxStore, InboxStore } from '../../../lambda/shared/stores/inbox';
import type { DispatchOutcome, EffectSink } from '../../../lambda/shared/effects/sinks';
import type { AwsCall } from '#twin/testing';
import {
  answerlineBody,
  bind,
  InboxHarness,
  keyOf,
  LEASE_MS,
  PROVIDER,
  SecretsFixture,
  sha256Hex,
  storeUncheckedRow,
  taskIdOf,
} from '../../support/inbox-fixture';

/** Redelivery after a failure takes one visibility timeout: keep it short. */
const MAX_RECEIVE_COUNT = 2;
const QUEUE = { visibilityTimeoutSeconds: 1, maxReceiveCount: MAX_RECEIVE_COUNT };

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'processor', { queue: QUEUE });
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const processor = () => h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT });

/** Delivers each body through the verifier, expecting it accepted. */
async function accept(...bodies: string[]): Promise<void> {
  for (const body of bodies) expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
}

/** Delivers the bodies one at a time, each processed before the next arrives. */
async function deliverInOrder(bodies: string[]): Promise<void> {
  const handler = processor();
  for (const body of bodies) {
    await accept(body);
    expect(await h.drain(handler)).toEqual({ received: 1, failed: 0 });
  }
}

const task = (id: string, idempotencyKey: string, status: string, createdAt: string) => answerlineBody({ id, idempotencyKey, status, createdAt });

describe('results are decided by rule, not by arrival', () => {
  const earlier = task('tsk_a', 'job-1', 'COMPLETED', '2026-09-18T10:00:00.000Z');
  const later = task('tsk_b', 'job-1-r1', 'COMPLETED', '2026-09-18T11:30:00.000Z');

  test.each([
    ['in creation order', [earlier, later], 2],
    ['in reverse order', [later, earlier], 1],
  ])('two results for one job delivered %s: the later-created COMPLETED wins', async (_order, bodies, version) => {
    await deliverInOrder(bodies);

    const result = await h.result('job-1');
    expect(result).toMatchObject({
      pk: `${PROVIDER}#job-1`,
      jobKey: 'job-1',
      taskId: 'tsk_b',
      status: 'COMPLETED',
      createdAt: '2026-09-18T11:30:00.000000000Z',
      eventKey: keyOf(later),
      version,
    });
    expect(JSON.parse(result!.response as string)).toEqual(JSON.parse(later).response);
    expect(await h.resultItems()).toHaveLength(1);
    expect(await h.row(keyOf(earlier))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: version === 1 ? 'superseded' : 'winner' });
    expect(await h.row(keyOf(later))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
  });

  test('a FAILED task created later never replaces a COMPLETED one', async () => {
    const completed = task('tsk_ok', 'job-1', 'COMPLETED', '2026-09-18T10:00:00.000Z');
    const failedLater = task('tsk_fail', 'job-1-r1', 'FAILED', '2026-09-18T12:00:00.000Z');

    await deliverInOrder([completed, failedLater]);

    expect(await h.result('job-1')).toMatchObject({ taskId: 'tsk_ok', status: 'COMPLETED', version: 1 });
    expect(await h.row(keyOf(failedLater))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'superseded' });
  });

  test('a COMPLETED task arriving after a FAILED one replaces it, even when created earlier', async () => {
    const failed = task('tsk_fail', 'job-1-r1', 'FAILED', '2026-09-18T12:00:00.000Z');
    const completed = task('tsk_ok', 'job-1', 'COMPLETED', '2026-09-18T10:00:00.000Z');

    await deliverInOrder([failed, completed]);

    expect(await h.result('job-1')).toMatchObject({ taskId: 'tsk_ok', status: 'COMPLETED', version: 2 });
    expect(h.capture.metric(MetricName.WINNER_CHANGED, PROVIDER)).toBe(2);
  });

  test('a FAILED response is stored as it came', async () => {
    const error = { error: { code: 'QUEUE_WAIT_EXCEEDED', message: 'task waited too long', details: [1, 'two', null] } };
    const failed = answerlineBody({ id: 'tsk_fail', idempotencyKey: 'job-7', status: 'FAILED', response: error });

    await deliverInOrder([failed]);

    const result = await h.result('job-7');
    expect(result).toMatchObject({ taskId: 'tsk_fail', status: 'FAILED', version: 1 });
    expect(JSON.parse(result!.response as string)).toEqual(error);
  });

  test('a task created without an idempotency key is a job of its own', async () => {
    await deliverInOrder([answerlineBody({ id: 'tsk_solo', idempotencyKey: null })]);

    expect(await h.result('~task:tsk_solo')).toMatchObject({ taskId: 'tsk_solo', jobKey: '~task:tsk_solo' });
  });

  test('a job key longer than a DynamoDB key may be is hashed in the results key: the result is decided, the key kept whole', async () => {
    const longKey = `report-${'é'.repeat(2000)}`;
    const [first, second] = [
      answerlineBody({ id: 'tsk_long_a', idempotencyKey: longKey, createdAt: '2026-09-18T10:00:00.000Z' }),
      answerlineBody({ id: 'tsk_long_b', idempotencyKey: `${longKey}-r1`, createdAt: '2026-09-18T11:00:00.000Z' }),
    ];
    await deliverInOrder([first, second]);

    for (const body of [first, second]) expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
    const items = await h.resultItems();
    expect(items).toHaveLength(1);
    // The documented form: the provider, then sha256 of the job key in hex.
    expect(items[0]).toMatchObject({ pk: `${PROVIDER}#sha256:${sha256Hex(longKey)}`, jobKey: longKey, taskId: 'tsk_long_b', version: 2 });
  });
});

describe('one malformed row never blocks its batch', () => {
  // Its task.createdAt is no date: stored before the edge refused such a body.
  const poison = answerlineBody({ id: 'tsk_poison', createdAt: 'not a date' });

  test('the other rows of the batch are processed; the poison row records the error and stays pending', async () => {
    const good = [answerlineBody(), answerlineBody(), answerlineBody()];
    await accept(good[0]);
    await storeUncheckedRow(h, poison);
    await accept(good[1], good[2]);

    // One receive, one batch of four.
    expect(await h.pollOnce(processor())).toEqual({ received: 4, failed: 1 });

    for (const body of good) {
      expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
      expect(await h.result(JSON.parse(body).task.idempotencyKey)).toMatchObject({ taskId: taskIdOf(body) });
    }
    const row = await h.row(keyOf(poison));
    expect(row).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 1, lastError: expect.stringContaining('task.createdAt') });
    expect(row).not.toHaveProperty('leaseOwner');
    expect(row).toHaveProperty('pendingShard');
    expect(await h.resultItems()).toHaveLength(3);
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(3);
    expect(h.capture.metric(MetricName.PROCESSING_FAILED, PROVIDER)).toBe(1);
  });

  test('after maxReceiveCount receives the message is in the DLQ and the row is DEAD with its error', async () => {
    const good = answerlineBody();
    await storeUncheckedRow(h, poison);
    await accept(good);
    const handler = processor();

    await h.pollUntil(handler, async () => (await h.row(keyOf(poison)))?.status === DeliveryStatus.DEAD);
    // The receive after the last failed one moves the message to the DLQ.
    const deadLettered: string[] = [];
    await h.pollUntil(handler, async () => deadLettered.push(...(await h.takeMessages(h.deadLetterQueueUrl))) > 0, 5);

    expect(deadLettered).toEqual([keyOf(poison)]);
    expect(await h.row(keyOf(poison))).toMatchObject({
      status: DeliveryStatus.DEAD,
      attempts: MAX_RECEIVE_COUNT,
      lastError: 'MalformedDeliveryError: task.createdAt: is not an ISO-8601 date and time with a zone',
    });
    expect(await h.row(keyOf(poison))).not.toHaveProperty('pendingShard');
    expect(await h.row(keyOf(good))).toMatchObject({ status: DeliveryStatus.PROCESSED });
    expect(await h.takeMessages()).toEqual([]);
    expect(h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.PROCESSING_FAILED, PROVIDER)).toBe(MAX_RECEIVE_COUNT);
    expect(h.capture.logs('processing failed; dead-lettered')).toHaveLength(1);
  });

  test('a row that dies is counted at once, not when its batch ends (a timeout or crash may end it first)', async () => {
    await storeUncheckedRow(h, poison);
    await accept(answerlineBody());
    // The batch's effects go out after every row is decided, and well before the batch ends.
    let deadCountedAtDispatch: number | undefined;
    const sink: EffectSink = {
      dispatch: async (effects) => {
        deadCountedAtDispatch = h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER);
        return effects.map((): DispatchOutcome => ({ ok: true }));
      },
    };

    expect(await h.pollOnce(h.processor({ maxReceiveCount: 1, effects: h.effects(sink) }))).toEqual({ received: 2, failed: 1 });

    expect(await h.row(keyOf(poison))).toMatchObject({ status: DeliveryStatus.DEAD });
    expect(deadCountedAtDispatch).toBe(1);
    expect(h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(1);
  });

  test('a failed row restarts its pending clock, so the sweep leaves it to the queue’s retries', async () => {
    await storeUncheckedRow(h, poison);
    h.clock.advance(10 * 60_000);
    expect(await h.pollOnce(processor())).toEqual({ received: 1, failed: 1 });
    expect(await h.row(keyOf(poison))).toMatchObject({ status: DeliveryStatus.RECEIVED, pendingSince: h.clock.now() });

    const sweepAfterMs = 5 * 60_000;
    expect(await h.reconciler({ sweepAfterMs })()).toMatchObject({ swept: 0 });
    h.clock.advance(sweepAfterMs + 1);
    expect(await h.reconciler({ sweepAfterMs })()).toMatchObject({ swept: 1 });
  });
});

describe('a row whose invocations die', () => {
  /** `times` invocations claim the row and die before releasing it (a timeout, out of memory, a kill); each lease runs out. */
  async function dieHolding(key: string, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      await h.inbox.claim(key, `dying-worker-${i}`, h.clock.now(), LEASE_MS, MAX_RECEIVE_COUNT);
      h.clock.advance(LEASE_MS + 1);
    }
  }

  test('is DEAD once its attempts are spent, counted like any dead row, and the sweep stops bringing it back', async () => {
    const body = answerlineBody({ idempotencyKey: 'job-dies' });
    await accept(body);
    const key = keyOf(body);
    await dieHolding(key, MAX_RECEIVE_COUNT);
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSING, attempts: MAX_RECEIVE_COUNT });

    // The delivery's own message, still in the queue, finds it out of attempts: whichever message carries it, the cap is the row's.
    const handler = processor();
    expect(await h.pollOnce(handler)).toEqual({ received: 1, failed: 1 });
    // The message fails on each receive until SQS moves it to the DLQ: every DEAD row has its message there.
    const deadLettered: string[] = [];
    await h.pollUntil(handler, async () => deadLettered.push(...(await h.takeMessages(h.deadLetterQueueUrl))) > 0, 6);
    expect(deadLettered).toEqual([expect.stringContaining(key)]);

    const dead = await h.row(key);
    expect(dead).toMatchObject({ status: DeliveryStatus.DEAD, attempts: MAX_RECEIVE_COUNT, lastError: expect.stringMatching(/^AttemptsExhausted: /) });
    expect(dead).not.toHaveProperty('pendingShard');
    expect(dead).not.toHaveProperty('leaseOwner');
    expect(h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER)).toBe(1);
    expect(h.capture.logs('processing failed; dead-lettered')).toMatchObject([{ level: 'ERROR', attempts: MAX_RECEIVE_COUNT }]);
    expect(await h.resultItems()).toEqual([]);
    h.clock.advance(Defaults.SWEEP_AFTER_SECONDS * 1000 + 1);
    expect(await h.reconciler()()).toMatchObject({ swept: 0 });
  });

  test('DEAD is terminal: further messages claim nothing, count nothing and go on to the DLQ; only an operator revives it', async () => {
    const body = answerlineBody({ idempotencyKey: 'job-terminal' });
    await accept(body);
    const key = keyOf(body);
    await dieHolding(key, MAX_RECEIVE_COUNT);
    const handler = processor();
    const deadLettered: string[] = [];
    const untilDeadLettered = (count: number) =>
      h.pollUntil(handler, async () => deadLettered.push(...(await h.takeMessages(h.deadLetterQueueUrl))) >= count, 8);
    await untilDeadLettered(1);
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.DEAD });

    await h.queue.enqueue([key, key]);
    await untilDeadLettered(3);
    expect(deadLettered).toHaveLength(3);
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.DEAD, attempts: MAX_RECEIVE_COUNT });
    expect(h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER)).toBe(1);
    expect(await h.takeMessages()).toEqual([]);

    // The operator's replay (webhook-inbox replay --event) puts it back with a fresh budget of attempts.
    expect(await new DynamoDbInboxStore(h.dynamodb, h.names.inboxTable).revive(key, DeliveryStatus.DEAD, h.clock.now())).toBe(true);
    await h.queue.enqueue([key]);
    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 1 });
  });
});

describe('processing is idempotent and parallel-safe', () => {
  test('a worker that crashed holding the lease: the row is processed exactly once after the lease expires', async () => {
    const body = answerlineBody({ idempotencyKey: 'job-crash' });
    await accept(body);
    const key = keyOf(body);
    // A worker claimed the row and died before completing it.
    expect(await h.inbox.claim(key, 'crashed-worker', h.clock.now(), LEASE_MS, MAX_RECEIVE_COUNT)).toMatchObject({ key, attempts: 1 });
    const handler = processor();

    // While the lease holds, the message is handed back to the queue untouched.
    expect(await h.drain(handler)).toEqual({ received: 1, failed: 1 });
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSING, leaseOwner: 'crashed-worker', attempts: 1 });
    expect(await h.result('job-crash')).toBeUndefined();

    // Past the lease, the redelivered message claims and completes the row.
    h.clock.advance(LEASE_MS + 1);
    await h.pollUntil(handler, async () => (await h.row(key))?.status === DeliveryStatus.PROCESSED);

    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 2, processedAt: h.clock.now() });
    expect(await h.row(key)).not.toHaveProperty('leaseOwner');
    expect(await h.result('job-crash')).toMatchObject({ taskId: taskIdOf(body), version: 1 });
    expect(await h.takeMessages()).toEqual([]);
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(1);
  });

  test('a duplicate message meeting a held lease on its last receive is dropped, not dead-lettered', async () => {
    const body = answerlineBody({ idempotencyKey: 'job-held' });
    await accept(body);
    const key = keyOf(body);
    await h.inbox.claim(key, 'busy-worker', h.clock.now(), LEASE_MS, MAX_RECEIVE_COUNT);
    const handler = processor();

    // Receives up to the last one hand the message back; the last one drops it.
    await h.pollUntil(handler, async () => h.capture.logs('lease held by another worker; message dropped on its last receive').length > 0);
    expect(await h.takeMessages(h.deadLetterQueueUrl)).toEqual([]);
    expect(await h.takeMessages()).toEqual([]);
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSING, leaseOwner: 'busy-worker' });
    expect(h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER)).toBe(0);
  });

  test('a message whose row is gone (expired before it was processed) is counted and warned about, not dropped silently', async () => {
    await h.queue.enqueue([`${PROVIDER}#tsk_expired`]);
    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });
    expect(h.capture.metric(MetricName.MESSAGE_WITHOUT_ROW, PROVIDER)).toBe(1);
    expect(h.capture.logs('message without a row')).toMatchObject([{ level: 'WARN' }]);
    expect(await h.inboxItems()).toEqual([]);
  });

  test('a processed row delivered again on the queue is not processed again', async () => {
    const body = answerlineBody({ idempotencyKey: 'job-again' });
    await deliverInOrder([body]);
    const processed = await h.row(keyOf(body));
    const result = await h.result('job-again');

    h.clock.advance(60_000);
    await h.queue.enqueue([keyOf(body)]);
    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });

    expect(await h.row(keyOf(body))).toEqual(processed);
    expect(await h.result('job-again')).toEqual(result);
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(1);
    expect(h.capture.logs('row already settled')).toMatchObject([{ status: DeliveryStatus.PROCESSED }]);
  });

  test('two processors draining one burst concurrently process every row exactly once', async () => {
    const bodies = Array.from({ length: 30 }, () => answerlineBody());
    await accept(...bodies);
    // Each message twice: at-least-once delivery.
    await h.queue.enqueue(bodies.map(keyOf));

    const reports = await Promise.all([h.drain(processor()), h.drain(processor())]);

    expect(reports.reduce((sum, r) => sum + r.received, 0)).toBeGreaterThanOrEqual(60);
    for (const body of bodies) {
      expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED });
      expect(await h.result(JSON.parse(body).task.idempotencyKey)).toMatchObject({ version: 1 });
    }
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(30);
  });

  test('a non-final status (a row stored before the edge refused those) marks the row processed with no result', async () => {
    const body = answerlineBody({ status: 'PROCESSING', idempotencyKey: 'job-running', response: undefined });

    await storeUncheckedRow(h, body);
    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });

    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'no_final_result' });
    expect(await h.resultItems()).toEqual([]);
  });
});

test('a row written before the compact row format (provider and event id attributes, hex digest, body deflated with its encoding) is processed', async () => {
  const body = answerlineBody({ id: 'tsk_before', idempotencyKey: 'job-before', response: { result: { answer: 'word '.repeat(200) } } });
  const key = keyOf(body);
  const now = h.clock.now();
  // The item exactly as the previous insert wrote it.
  await h.dynamodb.send(
    new PutItemCommand({
      TableName: h.names.inboxTable,
      Item: {
        pk: { S: key },
        sk: { S: 'delivery' },
        provider: { S: PROVIDER },
        eventId: { S: 'tsk_before' },
        body: { B: deflateRawSync(body) },
        bodyEncoding: { S: 'deflate-raw' },
        digest: { S: sha256Hex(body) },
        receivedAt: { N: String(now) },
        meta: { M: { 'content-type': { S: 'application/json' } } },
        status: { S: DeliveryStatus.RECEIVED },
        attempts: { N: '0' },
        expiresAt: { N: String(Math.floor(now / 1000) + 86_400) },
        pendingShard: { S: 'p00' },
        pendingSince: { N: String(now) },
        jobRef: { S: `${PROVIDER}#job-before` },
      },
    }),
  );
  await h.queue.enqueue([key]);
  expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });

  expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', digest: sha256Hex(body) });
  const result = await h.result('job-before');
  expect(result).toMatchObject({ taskId: 'tsk_before', eventKey: key, status: 'COMPLETED' });
  expect(JSON.parse(result!.response as string)).toEqual(JSON.parse(body).response);
});

/** The processor's own inbox store (its role's client), recording how each row was completed. */
function recordingInbox(): { inbox: InboxStore; completions: string[] } {
  const store = new DynamoDbInboxStore(h.as('processor').dynamodb, h.names.inboxTable);
  const completions: string[] = [];
  const inbox: InboxStore = {
    ...bind(store),
    completeLeased: async (rows, now, signal) => {
      completions.push(`batch of ${rows.length}`);
      return store.completeLeased(rows, now, signal);
    },
    complete: async (key, owner, outcome, now) => {
      completions.push('one row');
      return store.complete(key, owner, outcome, now);
    },
  };
  return { inbox, completions };
}

describe('completing a batch', () => {
  /**
   * A row exactly as a completion must leave it: processed, decided, no lease, its body whole, and
   * its pending-index entry as admitted (changing either key would write the index).
   */
  async function expectCompleted(body: string): Promise<void> {
    const row = await h.row(keyOf(body));
    expect(row).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 1, processedAt: h.clock.now(), digest: sha256Hex(body) });
    expect(row).toMatchObject({ pendingShard: expect.stringMatching(/^p\d\d$/), pendingSince: row!.receivedAt });
    for (const gone of ['leaseOwner', 'leaseUntil', 'lastError']) expect(row).not.toHaveProperty(gone);
    expect(await h.inbox.claim(keyOf(body), 'late', h.clock.now() + LEASE_MS * 10, LEASE_MS, MAX_RECEIVE_COUNT)).toBeUndefined();
  }

  test('while the leases hold, one request completes every row of the batch, as one conditional write per row would', async () => {
    const bodies = [1, 2, 3].map((n) => answerlineBody({ idempotencyKey: `job-batch-${n}` }));
    await accept(...bodies);
    const { inbox, completions } = recordingInbox();

    expect(await h.drain(h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, inbox }))).toEqual({ received: 3, failed: 0 });
    expect(completions).toEqual(['batch of 3']);
    for (const body of bodies) await expectCompleted(body);
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(3);
  });

  test('a lease of a timeout that is no whole number of thirds (10 s) is completed by one request too', async () => {
    const bodies = [1, 2].map((n) => answerlineBody({ idempotencyKey: `job-tenth-${n}` }));
    await accept(...bodies);
    const { inbox, completions } = recordingInbox();

    expect(await h.drain(h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, inbox, leaseMs: 10_000 }))).toEqual({ received: 2, failed: 0 });
    expect(completions).toEqual(['batch of 2']);
    expect(h.capture.logs('batched completion failed; completing one by one')).toEqual([]);
  });

  test('with less than a third of the leases left, each row is completed on its own, on condition of its lease', async () => {
    const bodies = [1, 2].map((n) => answerlineBody({ idempotencyKey: `job-slow-${n}` }));
    await accept(...bodies);
    const { inbox, completions } = recordingInbox();
    // Dispatching the effects takes most of the lease.
    const slowSink: EffectSink = {
      dispatch: async (effects) => {
        h.clock.advance(Math.ceil((LEASE_MS * 2) / 3));
        return effects.map((): DispatchOutcome => ({ ok: true }));
      },
    };

    expect(await h.drain(h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, inbox, effects: h.effects(slowSink) }))).toEqual({ received: 2, failed: 0 });
    expect(completions).toEqual(['one row', 'one row']);
    for (const body of bodies) await expectCompleted(body);
  });
});

describe('AWS throttles and answers batches in part (injected by the fault proxy)', () => {
  /** The processor's UpdateItem calls on one row (the claim is the first), or on the results table (the offer). */
  const onRow = (key: string) => (call: AwsCall) => (call.input.Key as { pk?: { S?: string } } | undefined)?.pk?.S === key;

  test('the claim throttled past the SDK’s attempts fails its record alone, counted and logged; the redelivery processes it once', async () => {
    const faults = await h.faults();
    const [throttled, other] = [answerlineBody(), answerlineBody()];
    await accept(throttled, other);
    const fault = faults.throttle({ operations: ['UpdateItem'], where: onRow(keyOf(throttled)), calls: await h.sdkAttempts('dynamodb') });
    const handler = processor();

    expect(await h.pollOnce(handler)).toEqual({ received: 2, failed: 1 });
    expect(fault.injected).toBe(await h.sdkAttempts('dynamodb'));
    // Nothing was taken: the row waits for its message as it was.
    expect(await h.row(keyOf(throttled))).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
    expect(await h.row(keyOf(other))).toMatchObject({ status: DeliveryStatus.PROCESSED });
    expect(h.capture.logs('claim failed')).toMatchObject([{ error: 'ProvisionedThroughputExceededException', receiveCount: 1 }]);
    expect(h.capture.metric(MetricName.PROCESSING_FAILED, PROVIDER)).toBe(1);

    await h.pollUntil(handler, async () => (await h.row(keyOf(throttled)))?.status === DeliveryStatus.PROCESSED);
    expect(await h.row(keyOf(throttled))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 1 });
    expect(h.capture.logs('processed')).toHaveLength(2);
    expect(h.capture.metric(MetricName.WINNER_CHANGED, PROVIDER)).toBe(2);
  });

  test('the result’s offer throttled: the row is released with the error and decided once on redelivery', async () => {
    const faults = await h.faults();
    const body = answerlineBody({ idempotencyKey: 'job-offer-throttled' });
    await accept(body);
    faults.throttle({ operations: ['UpdateItem'], where: (call) => call.input.TableName === h.names.resultsTable, calls: await h.sdkAttempts('dynamodb') });
    const handler = processor();

    expect(await h.pollOnce(handler)).toEqual({ received: 1, failed: 1 });
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 1, lastError: 'ProvisionedThroughputExceededException' });
    expect(await h.result('job-offer-throttled')).toBeUndefined();

    await h.pollUntil(handler, async () => (await h.row(keyOf(body)))?.status === DeliveryStatus.PROCESSED);
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 2 });
    expect(await h.result('job-offer-throttled')).toMatchObject({ taskId: taskIdOf(body), version: 1 });
    expect(h.capture.logs('processed')).toMatchObject([{ offer: 'won' }]);
  });

  test('a batched completion that leaves items unprocessed completes those rows one by one: every row processed once', async () => {
    const faults = await h.faults();
    const bodies = [1, 2, 3].map((n) => answerlineBody({ idempotencyKey: `job-unprocessed-${n}` }));
    await accept(...bodies);
    const fault = faults.refuseEntries({ operations: ['BatchWriteItem'], calls: 1 });
    const { inbox, completions } = recordingInbox();

    expect(await h.drain(h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, inbox }))).toEqual({ received: 3, failed: 0 });
    expect(fault.injected).toBe(1);
    // The second of the batch came back in UnprocessedItems.
    expect(completions).toEqual(['batch of 3', 'one row']);
    for (const body of bodies) expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 1 });
    expect(h.capture.logs('processed')).toHaveLength(3);
  });

  test('a batched completion throttled past the SDK’s attempts falls back to completing each row on its own', async () => {
    const faults = await h.faults();
    const bodies = [1, 2].map((n) => answerlineBody({ idempotencyKey: `job-batch-throttled-${n}` }));
    await accept(...bodies);
    faults.throttle({ operations: ['BatchWriteItem'], calls: await h.sdkAttempts('dynamodb'), error: 'ThrottlingException' });
    const { inbox, completions } = recordingInbox();

    expect(await h.drain(h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, inbox }))).toEqual({ received: 2, failed: 0 });
    expect(completions).toEqual(['batch of 2', 'one row', 'one row']);
    expect(h.capture.logs('batched completion failed; completing one by one')).toMatchObject([{ rows: 2, error: 'ThrottlingException' }]);
    for (const body of bodies) expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
  });
});
