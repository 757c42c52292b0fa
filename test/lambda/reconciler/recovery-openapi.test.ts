/**
 * The fakes of GitHub's and Stripe's APIs that recovery is tested against (and the twin serves),
 * judged by the providers' published OpenAPI descriptions: the excerpts of api.github.com's and of
 * Stripe's spec3 in test/fixtures/openapi (the operations recovery uses, every component they
 * refer to; scripts/openapi-excerpts.ts). The reconciler recovers through a
 * recording proxy in front of each fake: every request it sends must name a described operation
 * with described parameters of the described types, and every answer the fake gives must have a
 * described status, the described headers and a body of the described schema, with no field the
 * description does not name. Answers the runtime never provokes (a malformed parameter) are asked
 * for directly. The last block shows the judge refusing what the descriptions do not allow.
 */
import { join } from 'node:path';
import { FakeGitHub, FakeStripe } from '#twin/testing';
import { InboxHarness, SecretsFixture } from '../../support/inbox-fixture';
import { HttpExchange, OpenApiJudge } from '../../support/openapi-judge';
import { RecordingProxy } from '../../support/recording-proxy';
import { RecoveryFixture } from '../../support/recovery-fixture';
import { stripeSecret, textSecret } from '../../support/senders';

/** The descriptions' excerpts. */
const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'openapi');

/**
 * GitHub's operations list 200 (202), 400 and 422 only; its REST documentation answers every
 * request 401 (bad credentials), 403 (forbidden, or a primary or secondary rate limit), 404, 429
 * (a secondary rate limit) and 5xx in its basic error shape, which the description's shared
 * responses hold. Every answer carries the rate-limit headers; a list with more pages, `link`.
 */
const github = OpenApiJudge.load(join(FIXTURES, 'api.github.com.json'), {
  sharedResponses: {
    401: '#/components/responses/requires_authentication',
    403: '#/components/responses/forbidden',
    404: '#/components/responses/not_found',
    429: '#/components/responses/forbidden',
    500: '#/components/responses/internal_error',
    503: '#/components/responses/service_unavailable',
  },
  headers: {
    'x-ratelimit-limit': { ref: '#/components/headers/x-rate-limit-limit', always: true },
    'x-ratelimit-remaining': { ref: '#/components/headers/x-rate-limit-remaining', always: true },
    'x-ratelimit-reset': { ref: '#/components/headers/x-rate-limit-reset', always: true },
    link: { ref: '#/components/headers/link', always: false },
  },
});
/** Stripe's operations describe their errors as `default`. */
const stripe = OpenApiJudge.load(join(FIXTURES, 'stripe.spec3.json'));

/** Everything wrong with the exchanges, each line naming the exchange; empty when the description allows them all. */
function findings(judge: OpenApiJudge, exchanges: readonly HttpExchange[]): string[] {
  return exchanges.flatMap((exchange) => {
    const links = (exchange.headers.link ?? '')
      .split(',')
      .filter((part) => /rel="next"/.test(part))
      .map((part) => /<([^>]+)>/.exec(part)?.[1] ?? `unparsable link ${part}`);
    const problems = [
      ...judge.requestProblems(exchange.method, exchange.url),
      ...judge.responseProblems(exchange),
      // A next page is a request of the same operation, with described parameters.
      ...links.flatMap((link) => judge.requestProblems(exchange.method, link.startsWith('http') ? new URL(link).pathname + new URL(link).search : link)),
    ];
    return problems.map((problem) => `${exchange.method} ${exchange.url} → ${exchange.status}: ${problem}`);
  });
}

/** A request made directly, through the proxy (so that it is recorded like the runtime's). */
async function ask(base: string, path: string, authorization: string, method = 'GET'): Promise<number> {
  const response = await fetch(`${base}${path}`, { method, headers: { authorization, accept: 'application/json' } });
  await response.arrayBuffer();
  return response.status;
}

const secrets = new SecretsFixture();
let h: InboxHarness;
let r: RecoveryFixture;
let proxy: RecordingProxy;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'recovery-openapi');
  r = new RecoveryFixture(h, secrets);
});
afterEach(async () => {
  h.expectLogsClean();
  h.destroy();
  await r.close();
  await proxy.stop();
});

