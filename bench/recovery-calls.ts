/**
 * The reconciler's requests to GitHub's and Stripe's APIs an hour, for a given volume: the real
 * recovery runs (`GitHubDeliveriesFeed`, `StripeEventsFeed`) against the fakes of both APIs over
 * real HTTP, through a simulated hour of the default schedule (a run every 5 minutes), with the
 * deliveries of the hour made at their times and a share of them lost (GitHub's one attempt failed;
 * Stripe's attempts all failed). Every request the fakes answered is counted, by kind. What each
 * run admits is counted, not stored: the inbox's side is measured in `pipeline.ts`.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { providerRuntimeConfig, RecoveryDefaults, RecoveryFacts, RecoveryRuntimeConfig } from '../lib/contract';
import { githubAdapter } from '../lambda/shared/providers/github/adapter';
import { GitHubDeliveriesFeed } from '../lambda/shared/providers/github/deliveries';
import { FeedPosition, RecoveryFeed } from '../lambda/shared/providers/recovery/feed';
import { StripeEventsFeed } from '../lambda/shared/providers/stripe/events';
import { SecretCache, SecretStage, SecretVersionReader } from '../lambda/shared/signatures/secrets';
import { FakeGitHub, FakeStripe } from '#twin/testing';

export interface RecoveryCallsOptions {
  /** Deliveries an hour. */
  readonly volumes: readonly number[];
  /** One delivery in this many is lost. */
  readonly lostOneIn: number;
}

export const RECOVERY_CALLS_DEFAULTS: RecoveryCallsOptions = { volumes: [600, 6000], lostOneIn: 100 };

export interface RecoveryCalls {
  readonly provider: 'github' | 'stripe';
  readonly deliveriesPerHour: number;
  readonly lostPerHour: number;
  readonly runsPerHour: number;
  /** Requests an hour by kind: list pages, deliveries fetched, redeliveries asked for. */
  readonly requests: { readonly list: number; readonly fetch: number; readonly redeliver: number; readonly total: number };
  readonly recovered: number;
  /** The total as a share of the provider's budget an hour (GitHub 5,000 a token; Stripe 100 a second, 360,000 an hour). */
  readonly shareOfBudget: number;
}

const RUN_EVERY_MS = 5 * 60_000;
const HOUR_MS = 3_600_000;
const BUDGET_PER_HOUR = { github: 5000, stripe: 100 * 3600 } as const;

/** A Secrets Manager stand-in in memory: the bench measures the providers' APIs, not Secrets Manager. */
function secretsOf(values: Record<string, string>): SecretCache {
  const reader: SecretVersionReader = {
    read: (secretId) => Promise.resolve([{ stage: SecretStage.CURRENT, value: values[secretId], versionId: 'v1', createdAt: 0 }]),
  };
  return new SecretCache(reader, { ttlMs: HOUR_MS, minRefreshIntervalMs: HOUR_MS });
}

