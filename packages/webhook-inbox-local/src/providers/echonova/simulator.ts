/**
 * A simulated Echonova (docs/providers/echonova.md): jobs kept in its own store (served for polling by the FAKE job
 * API, `fake-api.ts` beside this file), and one webhook subscribed to `job.completed` and
 * `job.failed`:
 *
 * - each attempt takes a fresh Unix timestamp and signs `timestamp.body` (hex HMAC-SHA256); the
 *   body of every retry is the same, byte for byte; there is no delivery id;
 * - 3 attempts, 5 s then 10 s apart, 10 s timeout; any non-2xx, timeout or connection error fails;
 * - 5 failed deliveries in a row (after all their attempts) DISABLE the webhook: events that fire
 *   while it is disabled are skipped and never sent later, even once it is enabled again (only
 *   polling finds those jobs); enabling it resets the counter; a delivered one resets it too.
 *
 * For the local twin's fault-injection run; its records are what the auditor trusts.
 */
import { ECHONOVA_DISABLE_AFTER_FAILURES, EchonovaDelivery, attemptsOf, retryWindowSeconds } from '../../../../../lib/contract';
import { FakeEchonovaApi } from './fake-api';
import { Random } from '../random';
import { DeliveryRecord, providerSender, RetryingSender, RetrySchedule, SignedRequest, SimulatedProviderOptions } from '../sender';
import { echonovaHeaders, unixSeconds } from '../signing';

export const ECHONOVA = 'echonova';

/**
 * The inbox key Echonova's contract gives a job's final event: the job id alone (a job finishes
 * once), escaped with encodeURIComponent, then `:job`, in the provider's namespace.
 */
export function echonovaJobEventKey(jobId: string): string {
  return `${ECHONOVA}#${encodeURIComponent(jobId)}:job`;
}

export const ECHONOVA_SCHEDULE: RetrySchedule = {
  maxAttempts: attemptsOf(EchonovaDelivery),
  waitBeforeMs: (attempt) => EchonovaDelivery.maxWaitsSeconds[attempt - 2] * 1000,
  timeoutMs: EchonovaDelivery.attemptTimeoutSeconds * 1000,
};

/** The last attempt ends about 45 s after the first began, at worst (provider time). */
export const ECHONOVA_RETRY_WINDOW_MS = retryWindowSeconds(EchonovaDelivery) * 1000;

export type EchonovaStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface EchonovaJob {
  readonly jobId: string;
  readonly createdAt: string;
  status: EchonovaStatus;
  finishedAt?: number;
  /** The job's `job.*` delivery, once it finished (state `skipped` when the webhook was disabled). */
  delivery?: DeliveryRecord;
  readonly random: Random;
}

/** The webhook's state as the portal shows it, and its history. */
export interface EchonovaWebhook {
  enabled: boolean;
  consecutiveFailures: number;
  /** When it was disabled, and when enabled again, epoch ms. */
  readonly disabledAt: number[];
  readonly enabledAt: number[];
}

export interface SimulatedEchonovaOptions extends SimulatedProviderOptions {
  readonly api: FakeEchonovaApi;
}

export class SimulatedEchonova {
  readonly jobs = new Map<string, EchonovaJob>();
  readonly sender: RetryingSender;
  readonly webhook: EchonovaWebhook = { enabled: true, consecutiveFailures: 0, disabledAt: [], enabledAt: [] };

  constructor(private readonly options: SimulatedEchonovaOptions) {
    this.sender = providerSender(ECHONOVA, ECHONOVA_SCHEDULE, options, 'echonova-sender');
  }

  /** Submits a job (label: the app's own name for it, from which its id derives). */
  createJob(label: string): EchonovaJob {
    const random = this.options.random.stream(`job/${label}`);
    const job: EchonovaJob = { jobId: `job_${random.hex(20)}`, createdAt: new Date().toISOString(), status: 'queued', random };
    this.jobs.set(job.jobId, job);
    this.options.api.addJob({ jobId: job.jobId, createdAt: job.createdAt, status: 'queued' });
    return job;
  }

