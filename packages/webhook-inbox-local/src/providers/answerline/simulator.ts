/**
 * A simulated Answerline (docs/providers/answerline.md): an async-task service that keeps its own task store (served
 * for polling by the FAKE task API, `fake-api.ts` beside this file) and delivers each finished
 * task as a Standard Webhooks message:
 *
 * - `webhook-id` (`msg_…`) is stable across the retries of one delivery but not signed into the
 *   body; the inbox keys by `task.id` from the signed body;
 * - every attempt is signed anew with its own timestamp: `v1,` base64 HMAC-SHA256 of
 *   `id.timestamp.body` with the `whsec_` secret;
 * - 10 attempts; before each retry it waits a base delay that starts at 5 s and doubles, each wait
 *   shortened by a random amount of up to half (21 to 43 minutes in all); 15 s timeout;
 * - dashboard test deliveries carry `"test": true`;
 * - a resubmitted task's idempotency key is the job's key plus `-rN`.
 *
 * For the local twin's fault-injection run; its records are what the auditor trusts.
 */
import { AnswerlineDelivery, AnswerlineLifecycle, attemptsOf } from '../../../../../lib/contract';
import { FakeAnswerlineApi } from './fake-api';
import { Random } from '../random';
import { DeliveryRecord, providerSender, RetryingSender, RetrySchedule, SignedRequest, SimulatedProviderOptions } from '../sender';
import { standardWebhooksHeaders, unixSeconds } from '../signing';

export const ANSWERLINE = 'answerline';

export const ANSWERLINE_SCHEDULE: RetrySchedule = {
  maxAttempts: attemptsOf(AnswerlineDelivery),
  waitBeforeMs: (attempt, random) => AnswerlineDelivery.maxWaitsSeconds[attempt - 2] * 1000 * (1 - random.next() * 0.5),
  timeoutMs: AnswerlineDelivery.attemptTimeoutSeconds * 1000,
};

/** The longest a delivery can keep retrying, provider time: first attempt to last answer. */
export const ANSWERLINE_RETRY_WINDOW_MS = AnswerlineLifecycle.DELIVERY_RETRY_SECONDS * 1000;
/** A task's run after its start: five minutes from first start to finish. */
export const ANSWERLINE_RUN_MS = AnswerlineLifecycle.RUN_SECONDS * 1000;

export type AnswerlineStatus = 'QUEUED' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

export interface AnswerlineTask {
  readonly id: string;
  readonly idempotencyKey: string;
  /** The logical job: the key without its resubmission suffix (`-r1` … `-r999`). */
  readonly jobKey: string;
  /** As the API reports it (ISO-8601). */
  readonly createdAt: string;
  status: AnswerlineStatus;
  /** The result of a COMPLETED task, the error of a FAILED one. */
  response?: unknown;
  finishedAt?: number;
  /** The task's delivery, once it finished. */
  delivery?: DeliveryRecord;
  /** The task's own random stream: its ids and content depend on the seed and its key only, not on timing. */
  readonly random: Random;
}

export interface SimulatedAnswerlineOptions extends SimulatedProviderOptions {
  /** The task API the app and the reconciler poll. */
  readonly api: FakeAnswerlineApi;
}

export class SimulatedAnswerline {
  readonly tasks = new Map<string, AnswerlineTask>();
  readonly sender: RetryingSender;
  private readonly random: Random;

  constructor(private readonly options: SimulatedAnswerlineOptions) {
    this.random = options.random;
    this.sender = providerSender(ANSWERLINE, ANSWERLINE_SCHEDULE, options, 'answerline-jitter');
  }

