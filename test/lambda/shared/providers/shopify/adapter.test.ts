import { createHmac, randomInt, randomUUID } from 'node:crypto';
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import { getHmac } from '@shopify/shopify-api/test-helpers';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { sha256Hex } from '../../../../support/inbox-fixture';
import { flipByte, HeaderMap, tamperSignature, textSecret } from '../../../../support/senders';

const SIGNATURE = 'x-shopify-hmac-sha256';
const WEBHOOK_ID = 'x-shopify-webhook-id';
const TOPIC = 'x-shopify-topic';

/**
 * The example of Shopify's own library tests ("shopify.webhooks.validate returns true for valid
 * request"): the body, the test configuration's API secret key, and the HMAC it validates.
 */
const SHOPIFY_LIBRARY_EXAMPLE = {
  secret: 'test_secret_key',
  body: '{"foo": "bar"}',
  hmac: 'B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g=',
} as const;

const orderCreated = (note: string) => ({
  id: randomInt(1e9, 1e10),
  admin_graphql_api_id: `gid://shopify/Order/${randomInt(1e9)}`,
  email: 'jon@example.com',
  note,
  total_price: '12.50',
  currency: 'EUR',
  line_items: [{ id: randomInt(1e9), title: 'Mug', quantity: 2, price: '6.25' }],
});

/** Shopify's delivery headers, the HMAC from the library's own signing helper; a retry keeps its webhook id. */
function shopifyHeaders(body: Buffer, secret: string, webhookId: string = randomUUID()): HeaderMap {
  return {
    [TOPIC]: 'orders/create',
    [SIGNATURE]: getHmac(body.toString('utf8'), secret),
    'x-shopify-shop-domain': 'example.myshopify.com',
    'x-shopify-api-version': '2025-01',
    [WEBHOOK_ID]: webhookId,
    'x-shopify-event-id': randomUUID(),
    'x-shopify-triggered-at': '2026-09-18T10:00:00.000000000Z',
  };
}