  startJob(jobId: string): void {
    this.job(jobId).status = 'processing';
    this.options.api.setStatus(jobId, 'processing');
  }

  /**
   * The job finishes and its event fires: delivered by the webhook if it is enabled, skipped
   * (never sent) if not. Resolves once the delivery is final.
   */
  finishJob(jobId: string, status: 'completed' | 'failed'): Promise<DeliveryRecord> {
    const job = this.job(jobId);
    job.status = status;
    job.finishedAt = Date.now();
    const outcome =
      status === 'completed'
        ? { result: { transcript: `pii_${job.random.hex(16)}`, durationSeconds: 1 + job.random.int(600) } }
        : { error: { code: 'TRANSCODE_FAILED', message: `pii_${job.random.hex(16)}` } };
    this.options.api.setStatus(jobId, status, outcome);
    const event = `job.${status}`;
    // The delivery body is the job resource, as the job API serves it.
    const body = Buffer.from(this.options.api.resourceBody(jobId));
    const delivery = this.sender.newDelivery({ id: `${jobId}:${event}`, eventKey: echonovaJobEventKey(jobId), kind: 'result', body });
    job.delivery = delivery;
    return this.send(delivery, event, body);
  }

  /** A contract anomaly: the job's event sent again with other bytes. */
  sendAltered(jobId: string): Promise<DeliveryRecord> {
    const job = this.job(jobId);
    const event = `job.${job.status}`;
    const original = JSON.parse(job.delivery!.body.toString('utf8')) as Record<string, unknown>;
    const body = Buffer.from(JSON.stringify({ ...original, result: { transcript: `pii_${job.random.hex(16)}`, altered: true } }));
    const delivery = this.sender.newDelivery({ id: `${jobId}:${event}:altered`, eventKey: echonovaJobEventKey(jobId), kind: 'altered', body });
    return this.send(delivery, event, body);
  }

  /** Saving "Enable" in the portal: the webhook is enabled and its counter reset. Missed events stay missed. */
  enableWebhook(): boolean {
    const wasDisabled = !this.webhook.enabled;
    this.webhook.enabled = true;
    this.webhook.consecutiveFailures = 0;
    if (wasDisabled) this.webhook.enabledAt.push(Date.now());
    return wasDisabled;
  }

  signAt(event: string, timestampSeconds: number, body: Buffer, secret = this.options.secret): SignedRequest {
    return { headers: echonovaHeaders(secret, event, timestampSeconds, body), body };
  }

  /** Delivers through the webhook (the outcome counts toward the disable rule), or skips it while the webhook is disabled. */
  private send(delivery: DeliveryRecord, event: string, body: Buffer): Promise<DeliveryRecord> {
    if (!this.webhook.enabled) return Promise.resolve(this.sender.skip(delivery));
    return this.sender.deliver(delivery, () => this.signAt(event, unixSeconds(), body)).then((done) => this.settle(done));
  }

  /** The disable rule: consecutive failed deliveries per webhook, not attempts. */
  private settle(delivery: DeliveryRecord): DeliveryRecord {
    if (delivery.state === 'delivered') {
      this.webhook.consecutiveFailures = 0;
    } else if (delivery.state === 'dead') {
      this.webhook.consecutiveFailures += 1;
      if (this.webhook.enabled && this.webhook.consecutiveFailures >= ECHONOVA_DISABLE_AFTER_FAILURES) {
        this.webhook.enabled = false;
        this.webhook.disabledAt.push(Date.now());
      }
    }
    return delivery;
  }

  private job(jobId: string): EchonovaJob {
    const job = this.jobs.get(jobId);
    if (!job) throw new Error(`no job ${jobId}`);
    return job;
  }
}
