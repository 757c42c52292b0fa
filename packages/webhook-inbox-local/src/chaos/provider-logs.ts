/**
 * GitHub and Stripe in the fault-injection run: providers whose lost deliveries are recovered from
 * their own logs. The fake GitHub makes ONE attempt per event and never retries; the fake Stripe
 * tries a few times and gives up. While the run drives, each sends its events with the endpoint
 * unreachable for a share of them (an outage longer than either retry window: GitHub's single
 * attempt, Stripe's last attempt), and the reconciler must recover every one from the provider's
 * API. The auditor (audit/provider-logs.ts) judges the inbox from the fakes' own records.
 */
import { RecoveryDefaults, RecoveryRuntimeConfig } from '../../../../lib/contract';
import { FakeGitHub } from '../providers/github/fake-api';
import { Random } from '../providers/random';
import { FakeStripe } from '../providers/stripe/fake-api';
import type { TwinProviderSpec } from '../twin/app';
import type { Twin } from '../twin/inbox-twin';

export const GITHUB = 'github';
export const STRIPE = 'stripe';
const CREDENTIALS = { [GITHUB]: 'chaos/github/token', [STRIPE]: 'chaos/stripe/restricted-key' } as const;
/**
 * Stripe's retries (3 days) are over when the reconciler looks, 15 minutes after an event is made
 * at the earliest: the run's events are made that long ago on Stripe's clock, as if its retries
 * had run their course, compressed.
 */
const STRIPE_EVENT_AGE_SECONDS = 16 * 60;

/** What the run's GitHub and Stripe sent, from their own records. */
export interface ProviderLogRecord {
  readonly github: readonly { readonly guid: string; readonly body: Buffer; readonly stored: boolean }[];
  readonly stripe: readonly { readonly id: string; readonly stored: boolean }[];
}

export class ProviderLogSenders {
  static async start(random: Random): Promise<ProviderLogSenders> {
    const senders = new ProviderLogSenders(random, new FakeGitHub({ secret: '' }), new FakeStripe({ secret: '', attempts: 3 }));
    await Promise.all([senders.github.start(), senders.stripe.start()]);
    return senders;
  }

  private twin?: Twin;

  private constructor(
    private readonly random: Random,
    readonly github: FakeGitHub,
    readonly stripe: FakeStripe,
  ) {}

  /** The twin's app serves both. */
  get providers(): TwinProviderSpec[] {
    return [
      { name: GITHUB, preset: 'github' },
      { name: STRIPE, preset: 'stripe' },
    ];
  }

  /** The app's `polling` of each, at its fake. */
  get recovery(): RecoveryRuntimeConfig[] {
    const shared = {
      overlapSeconds: RecoveryDefaults.OVERLAP_SECONDS,
      settleSeconds: 0,
      initialLookbackSeconds: RecoveryDefaults.INITIAL_LOOKBACK_SECONDS,
      timeoutMs: 5_000,
    };
    return [
      {
        provider: GITHUB,
        kind: 'github',
        baseUrl: this.github.baseUrl,
        credentialsSecretId: CREDENTIALS.github,
        hook: { kind: 'repository', owner: this.github.repository, hookId: this.github.hookId },
        ...shared,
      },
      { provider: STRIPE, kind: 'stripe', baseUrl: this.stripe.baseUrl, credentialsSecretId: CREDENTIALS.stripe, ...shared },
    ];
  }

  /** The credentials secrets the twin creates. */
  get secrets(): Record<string, string> {
    return { [CREDENTIALS.github]: this.github.token, [CREDENTIALS.stripe]: this.stripe.apiKey };
  }

  /** What no log line may carry: the signing secrets and the credentials. */
  get sensitive(): string[] {
    return [this.github.secret, this.stripe.secret, this.github.token, this.stripe.apiKey];
  }

  /** Points both at the twin's endpoints, with the signing secrets it made. */
  bind(twin: Twin): void {
    this.twin = twin;
    this.github.secret = twin.secrets[GITHUB];
    this.stripe.secret = twin.secrets[STRIPE];
  }

  /**
   * Sends `count` events of each, one after the other, `pauseMs` apart; an outage of the endpoint
   * (unreachable: the attempts fail to connect) covers about `lostShare` of them, in runs.
   */
  async drive(count: number, lostShare: number, pauseMs: number, stopped: () => boolean): Promise<void> {
    const twin = this.twin!;
    const stream = this.random.stream('provider-logs');
    let down = false;
    for (let i = 0; i < count && !stopped(); i++) {
      // Outages in runs of a few events: a 1-in-4 chance to flip while down, scaled up when up.
      if (stream.chance(down ? 0.25 : (0.25 * lostShare) / (1 - lostShare))) down = !down;
      this.github.hookUrl = down ? undefined : twin.urls[GITHUB];
      this.stripe.endpointUrl = down ? undefined : twin.urls[STRIPE];
      await this.github.emit('issues', { action: 'opened', issue: { number: i, title: `event ${i} <${stream.hex(8)}>` } });
      await this.stripe.emit(
        'invoice.paid',
        { id: `in_${stream.hex(12)}`, object: 'invoice', amount_paid: i },
        Math.floor(Date.now() / 1000) - STRIPE_EVENT_AGE_SECONDS,
      );
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    // Redeliveries go to the endpoint.
    this.github.hookUrl = twin.urls[GITHUB];
    this.stripe.endpointUrl = twin.urls[STRIPE];
  }

  /** The fakes' records: each GitHub GUID (the bytes it sent, whether an attempt got a 2xx), each Stripe event. */
  record(): ProviderLogRecord {
    const guids = new Map<string, { guid: string; body: Buffer; stored: boolean }>();
    for (const attempt of this.github.deliveries) {
      const known = guids.get(attempt.guid) ?? { guid: attempt.guid, body: attempt.body, stored: false };
      known.stored ||= attempt.statusCode >= 200 && attempt.statusCode < 300;
      guids.set(attempt.guid, known);
    }
    return {
      github: [...guids.values()],
      stripe: this.stripe.events.map((event) => ({ id: event.id, stored: event.pending_webhooks === 0 })),
    };
  }

  async stop(): Promise<void> {
    await Promise.all([this.github.stop(), this.stripe.stop()]);
  }
}