const spec: PresetSpec = {
  name: 'shopify',
  adapter: AdapterKind.SHOPIFY,
  eventType: 'orders/create',
  newSecret: textSecret,
  payload: orderCreated,
  sign: (body, secret, _timestamp, retryOf) => shopifyHeaders(body, secret, retryOf?.[WEBHOOK_ID]),
  // Shopify signs the body only: the inbox key is its digest, never the unsigned webhook id.
  eventId: (body) => sha256Hex(body),
  signatureHeader: SIGNATURE,
  // Shopify signs no timestamp: there is no freshness to judge.
  malformed: [
    ['a missing X-Shopify-Hmac-Sha256', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a hex signature instead of base64', (h) => ({ [SIGNATURE]: Buffer.from(h[SIGNATURE], 'base64').toString('hex') }), SIGNATURE],
    ['a signature with a sha256= prefix', (h) => ({ [SIGNATURE]: `sha256=${h[SIGNATURE]}` }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -4) }), SIGNATURE],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

describe("Shopify's own library", () => {
  const validatorFor = (secret: string) =>
    shopifyApi({
      apiKey: 'test_key',
      apiSecretKey: secret,
      scopes: [],
      hostName: 'localhost',
      apiVersion: ApiVersion.January25,
      isEmbeddedApp: false,
      logger: { level: LogSeverity.Error, log: () => undefined },
    }).webhooks;
  const validate = (secret: string, body: Buffer, headers: HeaderMap) =>
    validatorFor(secret).validate({
      rawBody: body.toString('utf8'),
      rawRequest: { method: 'POST', url: '/hooks/shopify', headers } as never,
      rawResponse: {} as never,
    });

  test('its test example verifies, the rule restated (base64 HMAC-SHA256 of the raw body) gives it, one changed byte is bad_signature', () => {
    const { adapter, keys } = bench.adapter(SHOPIFY_LIBRARY_EXAMPLE.secret);
    const body = Buffer.from(SHOPIFY_LIBRARY_EXAMPLE.body);
    const headers = { [SIGNATURE]: SHOPIFY_LIBRARY_EXAMPLE.hmac };

    expect(createHmac('sha256', SHOPIFY_LIBRARY_EXAMPLE.secret).update(body).digest('base64')).toBe(SHOPIFY_LIBRARY_EXAMPLE.hmac);
    expect(adapter.verify(headers, body, keys, 0)).toEqual({ ok: true, key: keys[0] });
    expect(adapter.verify(headers, flipByte(body), keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({ [SIGNATURE]: tamperSignature(SHOPIFY_LIBRARY_EXAMPLE.hmac) }, body, keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  test('webhooks.validate judges the same deliveries as verify(): a signed one valid, a flipped byte or another secret invalid', async () => {
    const { adapter, keys } = bench.adapter();
    const body = bench.bytes(orderCreated('Grüße aus Köln 🚀'));
    const headers = await bench.sign(body);

    expect(await validate(bench.secret, body, headers)).toMatchObject({ valid: true, topic: 'ORDERS_CREATE', webhookId: headers[WEBHOOK_ID] });
    expect(adapter.verify(headers, body, keys, 0)).toEqual({ ok: true, key: keys[0] });
    expect(await validate(bench.secret, flipByte(body), headers)).toMatchObject({ valid: false });
    expect(adapter.verify(headers, flipByte(body), keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(await validate(textSecret(), body, headers)).toMatchObject({ valid: false });
  });
});

describe('events and deliveries', () => {
  test('a retry (same payload, same webhook id) and a replay under a fresh webhook id are duplicates: nothing signs the id', async () => {
    const body = bench.bytes(orderCreated('retried by Shopify'));
    const first = await bench.deliver(body);
    bench.h.clock.advance(3_600_000);
    const retry = await bench.deliver(body, { retryOf: first.headers });
    const replayed = await bench.post(body, { ...first.headers, [WEBHOOK_ID]: randomUUID() });

    expect([first, retry, replayed].map((answer) => answer.result)).toEqual(['accepted', 'duplicate', 'duplicate']);
    expect(await bench.h.takeMessages()).toEqual([bench.key(sha256Hex(body))]);
    // The row keeps the first delivery's headers, for Shopify's delivery log.
    expect((await bench.row(sha256Hex(body)))!.meta).toMatchObject({ [WEBHOOK_ID]: first.headers[WEBHOOK_ID], [TOPIC]: 'orders/create' });
  });

  test('no timestamp is signed: with zero tolerance a day-old delivery verifies, and its replay stores nothing new', async () => {
    const verifier = bench.verifier({ tolerancePastSeconds: 0, toleranceFutureSeconds: 0 });
    const body = bench.bytes(orderCreated('an old delivery'));
    const first = await bench.deliver(body, { verifier });
    bench.h.clock.advance(86_400_000);

    expect(first).toMatchObject({ statusCode: 202 });
    expect(await bench.post(body, first.headers, {}, verifier)).toEqual({ statusCode: 200, result: 'duplicate' });
    expect(await bench.h.inboxItems()).toHaveLength(1);
  });

  test('the body need not be JSON, and a delivery without X-Shopify-Webhook-Id is stored all the same', async () => {
    const body = Buffer.from('not json at all');
    const headers = await bench.sign(body);
    expect(await bench.post(body, { ...headers, [WEBHOOK_ID]: undefined })).toEqual({ statusCode: 202, result: 'accepted' });
    expect(bench.h.capture.metric(MetricName.ACCEPTED, 'shopify')).toBe(1);
  });

  test('the row keeps the topic, webhook, event and trigger headers, never the HMAC', async () => {
    const body = bench.bytes(orderCreated('meta'));
    const answer = await bench.deliver(body);

    const row = await bench.expectStored(body, answer.headers);
    expect(row.meta).toMatchObject({
      [TOPIC]: 'orders/create',
      [WEBHOOK_ID]: answer.headers[WEBHOOK_ID],
      'x-shopify-event-id': answer.headers['x-shopify-event-id'],
      'x-shopify-triggered-at': answer.headers['x-shopify-triggered-at'],
      'x-shopify-shop-domain': 'example.myshopify.com',
    });
  });
});
