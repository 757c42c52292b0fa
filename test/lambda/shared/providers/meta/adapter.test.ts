/**
 * Meta: notifications signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body with the
 * app secret>` (stated here, as Meta documents it), keyed by the body's digest; the unsigned GET
 * subscription check answered with its challenge, as plain text, only for the configured verify token.
 */
import { createHmac } from 'node:crypto';
import { AdapterKind, DeliveryStatus, MetricName, ProviderRuntimeConfig, providerRuntimeConfig } from '../../../../../lib/contract';
import { metaKey } from '../../../../../lambda/shared/providers/meta/adapter';
import { answerOf, apiGatewayEvent, InboxHarness, SecretsFixture, sha256Hex } from '../../../../support/inbox-fixture';

const APP_SECRET = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
const VERIFY_TOKEN = 'my-verify-token-9k2';
const PATH = '/hooks/meta';

const secrets = new SecretsFixture();
let h: InboxHarness;
let config: ProviderRuntimeConfig;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'meta');
  const { id } = await secrets.create(JSON.stringify({ appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN }));
  config = providerRuntimeConfig({ name: 'meta', adapter: AdapterKind.META, secretId: id });
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const whatsappBody = (messageId = 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=') =>
  JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', messages: [{ id: messageId, type: 'text', text: { body: 'Grüße 👋' } }] } }],
      },
    ],
  });
const signed = (body: string, secret = APP_SECRET) => ({ 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` });
/** Meta's GET, as API Gateway hands it over: no body, no signature, the query as sent. */
const check = (query: string) => {
  const event = apiGatewayEvent('', {}, { path: PATH });
  return { ...event, rawQueryString: query, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, method: 'GET' } } };
};

describe('a notification', () => {
  test('signed with the app secret is stored once, keyed by the digest of its body; a retry is a duplicate', async () => {
    const verifier = h.verifier({ providers: [config] });
    const body = whatsappBody();
    expect(answerOf(await verifier(apiGatewayEvent(body, signed(body), { path: PATH })))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(answerOf(await verifier(apiGatewayEvent(body, signed(body), { path: PATH })))).toMatchObject({ statusCode: 200, result: 'duplicate' });
    const [row] = await h.inboxItems();
    expect(row).toMatchObject({ pk: `meta#${sha256Hex(body)}`, status: DeliveryStatus.RECEIVED });
    expect(JSON.stringify(row.meta)).not.toContain('sha256=');
  });

  test('with one flipped byte, or signed with another secret, or unsigned, is refused and nothing is stored', async () => {
    const verifier = h.verifier({ providers: [config] });
    const body = whatsappBody();
    const flipped = body.replace('Grüße', 'Grüsse');
    expect(answerOf(await verifier(apiGatewayEvent(flipped, signed(body), { path: PATH })))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(answerOf(await verifier(apiGatewayEvent(body, signed(body, 'another-secret'), { path: PATH })))).toMatchObject({
      statusCode: 400,
      result: 'bad_signature',
    });
    expect(answerOf(await verifier(apiGatewayEvent(body, {}, { path: PATH })))).toMatchObject({
      statusCode: 400,
      detail: expect.stringContaining('x-hub-signature-256'),
    });
    expect(await h.inboxItems()).toEqual([]);
  });
});

describe('the subscription check (GET)', () => {
  test('is answered 200 with hub.challenge as plain text when hub.verify_token is the configured one; nothing is stored', async () => {
    const response = await h.verifier({ providers: [config] })(check(`hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`));
    expect(response).toMatchObject({ statusCode: 200, headers: { 'content-type': 'text/plain' }, body: '1158201444' });
    expect(h.capture.metric(MetricName.HANDSHAKE, 'meta')).toBe(1);
    expect(await h.inboxItems()).toEqual([]);
  });

  test.each([
    ['a wrong verify token', `hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1158201444`],
    ['no verify token', `hub.mode=subscribe&hub.challenge=1158201444`],
    ['another mode', `hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`],
    ['no challenge', `hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}`],
  ])('with %s is refused 403, counted as an authentication failure', async (_case, query) => {
    const answer = answerOf(await h.verifier({ providers: [config] })(check(query)));
    expect(answer).toMatchObject({ statusCode: 403, result: 'subscription_refused' });
    expect(h.capture.metric(MetricName.AUTHENTICATION_FAILED, 'meta')).toBe(1);
  });
});

test('the stored secret must be the JSON of an app secret and a verify token', () => {
  expect(metaKey(JSON.stringify({ appSecret: 'a', verifyToken: 'b' }))).toMatchObject({ verifyToken: 'b' });
  expect(() => metaKey('just-an-app-secret')).toThrow(/JSON/);
  expect(() => metaKey(JSON.stringify({ appSecret: 'a' }))).toThrow(/verifyToken/);
  expect(() => metaKey(JSON.stringify({ verifyToken: 'b', appSecret: '' }))).toThrow(/appSecret/);
});
