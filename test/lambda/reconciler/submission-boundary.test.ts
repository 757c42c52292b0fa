/**
 * The submission grant is a boundary: a principal that may record submissions (an app granted
 * `grantRecordSubmission`, judged by the local IAM gateway against the policy the construct
 * synthesizes) cannot create anything the sweep, the processor or the ledger treat as a delivery,
 * whatever attributes it writes. And behind that boundary, the sweep, the processor and the
 * ledger refuse any key that is not a delivery row's (`<provider>#<event id>`), however it got
 * into the table or the queue: counted, logged, never processed.
 */
import { AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { AnswerlineLifecycle, Defaults, DeliveryStatus, MetricName, SubmissionState } from '../../../lib/contract';
import { shardOf } from '../../../lambda/shared/runtime/digest';
import { RecordedEvent } from '#twin/testing';
import { expectAccessDenied } from '../../support/iam-fixture';
import { answerlineBody, effectsFixtures, InboxHarness, RETENTION_SECONDS, sha256Hex } from '../../support/inbox-fixture';

const SWEEP_AFTER_MS = Defaults.SWEEP_AFTER_SECONDS * 1000;
/** The sweep's pending index is sharded 16 ways (`p00` … `p15`). */
const PENDING_SHARDS = 16;

const { secrets, fx } = effectsFixtures();
let h: InboxHarness;
let bus: string;
let busSink: ReturnType<InboxHarness['busSink']>['sink'];

beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'boundary', { queue: { visibilityTimeoutSeconds: 1 } });
  ({ bus, sink: busSink } = h.busSink(fx));
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const processor = () => h.processor({ effects: h.effects(busSink) });
const events = (): RecordedEvent[] => fx.eventBridge.eventsOn(bus);

/**
 * An item shaped like a delivery row still waiting to be processed, written here attribute by
 * attribute as a forger would: a COMPLETED Answerline task as its body, RECEIVED, no attempts, an
 * entry in the sweep's pending index pending since `now`.
 */
function pendingDeliveryShape(pk: string, body: string, now: number): Record<string, AttributeValue> {
  return {
    pk: { S: pk },
    sk: { S: 'delivery' },
    body: { B: Buffer.from(body, 'utf8') },
    digest: { B: Buffer.from(sha256Hex(body), 'hex') },
    receivedAt: { N: String(now) },
    meta: { M: {} },
    status: { S: DeliveryStatus.RECEIVED },
    attempts: { N: '0' },
    expiresAt: { N: String(Math.floor(now / 1000) + RETENTION_SECONDS) },
    pendingShard: { S: shardOf(pk, PENDING_SHARDS) },
    pendingSince: { N: String(now) },
  };
}

const forgedBody = (taskId: string, jobKey: string) =>
  answerlineBody({ id: taskId, idempotencyKey: jobKey, status: 'COMPLETED', createdAt: '2026-09-18T10:00:00.000Z', response: { text: 'forged' } });

