/**
 * Recovery through the providers' own APIs, shown by the twin's own app when it serves GitHub or
 * Stripe (`npm start -- --provider github --provider stripe`): the fakes of GitHub's hook
 * deliveries API and Stripe's events API stand in for the providers, the app's `polling` points at
 * them, and after the demo's deliveries one event of each is sent while the endpoint cannot be
 * reached (GitHub's one attempt, Stripe's attempts until it gives up). A reconciler run then finds
 * each in the provider's log and stores it, marked recovered, and the processor takes it.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeliveryStatus, InboxAttr, InboxItemKind, RecoveryDefaults, RecoveryRuntimeConfig } from '../../../../lib/contract';
import { scanItems } from '../../../../lambda/shared/stores/dynamo';
import { LOCAL_AWS } from '../aws/local-aws';
import { FakeGitHub } from '../providers/github/fake-api';
import { FakeStripe } from '../providers/stripe/fake-api';
import type { TwinProviderSpec } from './app';
import type { Twin } from './inbox-twin';

/** Stripe's first attempt and retries come before the reconciler looks (15 minutes): the demo's event was made before that. */
const STRIPE_EVENT_AGE_SECONDS = 16 * 60;

interface Fake {
  readonly provider: string;
  readonly github?: FakeGitHub;
  readonly stripe?: FakeStripe;
}

export class RecoveryDemo {
  /** The fakes of the providers among `providers` that can be recovered; undefined when none is. */
  static async start(providers: readonly TwinProviderSpec[]): Promise<RecoveryDemo | undefined> {
    const fakes: Fake[] = [];
    for (const { name, preset } of providers) {
      if (preset === 'github') fakes.push({ provider: name, github: new FakeGitHub({ secret: '' }) });
      if (preset === 'stripe') fakes.push({ provider: name, stripe: new FakeStripe({ secret: '', attempts: 3 }) });
    }
    if (fakes.length === 0) return undefined;
    await Promise.all(fakes.map((fake) => (fake.github ?? fake.stripe)!.start()));
    return new RecoveryDemo(fakes);
  }

  private constructor(private readonly fakes: readonly Fake[]) {}

  /** The app's `polling` of each recovered provider, at its fake. */
  get recovery(): RecoveryRuntimeConfig[] {
    return this.fakes.map(({ provider, github, stripe }) => ({
      provider,
      kind: github ? 'github' : 'stripe',
      baseUrl: (github ?? stripe)!.baseUrl,
      credentialsSecretId: `${provider}/recovery-credentials`,
      ...(github ? { hook: { kind: 'repository' as const, owner: github.repository, hookId: github.hookId } } : {}),
      overlapSeconds: RecoveryDefaults.OVERLAP_SECONDS,
      settleSeconds: 0,
      initialLookbackSeconds: RecoveryDefaults.INITIAL_LOOKBACK_SECONDS,
      timeoutMs: RecoveryDefaults.TIMEOUT_MS,
    }));
  }

  /** The credentials secrets the twin creates: each fake's token or key. */
  get secrets(): Record<string, string> {
    return Object.fromEntries(this.fakes.map(({ provider, github, stripe }) => [`${provider}/recovery-credentials`, github ? github.token : stripe!.apiKey]));
  }

  /** Sends one event of each provider the endpoint never receives, runs the reconciler, and waits for each to be processed. */
  async run(twin: Twin, log: (line: string) => void): Promise<number> {
    log('');
    log('recovery: one event of each provider sent while the endpoint cannot be reached');
    const expected: string[] = [];
    for (const { provider, github, stripe } of this.fakes) {
      if (github) {
        github.secret = twin.secrets[provider];
        github.hookUrl = undefined;
        const delivery = await github.emit('issues', {
          action: 'opened',
          issue: { number: 42, title: 'Sent while the endpoint was down' },
          repository: { full_name: github.repository },
        });
        github.hookUrl = twin.urls[provider];
        log(`  ${provider}: GitHub made its one attempt of delivery ${delivery.guid} (issues.opened): ${delivery.status}; GitHub never retries`);
        expected.push(provider);
      } else if (stripe) {
        stripe.secret = twin.secrets[provider];
        stripe.endpointUrl = undefined;
        const event = await stripe.emit(
          'invoice.paid',
          { id: 'in_demo', object: 'invoice', amount_paid: 4200 },
          Math.floor(Date.now() / 1000) - STRIPE_EVENT_AGE_SECONDS,
        );
        stripe.endpointUrl = twin.urls[provider];
        log(`  ${provider}: Stripe tried event ${event.id} (invoice.paid) ${stripe.attempts.length} times and gave up`);
        expected.push(provider);
      }
    }
    log('recovery: running the reconciler');
    await twin.reconcileNow();
    const dynamodb = new DynamoDBClient({ endpoint: twin.endpoints.dynamodb, ...LOCAL_AWS });
    try {
      let processed: string[] = [];
      for (let waited = 0; waited < 30_000 && processed.length < expected.length; waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        processed = (await scanItems(dynamodb, { TableName: twin.names.inboxTable }))
          .filter(
            (item) =>
              item[InboxAttr.SK]?.S === InboxItemKind.DELIVERY &&
              item[InboxAttr.RECOVERED]?.BOOL === true &&
              item[InboxAttr.STATUS]?.S === DeliveryStatus.PROCESSED,
          )
          .map((item) => item[InboxAttr.PK]!.S!);
      }
      for (const key of processed) log(`  recovered ${key}: fetched from the provider's API, stored marked recovered, processed`);
      return processed.length;
    } finally {
      dynamodb.destroy();
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.fakes.map((fake) => (fake.github ?? fake.stripe)!.stop()));
  }
}
