/**
 * Twilio: the signature covers the webhook URL as configured in Twilio, with the query Twilio
 * requested, and the POST parameters sorted by name (a JSON body through its `bodySHA256` query
 * parameter). Twilio's own library signs here (getExpectedTwilioSignature) and judges
 * (validateRequest, validateRequestWithBody); Twilio's documented example must verify.
 */
import { createHash } from 'node:crypto';
import twilio from 'twilio';
import { AdapterKind, ProviderRuntimeConfig, providerRuntimeConfig } from '../../../../../lib/contract';
import { answerOf, apiGatewayEvent, InboxHarness, restApiEvent, SecretsFixture, sha256Hex } from '../../../../support/inbox-fixture';

/** The example of Twilio's security documentation: Auth Token, URL, parameters and the signature it computes. */
const EXAMPLE = {
  authToken: '12345',
  webhookUrl: 'https://mycompany.com/myapp.php',
  query: 'foo=1&bar=2',
  params: { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' },
  signature: '0/KCTR6DLpKmkAf8muzZqo1nDgQ=',
  /** What the example signs: the URL with its query, then each parameter's name and value, sorted by name. */
  signedContent: 'https://mycompany.com/myapp.php?foo=1&bar=2CallSidCA1234567890ABCDECaller+12349013030Digits1234From+12349013030To+18005551212',
};
const PATH = '/hooks/twilio';
const FORM = 'application/x-www-form-urlencoded';

const secrets = new SecretsFixture();
let h: InboxHarness;
let config: ProviderRuntimeConfig;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'twilio');
  const { id } = await secrets.create(EXAMPLE.authToken);
  config = providerRuntimeConfig({ name: 'twilio', adapter: AdapterKind.TWILIO, secretId: id, notificationUrl: EXAMPLE.webhookUrl });
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

/** A request as API Gateway hands it over: the form body, the query Twilio requested, the signature header. */
function request(body: string, query: string, signature: string, contentType = FORM) {
  const event = apiGatewayEvent(
    body,
    { 'content-type': contentType, 'x-twilio-signature': signature, 'i-twilio-idempotency-token': 'f1d2c3b4' },
    { path: PATH },
  );
  return { ...event, rawQueryString: query };
}
const form = (params: Record<string, string>) => new URLSearchParams(params).toString();

test("Twilio's documented example verifies, and its library agrees", async () => {
  const url = `${EXAMPLE.webhookUrl}?${EXAMPLE.query}`;
  expect(twilio.getExpectedTwilioSignature(EXAMPLE.authToken, url, EXAMPLE.params)).toBe(EXAMPLE.signature);
  const body = form(EXAMPLE.params);
  expect(answerOf(await h.verifier({ providers: [config] })(request(body, EXAMPLE.query, EXAMPLE.signature)))).toEqual({ statusCode: 202, result: 'accepted' });
  const [row] = await h.inboxItems();
  // Twilio signs no id: the key is the digest of what it signs.
  expect(row).toMatchObject({ pk: `twilio#${sha256Hex(EXAMPLE.signedContent)}`, digest: sha256Hex(body) });
  expect(JSON.stringify(row.meta)).not.toContain(EXAMPLE.signature);
});

test('a retry (the same parameters) is a duplicate; the same parameters in other bytes sign the same and are that event, quarantined', async () => {
  const verifier = h.verifier({ providers: [config] });
  const params = { MessageSid: 'SM0123456789abcdef0123456789abcdef', MessageStatus: 'delivered', To: '+15558675310', Body: 'Grüße 👋 & more' };
  const signature = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, EXAMPLE.webhookUrl, params);
  expect(answerOf(await verifier(request(form(params), '', signature)))).toEqual({ statusCode: 202, result: 'accepted' });
  expect(answerOf(await verifier(request(form(params), '', signature)))).toMatchObject({ statusCode: 200, result: 'duplicate' });
  const reordered = form({ To: params.To, Body: params.Body, MessageStatus: params.MessageStatus, MessageSid: params.MessageSid });
  // Spaces as %20 instead of +, an escaped letter: other bytes, the same parameters.
  const escapedOtherwise = form(params).replace(/\+/g, '%20').replace('MessageStatus=d', 'MessageStatus=%64');
  for (const copy of [reordered, escapedOtherwise]) {
    expect(twilio.validateRequest(EXAMPLE.authToken, signature, EXAMPLE.webhookUrl, Object.fromEntries(new URLSearchParams(copy)))).toBe(true);
    expect(answerOf(await verifier(request(copy, '', signature)))).toEqual({ statusCode: 200, result: 'quarantined' });
  }
  const items = await h.inboxItems();
  // One row, as first stored, and one quarantined copy per other body.
  expect(items.map((item) => String(item.sk)).sort()).toEqual(
    ['delivery', 'quarantine#' + sha256Hex(escapedOtherwise), 'quarantine#' + sha256Hex(reordered)].sort(),
  );
});

