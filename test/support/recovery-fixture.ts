/**
 * What the recovery tests share: an inbox with a GitHub or Stripe provider whose recovery reads a
 * fake of the provider's API, one reconciler run at the fakes' clock, and an endpoint on loopback
 * that hands the fakes' deliveries to the inbox's verifier, as API Gateway would.
 */
import { createServer, Server } from 'node:http';
import { GitHubHookTarget, ProviderRuntimeConfig, RecoveryRuntimeConfig } from '../../lib/contract';
import { closeServer, FakeGitHub, FakeStripe, listenOnLoopback, readBody } from '#twin/testing';
import { apiGatewayEvent, InboxHarness, SecretsFixture } from './inbox-fixture';

export interface Recovered {
  readonly provider: ProviderRuntimeConfig;
  readonly recovery: RecoveryRuntimeConfig;
}

export interface GitHubRecoveryOptions {
  /** Where the API is reached. @default the fake's base URL */
  readonly baseUrl?: string;
  /** @default the fake's repository hook */
  readonly hook?: GitHubHookTarget;
  /** What the credentials secret holds. @default the fake's token */
  readonly credentials?: string;
}

const BASE = { overlapSeconds: 300, settleSeconds: 0, initialLookbackSeconds: 3600, timeoutMs: 5_000 };

export class RecoveryFixture {
  private readonly bridges: Server[] = [];

  constructor(
    private readonly h: InboxHarness,
    private readonly secrets: SecretsFixture,
  ) {}

  async githubInbox(fake: FakeGitHub, secret: string, options: GitHubRecoveryOptions = {}): Promise<Recovered> {
    const provider = await this.h.addProvider('github', 'github', secret);
    const credentials = await this.secrets.create(options.credentials ?? fake.token);
    this.h.markSensitive(fake.token);
    return {
      provider,
      recovery: {
        provider: 'github',
        kind: 'github',
        baseUrl: options.baseUrl ?? fake.baseUrl,
        credentialsSecretId: credentials.id,
        signingSecretId: provider.secretId!,
        hook: options.hook ?? { kind: 'repository', owner: fake.repository, hookId: fake.hookId },
        ...BASE,
      },
    };
  }

  async stripeInbox(fake: FakeStripe, secret: string, overrides: Partial<RecoveryRuntimeConfig> = {}): Promise<Recovered> {
    const provider = await this.h.addProvider('stripe', 'stripe', secret);
    const credentials = await this.secrets.create(fake.apiKey);
    this.h.markSensitive(fake.apiKey);
    return { provider, recovery: { provider: 'stripe', kind: 'stripe', baseUrl: fake.baseUrl, credentialsSecretId: credentials.id, ...BASE, ...overrides } };
  }

  /** One reconciler run at the real time (the fakes' clocks), plus `laterMs`: the recovery's report. */
  async reconcile(inbox: Recovered, laterMs = 0) {
    this.h.clock.set(Date.now() + laterMs);
    const run = this.h.reconcilerOf({ providers: [inbox.provider], recovery: [inbox.recovery] });
    const report = await run();
    return report.recovery!.find((entry) => entry.provider === inbox.recovery.provider)!;
  }

  /** An endpoint on loopback that hands each POST to the inbox's verifier, as API Gateway would. */
  async endpointFor(inbox: Recovered): Promise<string> {
    const verifier = this.h.verifier({ providers: [inbox.provider] });
    const bridge = createServer((req, res) => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
      void readBody(req)
        .then((body) => verifier(apiGatewayEvent(body, headers, { path: `/hooks/${inbox.provider.name}` })))
        .then((answer) => res.writeHead(answer.statusCode ?? 500, { 'content-type': 'application/json' }).end(String(answer.body ?? '')));
    });
    this.bridges.push(bridge);
    return `${await listenOnLoopback(bridge)}/hooks/${inbox.provider.name}`;
  }

  /** The inbox's delivery rows of a provider. */
  async deliveryRows(provider: string) {
    return (await this.h.inboxItems()).filter((item) => item.sk === 'delivery' && String(item.pk).startsWith(`${provider}#`));
  }

  /** Closes the endpoints opened. */
  async close(): Promise<void> {
    await Promise.all(this.bridges.splice(0).map(closeServer));
  }
}