// ---------------------------------------------------------------------------------------------
describe(`GitHub's hook deliveries API, judged by api.github.com's description (version ${github.version})`, () => {
  let fake: FakeGitHub;
  let secret: string;
  let base: string;
  beforeEach(async () => {
    secret = textSecret();
    fake = new FakeGitHub({ secret });
    await fake.start();
    proxy = new RecordingProxy(fake.baseUrl);
    base = await proxy.start();
  });
  afterEach(() => fake.stop());

  test("a repository hook: the list's pages and their links, one delivery's detail, a redelivery", async () => {
    const inbox = await r.githubInbox(fake, secret, { baseUrl: base });
    const endpoint = await r.endpointFor(inbox);
    fake.hookUrl = endpoint;
    for (let i = 0; i < 130; i++) await fake.emit('push', { ref: 'refs/heads/main', n: i });
    fake.hookUrl = undefined;
    await fake.emit('issues', { action: 'opened', issue: { number: 1 } });
    await fake.emit('issues', { action: 'closed', issue: { number: 2 } }, (payload) => JSON.stringify(payload, null, 2));
    fake.hookUrl = endpoint;

    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 1, redelivered: 1 });
    await fake.settled();
    const kinds = proxy.exchanges.map((exchange) => `${exchange.method} ${exchange.url.replace(/\d{5,}/g, 'N').replace(/\?.*/, '?…')} ${exchange.status}`);
    expect(new Set(kinds)).toEqual(
      new Set([
        'GET /repos/octo-org/octo-repo/hooks/N/deliveries?… 200',
        'GET /repos/octo-org/octo-repo/hooks/N/deliveries/N 200',
        'POST /repos/octo-org/octo-repo/hooks/N/deliveries/N/attempts 202',
      ]),
    );
    expect(proxy.exchanges.filter((exchange) => exchange.headers.link !== undefined)).toHaveLength(1);
    expect(findings(github, proxy.exchanges)).toEqual([]);
  });

  test("an organization's hook with a token, and a GitHub App's own hook with the App's JWT", async () => {
    const org = await r.githubInbox(fake, secret, { baseUrl: base, hook: { kind: 'organization', owner: 'octo-org', hookId: fake.hookId } });
    await fake.emit('issues', { action: 'opened', issue: { number: 3 } });
    expect(await r.reconcile(org)).toMatchObject({ outcome: 'complete', recovered: 1 });

    const credentials = fake.appCredentials;
    h.markSensitive(credentials.privateKey);
    const app = await r.githubInbox(fake, secret, { baseUrl: base, hook: { kind: 'app' }, credentials: JSON.stringify(credentials) });
    await fake.emit('issues', { action: 'opened', issue: { number: 4 } });
    expect(await r.reconcile(app)).toMatchObject({ outcome: 'complete' });
    expect(proxy.exchanges.filter((exchange) => exchange.url.startsWith('/app/hook/deliveries')).map((exchange) => exchange.status)).toContain(200);
    expect(proxy.exchanges.filter((exchange) => exchange.url.startsWith('/orgs/octo-org/hooks/')).length).toBeGreaterThan(0);
    expect(findings(github, proxy.exchanges)).toEqual([]);
  });

  test('rate limits (primary 403, secondary 403 and 429), a server error, a deleted hook, refused credentials', async () => {
    const inbox = await r.githubInbox(fake, secret, { baseUrl: base });
    await fake.emit('issues', { action: 'opened', issue: { number: 5 } });
    fake.inject(403, { retryAfterSeconds: 60 });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'rate_limited' });
    fake.inject(429, { retryAfterSeconds: 30 });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'rate_limited' });
    fake.inject(503);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'failed' });
    fake.setRemaining(0);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'rate_limited' });
    fake.setRemaining(5000);
    expect(await ask(base, `/repos/${fake.repository}/hooks/${fake.hookId}/deliveries`, 'Bearer ghp_not_the_token')).toBe(401);
    expect(await ask(base, '/app/hook/deliveries', `Bearer ${fake.token}`)).toBe(401);
    expect(await ask(base, `/repos/${fake.repository}/hooks/${fake.hookId}/deliveries/1`, `Bearer ${fake.token}`)).toBe(404);
    fake.hookExists = false;
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'gone' });

    expect(new Set(proxy.exchanges.map((exchange) => exchange.status))).toEqual(new Set([401, 403, 404, 429, 503]));
    expect(proxy.exchanges.filter((exchange) => exchange.headers['retry-after'] !== undefined).map((exchange) => exchange.status)).toEqual([403, 429]);
    expect(findings(github, proxy.exchanges)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
describe(`Stripe's events API, judged by Stripe's spec3 (API version ${stripe.version})`, () => {
  let fake: FakeStripe;
  let secret: string;
  let base: string;
  beforeEach(async () => {
    secret = stripeSecret();
    fake = new FakeStripe({ secret, attempts: 1 });
    await fake.start();
    proxy = new RecordingProxy(fake.baseUrl);
    base = await proxy.start();
  });
  afterEach(() => fake.stop());

  test('the list with every parameter the runtime sends, page after page', async () => {
    const inbox = await r.stripeInbox(fake, secret, { baseUrl: base, eventTypes: ['charge.succeeded', 'invoice.paid'] });
    for (let i = 0; i < 150; i++) await fake.emit('charge.succeeded', { id: `ch_${i}`, object: 'charge', amount: 100 + i });
    await fake.emit('customer.created', { id: 'cus_1', object: 'customer' });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 150 });

    const sent = new Set(proxy.exchanges.flatMap((exchange) => [...new URL(exchange.url, base).searchParams.keys()]));
    expect(sent).toEqual(new Set(['created[gte]', 'created[lte]', 'delivery_success', 'limit', 'types[]', 'starting_after']));
    expect(proxy.exchanges.map((exchange) => exchange.status)).toEqual([200, 200]);
    expect(findings(stripe, proxy.exchanges)).toEqual([]);
  });

  test('429, a server error, refused credentials, and malformed parameters, each in the described error shape', async () => {
    const inbox = await r.stripeInbox(fake, secret, { baseUrl: base });
    await fake.emit('invoice.paid', { id: 'in_1', object: 'invoice' });
    fake.inject(429);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'rate_limited' });
    fake.inject(500);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'failed' });
    const key = `Bearer ${fake.apiKey}`;
    expect(await ask(base, '/v1/events', 'Bearer rk_test_not_the_key')).toBe(401);
    const types21 = Array.from({ length: 21 }, (_, i) => `types[]=t.${i}`).join('&');
    for (const query of ['limit=0', 'limit=101', 'type=a&types[]=b', types21, 'starting_after=evt_none', 'delivery_success=maybe', 'created[gte]=soon'])
      expect({ query, status: await ask(base, `/v1/events?${query}`, key) }).toEqual({ query, status: 400 });

    expect(new Set(proxy.exchanges.map((exchange) => exchange.status))).toEqual(new Set([400, 401, 429, 500]));
    // The malformed parameters are the judge's findings too (a limit past 100 is Stripe's rule in words, not in the schema).
    expect(findings(stripe, proxy.exchanges).map((finding) => finding.replace(/ \{.*$/, ''))).toEqual([
      expect.stringMatching(/delivery_success=maybe → 400: query parameter delivery_success: must be boolean$/),
      // `created` is a range (`created[gte]`…) or Unix seconds: neither takes a word.
      expect.stringMatching(/created\[gte\]=soon → 400: query parameter created\/gte: must be integer$/),
      expect.stringMatching(/created\[gte\]=soon → 400: query parameter created: must be integer$/),
      expect.stringMatching(/created\[gte\]=soon → 400: query parameter created: must match a schema in anyOf$/),
    ]);
  });

  test('what else the list takes: ending_before, a wildcard type, created exactly', async () => {
    const first = Math.floor(Date.now() / 1000) - 100;
    for (let i = 0; i < 5; i++) await fake.emit(i % 2 ? 'invoice.paid' : 'charge.succeeded', { id: `x_${i}`, object: 'thing' }, first + i);
    // Newest first.
    const events = [...fake.events].reverse();
    const list = async (query: string) => {
      const response = await fetch(`${base}/v1/events?${query}`, { headers: { authorization: `Bearer ${fake.apiKey}` } });
      return ((await response.json()) as { data: { id: string }[] }).data.map((event) => event.id);
    };
    expect(await list(`ending_before=${events[3].id}&limit=2`)).toEqual([events[1].id, events[2].id]);
    expect(await list('type=invoice.*')).toEqual([events[1].id, events[3].id]);
    expect(await list(`created=${first + 2}`)).toEqual([events[2].id]);
    expect(findings(stripe, proxy.exchanges)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
describe('the judge refuses what the descriptions do not allow', () => {
  const listed = {
    id: 1,
    guid: 'a',
    delivered_at: '2026-01-01T00:00:00Z',
    redelivery: false,
    duration: 0.1,
    status: 'OK',
    status_code: 200,
    event: 'push',
    action: null,
    installation_id: null,
    repository_id: 1,
    throttled_at: null,
  };
  const rates = { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': '1767225600', 'content-type': 'application/json' };
  const list = (body: unknown, headers: Record<string, string> = rates, status = 200): HttpExchange => ({
    method: 'GET',
    url: '/repos/o/r/hooks/1/deliveries?per_page=100',
    status,
    headers,
    body: JSON.stringify(body),
  });

  test('GitHub: a well-formed page passes; a missing, mistyped or invented field, a bad header, an undescribed status or parameter do not', () => {
    expect(github.responseProblems(list([listed]))).toEqual([]);
    const { duration: _, ...withoutDuration } = listed;
    expect(github.responseProblems(list([withoutDuration]))).toEqual([expect.stringContaining("must have required property 'duration'")]);
    expect(github.responseProblems(list([{ ...listed, id: '1' }]))).toEqual([expect.stringContaining('/0/id: must be integer')]);
    expect(github.responseProblems(list([{ ...listed, signature: 'x' }]))).toEqual([expect.stringContaining('must NOT have additional properties')]);
    expect(github.responseProblems(list([listed], { ...rates, 'x-ratelimit-remaining': 'many' }))).toEqual([expect.stringContaining('is not an integer')]);
    expect(github.responseProblems(list([listed], { 'content-type': 'application/json' }))).toHaveLength(3);
    expect(github.responseProblems(list({ message: 'x' }, rates, 418))).toEqual([expect.stringContaining('status 418 is not described')]);
    expect(github.requestProblems('GET', '/repos/o/r/hooks/1/deliveries?since=2026-01-01')).toEqual(['query parameter since is not described']);
    expect(github.requestProblems('GET', '/repos/o/r/hooks/one/deliveries')).toEqual([expect.stringContaining('path parameter hook_id: must be integer')]);
    expect(github.requestProblems('DELETE', '/repos/o/r/hooks/1/deliveries')).toEqual([
      'DELETE /repos/{owner}/{repo}/hooks/{hook_id}/deliveries is not described',
    ]);
  });

  test("Stripe: an event with a mistyped or invented field, an error of an undescribed type, a parameter not in the description's style", () => {
    const event = {
      id: 'evt_1',
      object: 'event',
      api_version: null,
      created: 1,
      data: { object: {} },
      livemode: false,
      pending_webhooks: 0,
      request: null,
      type: 'x',
    };
    const page = (data: unknown[], status = 200): HttpExchange => ({
      method: 'GET',
      url: '/v1/events',
      status,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(status === 200 ? { object: 'list', url: '/v1/events', has_more: false, data } : data[0]),
    });
    expect(stripe.responseProblems(page([event]))).toEqual([]);
    expect(stripe.responseProblems(page([{ ...event, created: '1' }]))).toEqual([expect.stringContaining('/data/0/created: must be integer')]);
    expect(stripe.responseProblems(page([{ ...event, attempts: 3 }]))).toEqual([expect.stringContaining('must NOT have additional properties')]);
    expect(stripe.responseProblems(page([{ error: { type: 'rate_limit_error', message: 'slow down' } }], 429))).toEqual([
      expect.stringContaining('/error/type: must be equal to one of the allowed values'),
    ]);
    expect(stripe.requestProblems('GET', '/v1/events?limit=ten')).toEqual([expect.stringContaining('query parameter limit: must be integer')]);
    expect(stripe.requestProblems('GET', '/v1/events?limit[max]=10')).toEqual(['query parameter limit[max]: limit is not a deepObject parameter']);
  });
});