test('a form body is read as a form, not as a query: a leading ? stays in the first name', async () => {
  const verifier = h.verifier({ providers: [config] });
  const body = '?Body=hello&MessageSid=SM1';
  const signature = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, EXAMPLE.webhookUrl, { '?Body': 'hello', MessageSid: 'SM1' });
  expect(answerOf(await verifier(request(body, '', signature)))).toEqual({ statusCode: 202, result: 'accepted' });
  const stripped = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, EXAMPLE.webhookUrl, { Body: 'hello', MessageSid: 'SM1' });
  expect(answerOf(await verifier(request(body, '', stripped)))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
});

test('a body that is neither form-encoded nor hashed into the URL is refused: a signature over the URL alone covers no bytes', async () => {
  const verifier = h.verifier({ providers: [config] });
  const urlOnly = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, `${EXAMPLE.webhookUrl}?${EXAMPLE.query}`, {});
  for (const contentType of ['application/json', 'text/plain']) {
    expect(answerOf(await verifier(request('{"forged":true}', EXAMPLE.query, urlOnly, contentType)))).toMatchObject({
      statusCode: 400,
      result: 'malformed',
      detail: expect.stringContaining('header content-type'),
    });
  }
  expect(await h.inboxItems()).toEqual([]);
  // An empty body carries nothing unsigned.
  expect(answerOf(await verifier(request('', EXAMPLE.query, urlOnly, 'text/plain')))).toEqual({ statusCode: 202, result: 'accepted' });
});