/** An endpoint that stores nothing and answers 202: what the provider sees of a healthy inbox. */
async function acceptingEndpoint(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/x`, server };
}

const baseConfig = {
  overlapSeconds: RecoveryDefaults.OVERLAP_SECONDS,
  initialLookbackSeconds: RecoveryDefaults.INITIAL_LOOKBACK_SECONDS,
  timeoutMs: RecoveryDefaults.TIMEOUT_MS,
};

/** Runs `feed` every 5 minutes of the hour after `start`; returns how many entries it recovered. */
async function runHour(feed: RecoveryFeed, clock: { now: number }, start: number): Promise<number> {
  let position: FeedPosition | undefined;
  let recovered = 0;
  // The first run, at the hour's start, makes the cursor (as the first run after a deploy does); the hour's twelve follow.
  for (let at = start; at <= start + HOUR_MS; at += RUN_EVERY_MS) {
    clock.now = at;
    const run = await feed.run({
      now: at,
      ...(position ? { position } : {}),
      hasTime: () => true,
      admit: () => Promise.resolve('recovered'),
    });
    if (run.outcome !== 'complete') throw new Error(`a recovery run ended ${run.outcome} (${run.detail ?? ''})`);
    position = run.position;
    recovered += run.counts.recovered + run.counts.redelivered;
  }
  return recovered;
}

/**
 * Makes the hour's deliveries from `start` on, evenly spaced, one in `lostOneIn` sent while the
 * endpoint is unreachable (`send(at, i, endpointUrl)`, `undefined` for a lost one); returns how many were lost.
 */
async function sendHour(
  deliveriesPerHour: number,
  lostOneIn: number,
  start: number,
  endpointUrl: string,
  send: (at: number, i: number, url: string | undefined) => Promise<unknown>,
): Promise<number> {
  let lost = 0;
  for (let i = 0; i < deliveriesPerHour; i++) {
    const isLost = i % lostOneIn === lostOneIn - 1;
    await send(start + Math.floor(((i + 0.5) * HOUR_MS) / deliveriesPerHour), i, isLost ? undefined : endpointUrl);
    if (isLost) lost += 1;
  }
  return lost;
}

async function githubHour(deliveriesPerHour: number, lostOneIn: number): Promise<RecoveryCalls> {
  const secret = 'bench-hook-secret';
  const clock = { now: 0 };
  const fake = new FakeGitHub({ secret, now: () => clock.now, rateLimit: 1_000_000 });
  const endpoint = await acceptingEndpoint();
  await fake.start();
  try {
    const start = Date.now() - 2 * HOUR_MS;
    const lost = await sendHour(deliveriesPerHour, lostOneIn, start, endpoint.url, (at, i, url) => {
      clock.now = at;
      fake.hookUrl = url;
      return fake.emit('push', { ref: 'refs/heads/main', after: `${i}`.padStart(40, '0') });
    });
    const config: RecoveryRuntimeConfig & { hook: NonNullable<RecoveryRuntimeConfig['hook']>; signingSecretId: string } = {
      provider: 'github',
      kind: 'github',
      baseUrl: fake.baseUrl,
      credentialsSecretId: 'token',
      signingSecretId: 'signing',
      hook: { kind: 'repository', owner: fake.repository, hookId: fake.hookId },
      settleSeconds: RecoveryFacts.github.settleSeconds,
      ...baseConfig,
    };
    const adapter = githubAdapter(providerRuntimeConfig({ name: 'github', adapter: 'github', secretId: 'signing' }));
    const feed = new GitHubDeliveriesFeed(config, adapter, secretsOf({ token: fake.token, signing: secret }));
    const before = fake.requests.length;
    const recovered = await runHour(feed, clock, start);
    const requests = fake.requests.slice(before);
    const list = requests.filter((request) => request.path.endsWith('/deliveries')).length;
    const redeliver = requests.filter((request) => request.method === 'POST').length;
    const total = requests.length;
    return summary('github', deliveriesPerHour, lost, { list, fetch: total - list - redeliver, redeliver, total }, recovered);
  } finally {
    await fake.stop();
    endpoint.server.close();
  }
}

async function stripeHour(deliveriesPerHour: number, lostOneIn: number): Promise<RecoveryCalls> {
  const clock = { now: 0 };
  const fake = new FakeStripe({ secret: 'whsec_bench', attempts: 3, now: () => clock.now });
  const endpoint = await acceptingEndpoint();
  await fake.start();
  try {
    const start = Date.now() - 2 * HOUR_MS;
    const lost = await sendHour(deliveriesPerHour, lostOneIn, start, endpoint.url, (at, i, url) => {
      fake.endpointUrl = url;
      return fake.emit('invoice.paid', { id: `in_${i}`, object: 'invoice' }, Math.floor(at / 1000));
    });
    const config: RecoveryRuntimeConfig = {
      provider: 'stripe',
      kind: 'stripe',
      baseUrl: fake.baseUrl,
      credentialsSecretId: 'key',
      settleSeconds: RecoveryFacts.stripe.settleSeconds,
      ...baseConfig,
    };
    const feed = new StripeEventsFeed(config, secretsOf({ key: fake.apiKey }));
    const before = fake.requests.length;
    const recovered = await runHour(feed, clock, start);
    const total = fake.requests.length - before;
    return summary('stripe', deliveriesPerHour, lost, { list: total, fetch: 0, redeliver: 0, total }, recovered);
  } finally {
    await fake.stop();
    endpoint.server.close();
  }
}

function summary(
  provider: 'github' | 'stripe',
  deliveriesPerHour: number,
  lostPerHour: number,
  requests: RecoveryCalls['requests'],
  recovered: number,
): RecoveryCalls {
  // The hour's twelve runs, the first run (the cursor's) aside.
  return {
    provider,
    deliveriesPerHour,
    lostPerHour,
    runsPerHour: HOUR_MS / RUN_EVERY_MS,
    requests,
    recovered,
    shareOfBudget: requests.total / BUDGET_PER_HOUR[provider],
  };
}

/** GitHub's and Stripe's requests an hour at each volume. */
export async function measureRecoveryCalls(options: RecoveryCallsOptions = RECOVERY_CALLS_DEFAULTS): Promise<RecoveryCalls[]> {
  const results: RecoveryCalls[] = [];
  for (const volume of options.volumes) {
    results.push(await githubHour(volume, options.lostOneIn));
    results.push(await stripeHour(volume, options.lostOneIn));
  }
  return results;
}

/** The Markdown table of the figures. */
export function renderRecoveryCalls(results: readonly RecoveryCalls[]): string {
  const lines = [
    '### Recovery from the providers’ APIs: requests an hour',
    '',
    'The reconciler every 5 minutes (13 runs: the cursor’s first, then the hour’s twelve), one delivery in a hundred lost. Stripe’s',
    'events of the hour’s last 15 minutes are left to Stripe’s retries (the settle time): the next hour’s runs recover them.',
    '',
    '| provider | deliveries an hour | lost | list pages | fetched | redelivered | requests | share of the budget | recovered |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.provider} | ${r.deliveriesPerHour} | ${r.lostPerHour} | ${r.requests.list} | ${r.requests.fetch} | ${r.requests.redeliver} | ${r.requests.total} | ${(r.shareOfBudget * 100).toFixed(2)} % | ${r.recovered} |`,
    );
  }
  return lines.join('\n');
}
