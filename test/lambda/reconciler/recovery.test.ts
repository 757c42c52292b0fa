/**
 * Recovery through the providers' own logs: GitHub's hook deliveries (one attempt, never retried)
 * and Stripe's events (retried, then given up). Each run reads the log from its cursor, admits what
 * the inbox does not hold through the verifier's admission, marked recovered, and moves the cursor
 * only past what it handled. Everything runs against the emulators, the IAM gateway (the
 * reconciler's role from the synthesized template) and fakes of both APIs over real HTTP.
 */
import { createHmac } from 'node:crypto';
import { MetricName } from '../../../lib/contract';
import { FakeGitHub, FakeStripe } from '#twin/testing';
import { apiGatewayEvent, answerOf, InboxHarness, SecretsFixture } from '../../support/inbox-fixture';
import { RecoveryFixture } from '../../support/recovery-fixture';
import { stripeSecret, textSecret } from '../../support/senders';

const secrets = new SecretsFixture();
let h: InboxHarness;
let r: RecoveryFixture;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'recovery');
  r = new RecoveryFixture(h, secrets);
});
afterEach(async () => {
  h.expectLogsClean();
  h.destroy();
  await r.close();
});

// ---------------------------------------------------------------------------------------------
describe('GitHub: one attempt, then the hook deliveries API', () => {
  let fake: FakeGitHub;
  let secret: string;
  beforeEach(async () => {
    secret = textSecret();
    fake = new FakeGitHub({ secret });
    await fake.start();
  });
  afterEach(() => fake.stop());

  test('a delivery whose one attempt failed is fetched, checked against the recorded signature and admitted as recovered; its later delivery is a duplicate', async () => {
    const inbox = await r.githubInbox(fake, secret);
    const failed = await fake.emit('issues', { action: 'opened', issue: { number: 1, title: 'lost <b>while</b> down' } });
    expect(failed.statusCode).toBe(0);

    const report = await r.reconcile(inbox);
    expect(report).toMatchObject({ outcome: 'complete', recovered: 1, redelivered: 0, cursorMoved: true });
    const rows = await r.deliveryRows('github');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ recovered: true });
    expect(h.capture.metric(MetricName.RECOVERED, 'github')).toBe(1);

    // The same bytes, now signed at the endpoint (a manual redelivery): one event, not two.
    const verifier = h.verifier({ providers: [inbox.provider] });
    const answer = answerOf(await verifier(apiGatewayEvent(failed.body, failed.headers, { path: '/hooks/github' })));
    expect(answer).toMatchObject({ statusCode: 200, result: 'duplicate' });
    expect(await r.deliveryRows('github')).toHaveLength(1);

    // The next run finds it held: nothing fetched again.
    const details = () => fake.requests.filter((request) => /\/deliveries\/\d+$/.test(request.path)).length;
    const before = details();
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 0 });
    expect(details()).toBe(before);
  });

  test('delivered GUIDs are never fetched; the list is followed page by page through the link header', async () => {
    const inbox = await r.githubInbox(fake, secret);
    fake.hookUrl = await r.endpointFor(inbox);
    const lost: string[] = [];
    for (let i = 0; i < 230; i++) {
      if (i % 75 === 40) {
        const url: string | undefined = fake.hookUrl;
        fake.hookUrl = undefined;
        lost.push((await fake.emit('push', { ref: 'refs/heads/main', n: i })).guid);
        fake.hookUrl = url;
      } else {
        await fake.emit('push', { ref: 'refs/heads/main', n: i });
      }
    }
    const report = await r.reconcile(inbox);
    expect(report).toMatchObject({ outcome: 'complete', recovered: 3 });
    const lists = fake.requests.filter((request) => request.path.endsWith('/deliveries'));
    expect(lists).toHaveLength(3);
    expect(fake.requests.filter((request) => /\/deliveries\/\d+$/.test(request.path))).toHaveLength(3);
    expect(await r.deliveryRows('github')).toHaveLength(230);
  });

  test('a payload that does not reproduce the signed bytes is redelivered by GitHub instead, and arrives signed', async () => {
    const inbox = await r.githubInbox(fake, secret);
    const prettyPrinted = (payload: unknown) => JSON.stringify(payload, null, 2);
    const failed = await fake.emit('issues', { action: 'closed', issue: { number: 2 } }, prettyPrinted);
    fake.hookUrl = await r.endpointFor(inbox);

    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 0, redelivered: 1 });
    await fake.settled();
    const attempts = fake.attemptsOf(failed.guid);
    expect(attempts.map((attempt) => attempt.redelivery)).toEqual([false, true]);
    expect(attempts[0].statusCode).toBe(0);
    expect(attempts[1].statusCode).toBe(202);
    expect(await r.deliveryRows('github')).toHaveLength(1);
    expect(h.capture.logs('recovery').some((line) => line.redelivered === 1)).toBe(true);
    // The GUID now has a 2xx attempt: not asked for again.
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', redelivered: 0 });
  });

  test('a secondary rate limit (403 with retry-after) stops the run where it was; the next run recovers, once', async () => {
    const inbox = await r.githubInbox(fake, secret);
    await fake.emit('issues', { action: 'opened', issue: { number: 3 } });
    await fake.emit('issues', { action: 'opened', issue: { number: 4 } });
    fake.inject(403, { retryAfterSeconds: 60 });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'rate_limited', recovered: 0 });
    expect(await r.deliveryRows('github')).toHaveLength(0);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 2 });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 0 });
    expect(await r.deliveryRows('github')).toHaveLength(2);
  });

  test('a token close to its hourly limit is left alone: the run stops at the reserve', async () => {
    const inbox = await r.githubInbox(fake, secret);
    await fake.emit('issues', { action: 'opened', issue: { number: 6 } });
    fake.setRemaining(100);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'rate_limited', recovered: 0, cursorMoved: true });
    expect(await r.deliveryRows('github')).toHaveLength(0);
  });

  test('a deleted hook (404) is recorded and not asked again; the stall grows until the alarm', async () => {
    const inbox = await r.githubInbox(fake, secret);
    fake.hookExists = false;
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'gone' });
    const asked = fake.requests.length;
    const later = await r.reconcile(inbox, 2 * 3600_000);
    expect(later).toMatchObject({ outcome: 'skipped_gone' });
    expect(later.stalledSeconds).toBeGreaterThanOrEqual(2 * 3600);
    expect(fake.requests).toHaveLength(asked);
  });
});

