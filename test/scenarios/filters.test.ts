/**
 * Filters at the edge, against the emulators. The rules, stated here on their own:
 * - a verified delivery whose event type is not listed (Stripe names it in the body's `type`,
 *   GitHub in the `X-GitHub-Event` header, Slack in `event.type`), or whose body does not meet
 *   the predicate, is answered 200 with exactly `{"result":"filtered"}`, leaves no inbox item and
 *   no work message, is counted `Filtered` for its provider, and its delivery record says
 *   `filtered` with its event type, `not_stored` and a valid signature;
 * - a kept delivery is stored as without a filter;
 * - the filter never runs before authentication: a badly signed delivery of a dropped type is
 *   refused 400, never answered `filtered`.
 */
import { randomUUID } from 'node:crypto';
import { AdapterKind, MetricName, ProviderRuntimeConfig } from '../../lib/contract';
import { apiGatewayEvent, InboxHarness, SecretsFixture } from '../support/inbox-fixture';
import { githubHeaders, stripeHeaders, stripeSecret, textSecret } from '../support/senders';

const secrets = new SecretsFixture();
let h: InboxHarness;
let stripe: { config: ProviderRuntimeConfig; secret: string };
let github: { config: ProviderRuntimeConfig; secret: string };

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'filters');
  const stripeValue = stripeSecret();
  const githubValue = textSecret();
  stripe = {
    secret: stripeValue,
    config: await h.addProvider('stripe', AdapterKind.STRIPE, stripeValue, { filter: { eventTypes: ['payment_intent.succeeded'] } }),
  };
  github = {
    secret: githubValue,
    config: await h.addProvider('github', AdapterKind.GITHUB, githubValue, {
      filter: { eventTypes: ['pull_request', 'push'], predicate: { op: 'in', path: 'repository.full_name', values: ['acme/api'] } },
    }),
  };
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const stripeEvent = (type: string) =>
  Buffer.from(JSON.stringify({ id: `evt_${randomUUID().replace(/-/g, '')}`, object: 'event', type, data: { object: { id: 'pi_1' } } }));
const githubEvent = (repository: string) =>
  Buffer.from(JSON.stringify({ action: 'opened', repository: { full_name: repository }, sender: { login: 'octocat' } }));

async function post(path: string, body: Buffer, headers: Record<string, string>): Promise<{ statusCode: number; body: string }> {
  h.markSensitive(body.toString('utf8'));
  const response = await h.verifier({ providers: [stripe.config, github.config] })(apiGatewayEvent(body, headers, { path }));
  return { statusCode: response.statusCode!, body: String(response.body) };
}

const postStripe = (body: Buffer, secret = stripe.secret) => post('/hooks/stripe', body, stripeHeaders(body, h.clock.seconds, secret));
const postGithub = async (body: Buffer, event: string) => post('/hooks/github', body, await githubHeaders(body, github.secret, event));

test('a type the provider does not keep: 200 filtered, nothing stored or enqueued, counted, and in the delivery record', async () => {
  expect(await postStripe(stripeEvent('customer.created'))).toEqual({ statusCode: 200, body: '{"result":"filtered"}' });
  await h.expectNothingAdmitted();
  expect(h.capture.metric(MetricName.FILTERED, 'stripe')).toBe(1);
  expect(h.capture.metric(MetricName.ACCEPTED)).toBe(0);
  expect(h.capture.logs('delivery')).toEqual([
    expect.objectContaining({
      Provider: 'stripe',
      reason: 'filtered',
      status: 200,
      eventType: 'customer.created',
      signatureResult: 'valid',
      dedupeResult: 'not_stored',
    }),
  ]);
});

test('a kept type is stored as without a filter', async () => {
  const body = stripeEvent('payment_intent.succeeded');
  expect(await postStripe(body)).toMatchObject({ statusCode: 202 });
  expect((await h.inboxItems()).map((item) => item.pk)).toEqual([`stripe#${JSON.parse(body.toString()).id}`]);
  expect(h.capture.metric(MetricName.FILTERED)).toBe(0);
});

test('the type in a header (GitHub) and a predicate on the body: both must keep the delivery', async () => {
  const answers = [
    await postGithub(githubEvent('acme/api'), 'pull_request'),
    await postGithub(githubEvent('acme/api'), 'issues'),
    await postGithub(githubEvent('acme/website'), 'push'),
  ];
  expect(answers.map((answer) => answer.statusCode)).toEqual([202, 200, 200]);
  expect(answers.slice(1).map((answer) => JSON.parse(answer.body))).toEqual([{ result: 'filtered' }, { result: 'filtered' }]);
  expect(await h.inboxItems()).toHaveLength(1);
  expect(h.capture.metric(MetricName.FILTERED, 'github')).toBe(2);
  expect(h.capture.logs('delivery').map((line) => [line.reason, line.eventType])).toEqual([
    ['accepted', 'pull_request'],
    ['filtered', 'issues'],
    ['filtered', 'push'],
  ]);
});

test('the filter never runs before authentication: a badly signed delivery of a dropped type is refused 400, not filtered', async () => {
  const answer = await postStripe(stripeEvent('customer.created'), stripeSecret());
  expect(answer.statusCode).toBe(400);
  expect(JSON.parse(answer.body)).toMatchObject({ result: 'bad_signature' });
  expect(h.capture.metric(MetricName.FILTERED)).toBe(0);
  expect(h.capture.logs('delivery')[0]).not.toHaveProperty('eventType');
  await h.expectNothingAdmitted();
});
