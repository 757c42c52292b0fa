/**
 * The core every simulated provider shares: a retrying webhook sender that keeps the provider's
 * OWN record of each delivery (every attempt, what the endpoint answered, the final state), with
 * the provider's retry schedule compressed by a time factor so that schedules of minutes or days
 * run in seconds. Each attempt is signed anew by the provider (`sign(attempt)`), as real senders
 * sign with the attempt's timestamp. The per-attempt timeout is NOT compressed: the endpoint
 * answers in real time.
 *
 * For the local twin's fault-injection run (`npm run chaos`); not a production client.
 */
import { createHash } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { Random } from './random';

/** When a provider retries, in the provider's own time. */
export interface RetrySchedule {
  readonly maxAttempts: number;
  /** Milliseconds of provider time to wait before `attempt` (2 is the first retry). */
  waitBeforeMs(attempt: number, random: Random): number;
  /** How long one attempt waits for an answer, real milliseconds. */
  readonly timeoutMs: number;
}

/** Provider time runs `factor` times faster than the wall clock. */
export function realMs(providerMs: number, factor: number): number {
  return providerMs / factor;
}

/**
 * What a delivery is, from the provider's side: a final result (`result`), a dashboard test
 * delivery (`test`), a result the receiver cannot interpret (`poison`, e.g. a malformed
 * timestamp), or a second delivery of an event with other bytes (`altered`, a contract anomaly).
 */
export type DeliveryKind = 'result' | 'test' | 'poison' | 'altered';

/**
 * `pending` while attempts remain; `delivered` once an attempt got a 2xx; `dead` after the last
 * attempt failed; `skipped` when it was never sent (an Echonova webhook disabled at the time).
 */
export type DeliveryState = 'pending' | 'delivered' | 'dead' | 'skipped';

export interface AttemptRecord {
  /** When it was sent, epoch ms. */
  readonly at: number;
  /** The answer's status (of the first copy that got a 2xx, else of the first copy). */
  readonly status?: number;
  /** Why no answer came: `timeout`, `network`. */
  readonly error?: string;
  readonly ms: number;
  /** Identical requests sent at once for this attempt (concurrent duplicates); 1 normally. */
  readonly copies: number;
}

export interface DeliveryRecord {
  readonly provider: string;
  /** The provider's delivery (message) id: `webhook-id`, or a synthetic one where the provider has none. */
  readonly id: string;
  /** The inbox key (`<provider>#<stable event id>`) the receiver should store this delivery under. */
  readonly eventKey: string;
  readonly kind: DeliveryKind;
  readonly body: Buffer;
  /** Hex SHA-256 of `body`. */
  readonly digest: string;
  /** When the provider queued it, epoch ms. */
  readonly queuedAt: number;
  state: DeliveryState;
  readonly attempts: AttemptRecord[];
  finishedAt?: number;
}

export interface SignedRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** What the sender tells the endpoint, and hooks a fault-injection run uses. */
export interface SenderHooks {
  /** How many identical copies of this attempt to send at once (concurrent duplicates). @default 1 */
  copiesOf?(delivery: DeliveryRecord, attempt: number): number;
  /** Sees each signed attempt before it is sent (e.g. to arm a fault for it). */
  beforeAttempt?(delivery: DeliveryRecord, attempt: number, request: SignedRequest): void;
}

export interface SenderOptions {
  readonly provider: string;
  /** The endpoint deliveries are POSTed to. */
  readonly url: string;
  readonly schedule: RetrySchedule;
  /** Time compression: provider time runs this many times faster than the wall clock. @default 1 */
  readonly factor?: number;
  readonly random: Random;
  /** Requests in flight at most (a provider's delivery workers). @default 16 */
  readonly concurrency?: number;
  readonly hooks?: SenderHooks;
}

/** What every simulated provider is given: where it delivers, its signing secret, its randomness and pace. */
export interface SimulatedProviderOptions {
  /** The inbox endpoint (`/hooks/<provider>`). */
  readonly url: string;
  /** The signing secret, as the provider holds it. */
  readonly secret: string;
  readonly random: Random;
  /** Time compression of the retry schedule. */
  readonly factor: number;
  readonly concurrency?: number;
  readonly hooks?: SenderHooks;
}

/** A simulated provider's sender, its jitter drawn from `options.random`'s stream `stream`. */
export function providerSender(provider: string, schedule: RetrySchedule, options: SimulatedProviderOptions, stream: string): RetryingSender {
  return new RetryingSender({
    provider,
    url: options.url,
    schedule,
    factor: options.factor,
    random: options.random.stream(stream),
    concurrency: options.concurrency,
    hooks: options.hooks,
  });
}

export interface HttpOutcome {
  readonly status?: number;
  readonly error?: string;
  readonly ms: number;
}

/**
 * A 2xx answer: what ends a delivery. A 3xx is a failed attempt, as real providers count it, and
 * is never followed (node:http does not follow redirects; fetch would, unless `redirect: 'manual'`).
 */
