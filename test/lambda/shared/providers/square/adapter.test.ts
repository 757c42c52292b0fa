/**
 * Square: every signature made with node:crypto (HMAC-SHA256 of the notification URL and the body)
 * and confirmed by Square's own SDK (`WebhooksHelper.verifySignature` of the `square` package)
 * before it is sent; Square's published test vectors, from its SDKs' test suites, verified as is.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { WebhooksHelper } from 'square';
import { AdapterKind, Env, providerRuntimeConfig } from '../../../../../lib/contract';
import { adaptersFor } from '../../../../../lambda/shared/providers/registry';
import { providersFromEnv } from '../../../../../lambda/shared/runtime/config';
import { ConfigurationError } from '../../../../../lambda/shared/runtime/errors';
import { answerOf } from '../../../../support/inbox-fixture';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { flipByte, HeaderMap, tamperSignature } from '../../../../support/senders';

const SIGNATURE = 'x-square-hmacsha256-signature';
/** The notification URL as registered with Square: a custom domain in front of the API. */
const NOTIFICATION_URL = 'https://hooks.example.com/hooks/square';

/** The example of Square's SDK tests (square-nodejs-sdk and square-python-sdk, webhook signature validation). */
const SQUARE_VECTOR = {
  body: '{"merchant_id":"MLEFBHHSJGVHD","type":"webhooks.test_notification","event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2022-07-13T20:30:59.037339943Z","data":{"type":"webhooks","id":"bc368e64-01aa-407e-b46e-3231809b1129"}}',
  signature: 'GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4=',
  signatureKey: 'Ibxx_5AKakO-3qeNVR61Dw',
  notificationUrl: 'https://webhook.site/679a4f3a-dcfa-49ee-bac5-9d0edad886b9',
  eventId: 'ac3ac95b-f97d-458c-a6e6-18981597e05f',
} as const;

/** The same suites' body with characters a JSON encoder may escape (`>`, `<`): signed as sent. */
const SQUARE_ESCAPED_VECTOR = {
  body: '{"data":{"type":"webhooks","id":">id<"}}',
  signature: 'Cxt7+aTi4rKgcA0bC4g9EHdVtLSDWdqccmL5MvihU4U=',
  signatureKey: 'signature-key',
  notificationUrl: 'https://webhook.site/webhooks',
} as const;

/** A signature key as Square's Developer Console shows it: 22 base64url characters. */
const newSignatureKey = () => randomBytes(16).toString('base64url');

/** The headers Square sends: base64 HMAC-SHA256 of URL + body, confirmed by Square's own SDK; a retry says so. */
async function squareHeaders(body: Buffer, signatureKey: string, url = NOTIFICATION_URL, retry?: HeaderMap): Promise<HeaderMap> {
  const signature = createHmac('sha256', signatureKey).update(url).update(body).digest('base64');
  expect(await WebhooksHelper.verifySignature({ requestBody: body.toString('utf8'), signatureHeader: signature, signatureKey, notificationUrl: url })).toBe(
    true,
  );
  return {
    [SIGNATURE]: signature,
    'square-environment': 'Sandbox',
    'square-initial-delivery-timestamp': retry?.['square-initial-delivery-timestamp'] ?? new Date().toISOString(),
    ...(retry ? { 'square-retry-number': '1', 'square-retry-reason': 'http_timeout' } : {}),
    'user-agent': 'Square Connect v2',
  };
}