test('a flipped parameter, another URL, another query or another token is refused, and nothing is stored', async () => {
  const verifier = h.verifier({ providers: [config] });
  const url = `${EXAMPLE.webhookUrl}?${EXAMPLE.query}`;
  const flipped = form({ ...EXAMPLE.params, Digits: '1235' });
  expect(twilio.validateRequest(EXAMPLE.authToken, EXAMPLE.signature, url, Object.fromEntries(new URLSearchParams(flipped)))).toBe(false);
  for (const [body, query, signature] of [
    [flipped, EXAMPLE.query, EXAMPLE.signature],
    [form(EXAMPLE.params), 'foo=1&bar=3', EXAMPLE.signature],
    [form(EXAMPLE.params), EXAMPLE.query, twilio.getExpectedTwilioSignature('another-token', url, EXAMPLE.params)],
    [
      form(EXAMPLE.params),
      EXAMPLE.query,
      twilio.getExpectedTwilioSignature(EXAMPLE.authToken, `https://other.example.com/myapp.php?${EXAMPLE.query}`, EXAMPLE.params),
    ],
  ]) {
    expect(answerOf(await verifier(request(body, query, signature)))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
  }
  expect(answerOf(await verifier(request(form(EXAMPLE.params), EXAMPLE.query, 'not base64!')))).toMatchObject({
    statusCode: 400,
    detail: expect.stringContaining('x-twilio-signature'),
  });
  expect(await h.inboxItems()).toEqual([]);
});

test('a JSON body is covered by its bodySHA256 in the signed URL: the body must hash to it', async () => {
  const verifier = h.verifier({ providers: [config] });
  const body = JSON.stringify({ event_type: 'com.twilio.messaging.message.delivered', data: { messageSid: 'SM11' } });
  const query = `bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
  const signature = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, `${EXAMPLE.webhookUrl}?${query}`, {});
  expect(twilio.validateRequestWithBody(EXAMPLE.authToken, signature, `${EXAMPLE.webhookUrl}?${query}`, body)).toBe(true);
  expect(answerOf(await verifier(request(body, query, signature, 'application/json')))).toEqual({ statusCode: 202, result: 'accepted' });
  const altered = body.replace('SM11', 'SM12');
  expect(answerOf(await verifier(request(altered, query, signature, 'application/json')))).toMatchObject({
    statusCode: 400,
    detail: expect.stringContaining('bodySHA256'),
  });
});

describe('behind a REST API ingress, whose event carries the query only decoded, its parameters in an order of their own', () => {
  const CONFIGURED = 'https://mycompany.com/myapp.php?tenant=acme&at=10:30&debug&note=a%20b&n=2&n=1';
  /** The same parameters as API Gateway passes them: decoded, grouped by name, not in the order sent. */
  const DECODED = { note: ['a b'], n: ['2', '1'], debug: [''], at: ['10:30'], tenant: ['acme'] };
  const restRequest = (body: string, query: Record<string, readonly string[]>, signature: string, contentType = FORM) =>
    restApiEvent(body, { 'Content-Type': contentType, 'X-Twilio-Signature': signature }, { path: PATH, query });

  test('a webhookUrl configured with its query verifies whatever characters the query holds, and is one event with the same request through an HTTP API', async () => {
    const configured = { ...config, notificationUrl: CONFIGURED };
    const verifier = h.verifier({ providers: [configured] });
    const signature = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, CONFIGURED, EXAMPLE.params);
    const body = form(EXAMPLE.params);
    expect(answerOf(await verifier(restRequest(body, DECODED, signature)))).toEqual({ statusCode: 202, result: 'accepted' });
    // What Twilio signed: the configured URL as written, then the sorted parameters.
    const signedContent = `${CONFIGURED}${EXAMPLE.signedContent.slice(EXAMPLE.signedContent.indexOf('CallSid'))}`;
    expect((await h.inboxItems()).map((row) => row.pk)).toEqual([`twilio#${sha256Hex(signedContent)}`]);
    // The HTTP API passes the query as sent: the same request is the same event.
    expect(answerOf(await verifier(request(body, CONFIGURED.slice(CONFIGURED.indexOf('?') + 1), signature)))).toMatchObject({
      statusCode: 200,
      result: 'duplicate',
    });

    // A JSON body: Twilio appends bodySHA256 to the configured URL.
    const json = JSON.stringify({ event_type: 'com.twilio.messaging.message.delivered', data: { messageSid: 'SM12' } });
    const hash = createHash('sha256').update(json).digest('hex');
    const jsonSignature = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, `${CONFIGURED}&bodySHA256=${hash}`, {});
    expect(answerOf(await verifier(restRequest(json, { ...DECODED, bodySHA256: [hash] }, jsonSignature, 'application/json')))).toEqual({
      statusCode: 202,
      result: 'accepted',
    });
  });

  test('a query other than the configured one is rebuilt as a form encodes it: written that way it verifies, written otherwise it is refused naming the fix', async () => {
    const verifier = h.verifier({ providers: [config] });
    // Letters and digits are written alike by every encoder: Twilio's documented example verifies.
    expect(answerOf(await verifier(restRequest(form(EXAMPLE.params), { foo: ['1'], bar: ['2'] }, EXAMPLE.signature)))).toEqual({
      statusCode: 202,
      result: 'accepted',
    });
    for (const [query, decoded] of [
      ['tenant=acme&at=10:30', { tenant: ['acme'], at: ['10:30'] }],
      ['tenant=acme&debug', { tenant: ['acme'], debug: [''] }],
      ['note=a%20b', { note: ['a b'] }],
    ] as const) {
      const signature = twilio.getExpectedTwilioSignature(EXAMPLE.authToken, `${EXAMPLE.webhookUrl}?${query}`, EXAMPLE.params);
      expect(answerOf(await verifier(restRequest(form(EXAMPLE.params), decoded, signature)))).toEqual({
        statusCode: 400,
        result: 'bad_signature',
        detail:
          "header x-twilio-signature matches no auth token (the query is not webhookUrl's, and verifies only as sent: behind a REST API ingress, which passes it decoded, configure webhookUrl with the query Twilio requests)",
      });
    }
    expect(await h.inboxItems()).toHaveLength(1);
  });
});