// ---------------------------------------------------------------------------------------------
describe('Stripe: retries, then gives up; the events API keeps 30 days', () => {
  let fake: FakeStripe;
  let secret: string;
  beforeEach(async () => {
    secret = stripeSecret();
    fake = new FakeStripe({ secret, attempts: 3 });
    await fake.start();
  });
  afterEach(() => fake.stop());

  test('events Stripe gave up on are admitted by id, marked recovered; a late signed retry is a duplicate', async () => {
    const inbox = await r.stripeInbox(fake, secret);
    const given = await fake.emit('invoice.paid', { id: 'in_1', object: 'invoice', amount_paid: 1200 });
    fake.endpointUrl = await r.endpointFor(inbox);
    await fake.emit('invoice.paid', { id: 'in_2', object: 'invoice', amount_paid: 800 });
    expect(fake.attempts.filter((attempt) => attempt.eventId === given.id)).toHaveLength(3);

    const report = await r.reconcile(inbox);
    expect(report).toMatchObject({ outcome: 'complete', recovered: 1 });
    const rows = await r.deliveryRows('stripe');
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.pk === `stripe#${given.id}`)).toMatchObject({ recovered: true });
    // Only undelivered events are listed.
    expect(fake.requests[0].query).toContain('delivery_success=false');

    // Stripe's own retry after all (as Stripe renders it, signed): the same event.
    const body = Buffer.from(JSON.stringify(given, null, 2));
    const t = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
    const verifier = h.verifier({ providers: [inbox.provider] });
    const answer = answerOf(await verifier(apiGatewayEvent(body, { 'stripe-signature': `t=${t},v1=${signature}` }, { path: '/hooks/stripe' })));
    expect(answer).toMatchObject({ statusCode: 200, result: 'duplicate' });
    expect(await r.deliveryRows('stripe')).toHaveLength(2);
  });

  test('pages of 100 are followed with starting_after; types the endpoint does not receive are not listed', async () => {
    const inbox = await r.stripeInbox(fake, secret, { eventTypes: ['charge.succeeded'] });
    for (let i = 0; i < 205; i++) await fake.emit('charge.succeeded', { id: `ch_${i}`, object: 'charge' });
    await fake.emit('customer.created', { id: 'cus_1', object: 'customer' });
    const report = await r.reconcile(inbox);
    expect(report).toMatchObject({ outcome: 'complete', recovered: 205 });
    expect(fake.requests.filter((request) => request.path === '/v1/events')).toHaveLength(3);
    expect(fake.requests.every((request) => request.query.includes('types%5B%5D=charge.succeeded'))).toBe(true);
    expect(await r.deliveryRows('stripe')).toHaveLength(205);
  });

  test('a 429 stops the run with the cursor where it was; the next run recovers everything, once', async () => {
    const inbox = await r.stripeInbox(fake, secret);
    await fake.emit('invoice.paid', { id: 'in_3', object: 'invoice' });
    fake.inject(429);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'rate_limited', recovered: 0 });
    expect(h.capture.logs('recovery').some((line) => line.detail === 'http_429')).toBe(true);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 1 });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 0 });
    expect(await r.deliveryRows('stripe')).toHaveLength(1);
  });

  test('a run that fails part-way counts what it admitted; the next run recovers the rest, once', async () => {
    const inbox = await r.stripeInbox(fake, secret);
    await fake.emit('invoice.paid', { id: 'in_4', object: 'invoice' });
    const second = await fake.emit('invoice.paid', { id: 'in_5', object: 'invoice' });
    const faults = await h.faults();
    // The second admission's write is throttled past the SDK's retries: the run fails there.
    faults.throttle({ where: (call) => JSON.stringify(call.input).includes(second.id), calls: await h.sdkAttempts('dynamodb') });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'failed', recovered: 1 });
    expect(h.capture.metric(MetricName.RECOVERED, 'stripe')).toBe(1);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 1, held: 1 });
    expect(h.capture.metric(MetricName.RECOVERED, 'stripe')).toBe(2);
    expect(await r.deliveryRows('stripe')).toHaveLength(2);
  });

  test('refused credentials and error bodies are reported by type, never by message', async () => {
    const inbox = await r.stripeInbox(fake, secret);
    const wrong = await secrets.create('rk_test_not_the_key_000000000');
    const report = await r.reconcile({ ...inbox, recovery: { ...inbox.recovery, credentialsSecretId: wrong.id } });
    expect(report).toMatchObject({ outcome: 'failed' });
    expect(h.capture.logs('recovery').at(-1)).toMatchObject({ detail: 'http_401:invalid_request_error' });
  });

  test('two runs at once: every event admitted once, and the cursor moved by one of them', async () => {
    const inbox = await r.stripeInbox(fake, secret);
    for (let i = 0; i < 40; i++) await fake.emit('invoice.paid', { id: `in_c${i}`, object: 'invoice' });
    h.clock.set(Date.now());
    const run = () => h.reconcilerOf({ providers: [inbox.provider], recovery: [inbox.recovery] })();
    const [a, b] = await Promise.all([run(), run()]);
    const reports = [a.recovery![0], b.recovery![0]];
    expect(reports.filter((report) => report.cursorMoved)).toHaveLength(1);
    expect(reports[0].recovered + reports[1].recovered).toBe(40);
    expect(await r.deliveryRows('stripe')).toHaveLength(40);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 0 });
  });

  test('a cursor older than Stripe keeps events is reported, not silently skipped', async () => {
    const inbox = await r.stripeInbox(fake, secret);
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete' });
    await r.reconcile(inbox, 31 * 86_400_000);
    expect(h.capture.metric(MetricName.RECOVERY_BEYOND_RETENTION, 'stripe')).toBe(1);
  });

  test('an event is left to Stripe for the settle time before it is recovered', async () => {
    const inbox = await r.stripeInbox(fake, secret, { settleSeconds: 900 });
    await fake.emit('invoice.paid', { id: 'in_4', object: 'invoice' });
    expect(await r.reconcile(inbox)).toMatchObject({ outcome: 'complete', recovered: 0 });
    expect(await r.reconcile(inbox, 901_000)).toMatchObject({ outcome: 'complete', recovered: 1 });
  });
});