const paymentUpdated = (note: string, eventId = randomUUID()) => ({
  merchant_id: '6SSW7HV8K2ST5',
  type: 'payment.updated',
  event_id: eventId,
  created_at: '2026-09-18T10:00:00.000Z',
  data: {
    type: 'payment',
    id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY',
    object: { payment: { id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY', amount_money: { amount: 2000, currency: 'EUR' }, note, status: 'COMPLETED', version: 2 } },
  },
});

const spec: PresetSpec = {
  name: 'square',
  adapter: AdapterKind.SQUARE,
  eventType: 'payment.updated',
  config: { notificationUrl: NOTIFICATION_URL },
  newSecret: newSignatureKey,
  payload: paymentUpdated,
  sign: (body, signatureKey, _timestamp, retryOf) => squareHeaders(body, signatureKey, NOTIFICATION_URL, retryOf),
  eventId: (body) => (JSON.parse(body.toString('utf8')) as { event_id: string }).event_id,
  signatureHeader: SIGNATURE,
  // Square signs no timestamp: there is no freshness to judge.
  malformed: [
    ['a missing signature', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a hex signature', (h) => ({ [SIGNATURE]: Buffer.from(h[SIGNATURE], 'base64').toString('hex') }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -4) }), SIGNATURE],
    ['a signature with a sha256= prefix', (h) => ({ [SIGNATURE]: `sha256=${h[SIGNATURE]}` }), SIGNATURE],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

describe("Square's published test vectors", () => {
  test("Square's SDK accepts them, and so does verify() with their notification URL; a flipped byte, another URL or another key is bad_signature", async () => {
    for (const vector of [SQUARE_VECTOR, SQUARE_ESCAPED_VECTOR]) {
      const { body, signature, signatureKey, notificationUrl } = vector;
      expect(await WebhooksHelper.verifySignature({ requestBody: body, signatureHeader: signature, signatureKey, notificationUrl })).toBe(true);
      const adapter = adaptersFor([{ ...bench.config, notificationUrl }]).get('square')!;
      const keys = adapter.signingKeys([{ stage: 'AWSCURRENT', value: signatureKey }]);
      const headers = { [SIGNATURE]: signature };

      expect(adapter.verify(headers, Buffer.from(body), keys, 0)).toEqual({ ok: true, key: keys[0] });
      expect(adapter.verify(headers, flipByte(body), keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
      expect(adapter.verify({ [SIGNATURE]: tamperSignature(signature) }, Buffer.from(body), keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
      const elsewhere = adaptersFor([{ ...bench.config, notificationUrl: `${notificationUrl}/` }]).get('square')!;
      expect(elsewhere.verify(headers, Buffer.from(body), keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
      const otherKey = adapter.signingKeys([{ stage: 'AWSCURRENT', value: 'MCmhFRxGX82xMwg5FsaoQA' }]);
      expect(adapter.verify(headers, Buffer.from(body), otherKey, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
    }
  });

  test('through the verifier the first one is stored under its event_id, byte-exactly', async () => {
    const config = await bench.h.addProvider('square', AdapterKind.SQUARE, SQUARE_VECTOR.signatureKey, { notificationUrl: SQUARE_VECTOR.notificationUrl });
    const verifier = bench.h.verifier({ providers: [config] });

    expect(await bench.post(SQUARE_VECTOR.body, { [SIGNATURE]: SQUARE_VECTOR.signature }, {}, verifier)).toEqual({ statusCode: 202, result: 'accepted' });
    expect((await bench.row(SQUARE_VECTOR.eventId))!.body).toEqual(Buffer.from(SQUARE_VECTOR.body));
  });
});

describe('the notification URL is what is signed, not the request', () => {
  test('a delivery signed for another URL (the API stage URL, a trailing slash, http) is bad_signature, wherever it arrives', async () => {
    const body = bench.bytes(paymentUpdated('signed elsewhere'));
    for (const url of [
      'https://abc123.execute-api.eu-west-1.amazonaws.com/hooks/square',
      `${NOTIFICATION_URL}/`,
      NOTIFICATION_URL.replace('https:', 'http:'),
    ]) {
      const headers = await squareHeaders(body, bench.secret, url);
      bench.h.markSensitive(headers[SIGNATURE]);
      expect(await bench.post(body, headers)).toMatchObject({
        statusCode: 400,
        result: 'bad_signature',
        detail: `header ${SIGNATURE} matches no signing secret`,
      });
    }
    // Signed for the configured URL, it is accepted at the API's own path, prefixed by a stage.
    const headers = await bench.sign(body);
    expect(await bench.post(body, headers, { path: '/prod/hooks/square' })).toEqual({ statusCode: 202, result: 'accepted' });
  });
});

describe('events and deliveries', () => {
  test('no timestamp is signed: even with zero tolerance a day-old delivery verifies, and replaying it stores nothing new', async () => {
    const verifier = bench.verifier({ tolerancePastSeconds: 0, toleranceFutureSeconds: 0 });
    const body = bench.bytes(paymentUpdated('an old notification'));
    const first = await bench.deliver(body, { verifier });
    bench.h.clock.advance(86_400_000);

    expect(first).toMatchObject({ statusCode: 202 });
    expect(await bench.post(body, first.headers, {}, verifier)).toEqual({ statusCode: 200, result: 'duplicate' });
    expect(await bench.h.inboxItems()).toHaveLength(1);
  });

  test('a retry keeps the event_id: a duplicate; another event is a row of its own', async () => {
    const event = paymentUpdated('retried');
    const first = await bench.deliver(bench.bytes(event));
    bench.h.clock.advance(60_000);
    const retry = await bench.deliver(bench.bytes(event), { retryOf: first.headers });
    const other = await bench.deliver(bench.bytes(paymentUpdated('another')));

    expect([first, retry, other].map((answer) => answer.result)).toEqual(['accepted', 'duplicate', 'accepted']);
    expect(await bench.h.inboxItems()).toHaveLength(2);
  });

  test.each([
    ['no event_id', { merchant_id: 'M', type: 'payment.updated', data: {} }],
    ['a numeric event_id', { merchant_id: 'M', type: 'payment.updated', event_id: 42 }],
  ])('a verified body with %s is answered 400 naming the field; nothing is stored', async (_name, payload) => {
    expect(await bench.deliver(bench.bytes(payload))).toMatchObject({ statusCode: 400, result: 'malformed', detail: 'event_id is missing or not a string' });
    await bench.h.expectNothingAdmitted();
  });

  test("the row keeps Square's environment and retry headers, never a signature (nor the legacy SHA-1 one)", async () => {
    const body = bench.bytes(paymentUpdated('a retried notification'));
    const firstAttempt = { 'square-initial-delivery-timestamp': '2026-09-18T10:00:01.000Z' };
    const headers = { ...(await bench.sign(body, { retryOf: firstAttempt })), 'x-square-signature': 'legacySha1SignatureValue0000=' };

    expect(await bench.post(body, headers)).toEqual({ statusCode: 202, result: 'accepted' });
    const row = await bench.expectStored(body, headers);
    expect(row.meta).toEqual({
      'square-environment': 'Sandbox',
      'square-initial-delivery-timestamp': '2026-09-18T10:00:01.000Z',
      'square-retry-number': '1',
      'square-retry-reason': 'http_timeout',
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'Square Connect v2',
    });
  });
});

describe('the notification URL in the runtime configuration', () => {
  const config = (notificationUrl?: string) =>
    providerRuntimeConfig({ name: 'square', adapter: AdapterKind.SQUARE, secretId: 'arn:aws:secretsmanager:eu-west-1:000000000000:secret:s', notificationUrl });

  test.each([
    [undefined, 'is required: the URL the provider signs, exactly as registered with it'],
    ['http://hooks.example.com/hooks/square', 'must be an https:// URL'],
    ['hooks.example.com/hooks/square', 'is not a URL'],
    ['https://hooks.example.com/hooks/{body}', 'holds a character no URL holds unencoded (a space, a brace, non-ASCII): give it as the provider shows it'],
    ['https://hooks.example.com/hooks/square ', 'holds a character no URL holds unencoded (a space, a brace, non-ASCII): give it as the provider shows it'],
  ])('%s is refused at cold start, naming the field', (notificationUrl, problem) => {
    expect(() => providersFromEnv({ [Env.PROVIDERS]: JSON.stringify([config(notificationUrl)]) })).toThrow(
      new ConfigurationError(`${Env.PROVIDERS}[0].notificationUrl ${problem}`),
    );
  });

  test('an https URL with a query is taken as written; an adapter cannot be made without one', () => {
    const url = 'https://hooks.example.com/hooks/square?source=square';
    expect(providersFromEnv({ [Env.PROVIDERS]: JSON.stringify([config(url)]) })).toEqual([config(url)]);
    expect(() => adaptersFor([config()])).toThrow(new ConfigurationError('provider square: notificationUrl is required'));
  });

  test('a stored value that answers verify(): the signature key is used as text, any non-empty value', async () => {
    const { adapter } = bench.adapter();
    expect(() => adapter.signingKeys([{ stage: 'AWSCURRENT', value: '' }])).toThrow('signing secret is empty');
    const body = bench.bytes(paymentUpdated('keyed by text'));
    expect(answerOf(await bench.verifier()(bench.event(body, await bench.sign(body))))).toEqual({ statusCode: 202, result: 'accepted' });
  });
});