export function isSuccess(status: number | undefined): boolean {
  return status !== undefined && status >= 200 && status <= 299;
}

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export class RetryingSender {
  /** Every delivery this provider queued, in order: the provider's own record. */
  readonly deliveries: DeliveryRecord[] = [];
  readonly stats = { attempts: 0, requests: 0, delivered: 0, dead: 0, skipped: 0, timeouts: 0, networkErrors: 0 };
  private readonly factor: number;
  private readonly agent: Agent;
  private readonly slots: Array<() => void> = [];
  private active = 0;
  private pending = 0;
  private waitingFirst = 0;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly target: URL;

  constructor(private readonly options: SenderOptions) {
    this.factor = options.factor ?? 1;
    this.agent = new Agent({ keepAlive: true, maxSockets: options.concurrency ?? 16 });
    this.target = new URL(options.url);
  }

  /** Deliveries not final yet. */
  get outstanding(): number {
    return this.pending;
  }

  /** Deliveries whose first attempt is not done yet (most wait for one of the sender's connections). */
  get unsent(): number {
    return this.waitingFirst;
  }

  /** Creates the record of a delivery the provider will send. */
  newDelivery(fields: { id: string; eventKey: string; kind: DeliveryKind; body: Buffer }): DeliveryRecord {
    const record: DeliveryRecord = {
      provider: this.options.provider,
      ...fields,
      digest: sha256Hex(fields.body),
      queuedAt: Date.now(),
      state: 'pending',
      attempts: [],
    };
    this.deliveries.push(record);
    return record;
  }

  /** Records a delivery that is never sent (its webhook was disabled when the event fired). */
  skip(record: DeliveryRecord): DeliveryRecord {
    record.state = 'skipped';
    record.finishedAt = Date.now();
    this.stats.skipped++;
    return record;
  }

  /**
   * Delivers with retries on the provider's schedule until a 2xx or the last attempt; `sign`
   * signs each attempt; `random` draws the jitter of this delivery's waits (the sender's stream
   * by default). Resolves with the record once it is final.
   */
  async deliver(record: DeliveryRecord, sign: (attempt: number) => SignedRequest, random: Random = this.options.random): Promise<DeliveryRecord> {
    this.pending++;
    this.waitingFirst++;
    try {
      const { schedule } = this.options;
      for (let attempt = 1; attempt <= schedule.maxAttempts; attempt++) {
        if (attempt > 1) await sleep(realMs(schedule.waitBeforeMs(attempt, random), this.factor));
        const outcome = await this.attempt(record, attempt, sign);
        if (attempt === 1) this.waitingFirst--;
        if (isSuccess(outcome.status)) {
          record.state = 'delivered';
          this.stats.delivered++;
          return record;
        }
      }
      record.state = 'dead';
      this.stats.dead++;
      return record;
    } finally {
      record.finishedAt = Date.now();
      this.pending--;
      if (this.pending === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    }
  }

  /**
   * One request, once, outside any delivery (a replay or a forgery by someone else); `make`
   * builds it when it leaves, so that its timestamp means what it says.
   */
  async sendOnce(make: () => SignedRequest, timeoutMs = this.options.schedule.timeoutMs): Promise<HttpOutcome & { request: SignedRequest }> {
    await this.acquire();
    try {
      const request = make();
      return { ...(await this.post(request, timeoutMs)), request };
    } finally {
      this.release();
    }
  }

  /** Resolves once no delivery is pending. */
  idle(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.agent.destroy();
  }

  private async attempt(record: DeliveryRecord, attempt: number, sign: (attempt: number) => SignedRequest): Promise<HttpOutcome> {
    await this.acquire();
    try {
      // Signed when it actually leaves, so that its timestamp is fresh.
      const request = sign(attempt);
      const copies = Math.max(1, this.options.hooks?.copiesOf?.(record, attempt) ?? 1);
      this.options.hooks?.beforeAttempt?.(record, attempt, request);
      const at = Date.now();
      this.stats.attempts++;
      const outcomes = await Promise.all(Array.from({ length: copies }, () => this.post(request, this.options.schedule.timeoutMs)));
      const success = outcomes.find((o) => isSuccess(o.status));
      const chosen = success ?? outcomes[0];
      record.attempts.push({
        at,
        ...(chosen.status !== undefined ? { status: chosen.status } : {}),
        ...(chosen.error !== undefined ? { error: chosen.error } : {}),
        ms: Date.now() - at,
        copies,
      });
      return chosen;
    } finally {
      this.release();
    }
  }

  private post(request: SignedRequest, timeoutMs: number): Promise<HttpOutcome> {
    this.stats.requests++;
    const started = Date.now();
    return new Promise<HttpOutcome>((resolve) => {
      let settled = false;
      const done = (outcome: Omit<HttpOutcome, 'ms'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (outcome.error === 'timeout') this.stats.timeouts++;
        else if (outcome.error) this.stats.networkErrors++;
        resolve({ ...outcome, ms: Date.now() - started });
      };
      const req = httpRequest(
        {
          host: this.target.hostname,
          port: this.target.port,
          path: `${this.target.pathname}${this.target.search}`,
          method: 'POST',
          agent: this.agent,
          headers: { ...request.headers, 'content-length': String(request.body.length) },
        },
        (res) => {
          res.resume();
          res.on('end', () => done({ status: res.statusCode }));
          res.on('error', () => done({ error: 'network' }));
        },
      );
      const timer = setTimeout(() => {
        done({ error: 'timeout' });
        req.destroy();
      }, timeoutMs);
      req.on('error', () => done({ error: 'network' }));
      req.end(request.body);
    });
  }

  private acquire(): Promise<void> {
    if (this.active < (this.options.concurrency ?? 16)) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.slots.push(resolve));
  }

  private release(): void {
    const next = this.slots.shift();
    if (next) next();
    else this.active--;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