describe('a principal granted only grantRecordSubmission', () => {
  test('cannot forge a job result: its put of a pending delivery row under a ledger key is refused, and nothing is swept, decided or published', async () => {
    const key = 'ledger:answerline#tsk_forged';
    const item = pendingDeliveryShape(key, forgedBody('tsk_forged', 'job-forged'), h.clock.now());
    // The app's own client, as `submissionLedger()` uses it: judged by the grant's policy from the template.
    const put = await h
      .as('app')
      .dynamodb.send(new PutItemCommand({ TableName: h.names.inboxTable, Item: item }))
      .then(
        () => 'allowed',
        (error: Error) => error.name,
      );
    if (put === 'AccessDeniedException') expectAccessDenied();

    h.clock.advance(SWEEP_AFTER_MS + 1);
    const { swept } = await h.reconciler()();
    const drained = await h.drain(processor());

    expect({ put, swept, drained, result: await h.result('job-forged'), events: events().map((event) => event.detailType) }).toEqual({
      put: 'AccessDeniedException',
      swept: 0,
      drained: { received: 0, failed: 0 },
      result: undefined,
      events: [],
    });
  });

  test('still records every kind of submission the ledger client writes', async () => {
    const ledger = h.submissionLedger();
    expect(
      await ledger.recordSubmission({ provider: 'answerline', taskId: 'tsk_1', idempotencyKey: 'job-1', deadline: h.clock.now() + 3_600_000 }),
    ).toMatchObject({
      outcome: 'recorded',
    });
    expect(await ledger.recordSubmission({ provider: 'answerline', idempotencyKey: 'job-2' })).toMatchObject({ outcome: 'recorded' });
    expect(await ledger.recordSubmission({ provider: 'answerline', taskId: 'tsk_1', idempotencyKey: 'job-1' })).toMatchObject({
      outcome: 'already_recorded',
    });
    expect(await h.submission('ledger:answerline#tsk_1')).toMatchObject({ state: SubmissionState.AWAITING, taskId: 'tsk_1', jobRef: 'answerline#job-1' });
    expect(await h.submission('ledger:answerline#key:job-2')).toMatchObject({ state: SubmissionState.AWAITING, idempotencyKey: 'job-2' });
  });

  test('cannot make a key-only submission look delivered: an item under a ledger key with sort key delivery is no delivery to the ledger', async () => {
    const ledger = h.submissionLedger();
    await ledger.recordSubmission({ provider: 'answerline', idempotencyKey: 'job-k' });
    // Only the attributes a submission has: the grant allows them, and IAM has no condition on the sort key.
    await h.as('app').dynamodb.send(
      new PutItemCommand({
        TableName: h.names.inboxTable,
        Item: { pk: { S: 'ledger:answerline#tsk_decoy' }, sk: { S: 'delivery' }, jobRef: { S: 'answerline#job-k' } },
      }),
    );

    h.clock.advance(AnswerlineLifecycle.HORIZON_SECONDS * 1000 + 1);
    expect(await h.reconciler({ ledger: h.ledger() })()).toMatchObject({ delivered: 0, overdue: 1 });
    expect(await h.submission('ledger:answerline#key:job-k')).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'awaiting_key' });
  });
});

describe('behind the boundary, a key that is not a delivery row’s is refused wherever it turns up', () => {
  /** Written by an administrator's client, bypassing IAM: what only a principal with full access to the table could do. */
  async function writeDirectly(item: Record<string, AttributeValue>): Promise<void> {
    await h.dynamodb.send(new PutItemCommand({ TableName: h.names.inboxTable, Item: item }));
  }

  test('the sweep counts a pending-index entry whose key is not a delivery key, never enqueues it, and moves its watermark past it', async () => {
    const key = 'ledger:answerline#tsk_swept';
    await writeDirectly(pendingDeliveryShape(key, forgedBody('tsk_swept', 'job-swept'), h.clock.now()));
    h.clock.advance(SWEEP_AFTER_MS + 1);

    expect(await h.reconciler()()).toMatchObject({ swept: 0 });
    expect(await h.takeMessages()).toEqual([]);
    expect(h.capture.metric(MetricName.REFUSED_KEYS)).toBe(1);
    expect(h.capture.logs('refused a key that is not a delivery row’s')).toMatchObject([{ level: 'WARN', reason: 'not_a_delivery_key', source: 'sweep' }]);
    // Examined once: the next run does not count it again.
    h.clock.advance(SWEEP_AFTER_MS);
    expect(await h.reconciler()()).toMatchObject({ swept: 0 });
    expect(h.capture.metric(MetricName.REFUSED_KEYS)).toBe(1);
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
  });

  test('the processor counts a work message naming a key that is not a delivery key, drops it, and never claims its item', async () => {
    const key = 'ledger:answerline#tsk_queued';
    await writeDirectly(pendingDeliveryShape(key, forgedBody('tsk_queued', 'job-queued'), h.clock.now()));
    await h.queue.enqueue([key]);

    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
    expect(await h.result('job-queued')).toBeUndefined();
    expect(events()).toEqual([]);
    expect(h.capture.metric(MetricName.REFUSED_KEYS)).toBe(1);
    expect(h.capture.metric(MetricName.PROCESSED)).toBe(0);
    expect(h.capture.logs('refused a key that is not a delivery row’s')).toMatchObject([{ level: 'WARN', reason: 'not_a_delivery_key', source: 'work_queue' }]);
  });
});