  /** `POST /v1/async/task`: a QUEUED task; its id is what the app records in the ledger. */
  createTask(fields: { idempotencyKey: string }): AnswerlineTask {
    const random = this.random.stream(`task/${fields.idempotencyKey}`);
    const id = `tsk_${random.hex(20)}`;
    const task: AnswerlineTask = {
      id,
      idempotencyKey: fields.idempotencyKey,
      jobKey: fields.idempotencyKey.replace(/-r[1-9]\d{0,2}$/, ''),
      createdAt: new Date().toISOString(),
      status: 'QUEUED',
      random,
    };
    this.tasks.set(id, task);
    this.options.api.addTask({ id, idempotencyKey: task.idempotencyKey, createdAt: task.createdAt, status: 'QUEUED' });
    return task;
  }

  startTask(id: string): void {
    const task = this.task(id);
    task.status = 'PROCESSING';
    this.options.api.setStatus(id, 'PROCESSING');
  }

  /**
   * The task finishes: its final status is kept (and served by the API from now on), and its
   * delivery starts. Resolves once the delivery is final.
   */
  finishTask(id: string, status: 'COMPLETED' | 'FAILED'): Promise<DeliveryRecord> {
    const task = this.task(id);
    task.status = status;
    task.finishedAt = Date.now();
    // Content no log line may carry: `pii_` marks it for the auditor's log scan.
    task.response =
      status === 'COMPLETED'
        ? { result: { answer: `pii_${task.random.hex(16)}`, confidence: Math.round(task.random.next() * 100) / 100 } }
        : { error: { code: 'MODEL_ERROR', message: `pii_${task.random.hex(16)}` } };
    this.options.api.setStatus(id, status, task.response);
    const body = Buffer.from(this.options.api.deliveryBody(id));
    const delivery = this.sender.newDelivery({ id: messageId(task.random), eventKey: `${ANSWERLINE}#${id}`, kind: 'result', body });
    task.delivery = delivery;
    return this.sender.deliver(delivery, () => this.signAt(delivery.id, unixSeconds(), body), task.random);
  }

  /** A dashboard test delivery: verified, acknowledged, never stored. */
  sendTestDelivery(label: string): Promise<DeliveryRecord> {
    const random = this.random.stream(`test/${label}`);
    const taskId = `tsk_test_${random.hex(12)}`;
    const body = Buffer.from(
      JSON.stringify({ test: true, task: { id: taskId, status: 'COMPLETED', idempotencyKey: 'dashboard-test', createdAt: new Date().toISOString() } }),
    );
    const delivery = this.sender.newDelivery({ id: messageId(random), eventKey: `${ANSWERLINE}#${taskId}`, kind: 'test', body });
    return this.sender.deliver(delivery, () => this.signAt(delivery.id, unixSeconds(), body));
  }

  /**
   * A contract anomaly: the finished task delivered again under the same `task.id` with other
   * bytes (its response changed). The receiver must keep the first body and quarantine this one.
   */
  sendAltered(id: string): Promise<DeliveryRecord> {
    const task = this.task(id);
    const original = JSON.parse(task.delivery!.body.toString('utf8')) as Record<string, unknown>;
    const body = Buffer.from(JSON.stringify({ ...original, response: { result: { answer: `pii_${task.random.hex(16)}`, altered: true } } }));
    const delivery = this.sender.newDelivery({ id: messageId(task.random), eventKey: `${ANSWERLINE}#${task.id}`, kind: 'altered', body });
    return this.sender.deliver(delivery, () => this.signAt(delivery.id, unixSeconds(), body));
  }

  /** A request as Answerline would sign it at `timestampSeconds` (with `secret`, by default the real one). */
  signAt(messageId: string, timestampSeconds: number, body: Buffer, secret = this.options.secret): SignedRequest {
    return { headers: standardWebhooksHeaders(secret, messageId, timestampSeconds, body), body };
  }

  private task(id: string): AnswerlineTask {
    const task = this.tasks.get(id);
    if (!task) throw new Error(`no task ${id}`);
    return task;
  }
}

/** A Standard Webhooks message id. */
export function messageId(random: Random): string {
  return `msg_${random.hex(24)}`;
}
