import { randomBytes, randomUUID } from 'node:crypto';
import { AdapterKind, DeliveryStatus, HmacRuntimeSettings, providerRuntimeConfig, ProviderRuntimeConfig } from '../../../../../lib/contract';
import { HmacAlgorithm, HmacProviderOptions, SecretEncoding, SignatureEncoding } from '../../../../../lib/provider';
import { hmacRuntimeSettings } from '../../../../../lib/private/provider-runtime';
import { adaptersFor } from '../../../../../lambda/shared/providers/registry';
import { sha256Hex } from '../../../../support/inbox-fixture';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { flipByte, HeaderMap, hmacText, signedContent, tamperSignature, textSecret } from '../../../../support/senders';

/** The runtime config the construct derives from `hmac()` provider options. */
function hmacConfig(options: HmacProviderOptions, name = 'hmac'): ProviderRuntimeConfig {
  return providerRuntimeConfig({ name, adapter: AdapterKind.HMAC, secretId: 'unused', hmac: hmacRuntimeSettings(options) });
}

const NOW = 1_789_000_000;

describe('every scheme the generic adapter describes, signed independently with node:crypto', () => {
  const templates = ['{body}', '{timestamp}.{body}', '{id}.{timestamp}.{body}'];
  const cases = [HmacAlgorithm.SHA256, HmacAlgorithm.SHA512].flatMap((algorithm) =>
    [SignatureEncoding.HEX, SignatureEncoding.BASE64].flatMap((encoding) =>
      ['', `${algorithm}=`].flatMap((prefix) =>
        templates.flatMap((template) =>
          [SecretEncoding.UTF8, SecretEncoding.BASE64].map((secretEncoding) => ({ algorithm, encoding, prefix, template, secretEncoding })),
        ),
      ),
    ),
  );

  test.each(cases)(
    '$algorithm $encoding, prefix "$prefix", "$template", $secretEncoding secret',
    ({ algorithm, encoding, prefix, template, secretEncoding }) => {
      const usesTimestamp = template.includes('{timestamp}');
      const usesId = template.includes('{id}');
      const config = hmacConfig({
        signatureHeader: 'X-Signature',
        algorithm,
        signatureEncoding: encoding,
        signaturePrefix: prefix || undefined,
        signedContent: template,
        timestampHeader: usesTimestamp ? 'X-Timestamp' : undefined,
        // The id comes from a header when it is signed, else from a JSON path of the body.
        idHeader: usesId ? 'X-Event-Id' : undefined,
        idJsonPath: usesId ? undefined : 'event.id',
        secretEncoding,
      });
      const keyBytes = randomBytes(32);
      const stored = secretEncoding === SecretEncoding.BASE64 ? keyBytes.toString('base64') : keyBytes.toString('hex');
      const key = secretEncoding === SecretEncoding.BASE64 ? keyBytes : Buffer.from(stored, 'utf8');
      const adapter = adaptersFor([config]).get('hmac')!;
      const keys = adapter.signingKeys([{ stage: 'AWSCURRENT', value: stored }]);
      const body = Buffer.from(JSON.stringify({ event: { id: 'evt_42', text: 'Grüße 🚀' } }));
      const values = { timestamp: String(NOW), id: 'evt_header_7' };
      const headers: HeaderMap = {
        'x-signature': `${prefix}${hmacText(algorithm, encoding, key, signedContent(template, body, values))}`,
        ...(usesTimestamp ? { 'x-timestamp': values.timestamp } : {}),
        ...(usesId ? { 'x-event-id': values.id } : {}),
      };
      const bad = { ok: false, reason: 'bad_signature', detail: expect.stringContaining('x-signature') };

      expect(adapter.verify(headers, body, keys, NOW)).toMatchObject({ ok: true, key: keys[0] });
      expect(adapter.verify(headers, flipByte(body), keys, NOW)).toEqual(bad);
      expect(adapter.verify({ ...headers, 'x-signature': tamperSignature(headers['x-signature']) }, body, keys, NOW)).toEqual(bad);
      if (usesTimestamp) expect(adapter.verify({ ...headers, 'x-timestamp': String(NOW - 1) }, body, keys, NOW)).toEqual(bad);
      if (usesId) expect(adapter.verify({ ...headers, 'x-event-id': 'evt_header_8' }, body, keys, NOW)).toEqual(bad);
      // The secret's encoding matters: the same text read the other way is another key.
      const otherWay = adaptersFor([
        { ...config, hmac: { ...config.hmac!, secretEncoding: secretEncoding === SecretEncoding.BASE64 ? 'utf8' : 'base64' } },
      ]).get('hmac')!;
      expect(otherWay.verify(headers, body, otherWay.signingKeys([{ stage: 'AWSCURRENT', value: stored }]), NOW)).toEqual(bad);
      expect(adapter.admit(headers, body)).toEqual({ kind: 'event', eventId: usesId ? 'evt_header_7' : 'evt_42' });
    },
  );

  test('a base64 secret may carry a whsec_ prefix, as several senders print it', () => {
    const keyBytes = randomBytes(24);
    const config = hmacConfig({
      signatureHeader: 'X-Signature',
      signatureEncoding: SignatureEncoding.BASE64,
      idJsonPath: 'id',
      secretEncoding: SecretEncoding.BASE64,
    });
    const adapter = adaptersFor([config]).get('hmac')!;
    const body = Buffer.from('{"id":"evt_1"}');
    const headers = { 'x-signature': hmacText('sha256', 'base64', keyBytes, body) };

    for (const stored of [`whsec_${keyBytes.toString('base64')}`, keyBytes.toString('base64')]) {
      expect(adapter.verify(headers, body, adapter.signingKeys([{ stage: 'AWSCURRENT', value: stored }]), NOW).ok).toBe(true);
    }
    expect(() => adapter.signingKeys([{ stage: 'AWSCURRENT', value: 'not base64 at all!' }])).toThrow();
  });

  test('the timestamp is signed as the header text the sender wrote (zero-padded too)', () => {
    const config = hmacConfig({ signatureHeader: 'X-Signature', signedContent: '{timestamp}.{body}', timestampHeader: 'X-Timestamp', idJsonPath: 'id' });
    const adapter = adaptersFor([config]).get('hmac')!;
    const secret = textSecret();
    const keys = adapter.signingKeys([{ stage: 'AWSCURRENT', value: secret }]);
    const body = Buffer.from('{"id":"evt_1"}');
    const padded = `00${NOW}`;
    const headers = {
      'x-signature': hmacText('sha256', 'hex', secret, signedContent('{timestamp}.{body}', body, { timestamp: padded })),
      'x-timestamp': padded,
    };

    expect(adapter.verify(headers, body, keys, NOW).ok).toBe(true);
    expect(adapter.verify({ ...headers, 'x-timestamp': String(NOW) }, body, keys, NOW)).toMatchObject({ reason: 'bad_signature' });
  });

  test('several signatures in one header (a secret roll), comma or space separated: any may match', () => {
    const config = hmacConfig({ signatureHeader: 'X-Signature', signaturePrefix: 'sha256=', idJsonPath: 'id' });
    const adapter = adaptersFor([config]).get('hmac')!;
    const secret = textSecret();
    const body = Buffer.from('{"id":"evt_1"}');
    const good = `sha256=${hmacText('sha256', 'hex', secret, body)}`;
    const other = `sha256=${hmacText('sha256', 'hex', textSecret(), body)}`;
    const keys = adapter.signingKeys([{ stage: 'AWSCURRENT', value: secret }]);

    for (const list of [`${other},${good}`, `${good} ${other}`, `${other}, ${good}`]) {
      expect(adapter.verify({ 'x-signature': list }, body, keys, NOW).ok).toBe(true);
    }
  });
});

describe('Slack-style: X-Slack-Signature v0= hex of v0:{timestamp}:{body}, id from the JSON path event_id', () => {
  const SIGNATURE = 'x-slack-signature';
  const TIMESTAMP = 'x-slack-request-timestamp';
  const config = hmacConfig(
    {
      signatureHeader: 'X-Slack-Signature',
      signaturePrefix: 'v0=',
      signedContent: 'v0:{timestamp}:{body}',
      timestampHeader: 'X-Slack-Request-Timestamp',
      idJsonPath: 'event_id',
    },
    'slack',
  );
  const spec: PresetSpec = {
    name: 'slack',
    adapter: AdapterKind.HMAC,
    config: { hmac: config.hmac },
    newSecret: textSecret,
    payload: (note) => ({
      token: 'XXYYZZ',
      team_id: 'T0001',
      api_app_id: 'A0001',
      event: { type: 'message', channel: 'C0001', user: 'U0001', text: note, ts: '1789000000.000100' },
      type: 'event_callback',
      event_id: `Ev${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`,
      event_time: 1789000000,
    }),
    // Computed as Slack documents it, by hand: 'v0=' + hex HMAC-SHA256 of `v0:${timestamp}:${body}`.
    sign: (body, secret, timestamp) => ({
      [TIMESTAMP]: String(timestamp),
      [SIGNATURE]: `v0=${hmacText('sha256', 'hex', secret, Buffer.concat([Buffer.from(`v0:${timestamp}:`), body]))}`,
    }),
    eventId: (body) => (JSON.parse(body.toString('utf8')) as { event_id: string }).event_id,
    signatureHeader: SIGNATURE,
    timestampField: `header ${TIMESTAMP}`,
    malformed: [
      ['a missing X-Slack-Signature', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
      ['another version prefix (v1=)', (h) => ({ [SIGNATURE]: h[SIGNATURE].replace('v0=', 'v1=') }), SIGNATURE],
      ['a missing X-Slack-Request-Timestamp', () => ({ [TIMESTAMP]: undefined }), TIMESTAMP],
      ['a garbled X-Slack-Request-Timestamp', () => ({ [TIMESTAMP]: 'now' }), TIMESTAMP],
    ],
  };
  const bench = PresetBench.use(spec);

  presetContract(bench);

  test('the id is read from the JSON path; a verified body without it is answered 400 naming the path', async () => {
    const payload = spec.payload('a message') as { event_id: string };
    const accepted = await bench.deliver(bench.bytes(payload));
    const { event_id: _omitted, ...withoutId } = payload;

    expect(accepted).toMatchObject({ statusCode: 202 });
    expect(await bench.row(payload.event_id)).toMatchObject({ status: DeliveryStatus.RECEIVED });
    expect(await bench.deliver(bench.bytes(withoutId))).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringContaining('event_id') });
    expect(await bench.h.inboxItems()).toHaveLength(1);
  });
});

describe('Shopify-style: X-Shopify-Hmac-Sha256 base64 of the body only, id from X-Shopify-Webhook-Id', () => {
  const SIGNATURE = 'x-shopify-hmac-sha256';
  const ID = 'x-shopify-webhook-id';
  const config = hmacConfig(
    {
      signatureHeader: 'X-Shopify-Hmac-Sha256',
      signatureEncoding: SignatureEncoding.BASE64,
      idHeader: 'X-Shopify-Webhook-Id',
      acknowledgeUnsignedIdHeader: true,
    },
    'shopify',
  );
  const shopifyHeaders = (body: Buffer, secret: string, id: string = randomUUID()): HeaderMap => ({
    'x-shopify-topic': 'orders/create',
    'x-shopify-shop-domain': 'example.myshopify.com',
    'x-shopify-api-version': '2025-07',
    [ID]: id,
    'x-shopify-triggered-at': '2026-09-18T10:00:00.000Z',
    // Computed as Shopify documents it, by hand: base64 HMAC-SHA256 of the raw body.
    [SIGNATURE]: hmacText('sha256', 'base64', secret, body),
  });
  const spec: PresetSpec = {
    name: 'shopify',
    adapter: AdapterKind.HMAC,
    config: { hmac: config.hmac },
    newSecret: textSecret,
    payload: (note) => ({ id: Math.floor(Math.random() * 1e12), email: 'jon@example.com', note, total_price: '254.98', currency: 'EUR' }),
    sign: (body, secret, _timestamp, retryOf) => shopifyHeaders(body, secret, retryOf?.[ID]),
    // The id header is not signed: deliveries are deduplicated by the digest of their body.
    eventId: (body) => sha256Hex(body),
    signatureHeader: SIGNATURE,
    malformed: [
      ['a missing X-Shopify-Hmac-Sha256', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
      ['a hex signature where base64 is configured', (h) => ({ [SIGNATURE]: Buffer.from(h[SIGNATURE], 'base64').toString('hex') }), SIGNATURE],
    ],
  };
  const bench = PresetBench.use(spec);

  presetContract(bench);

  test('no timestamp header is configured: freshness is not judged, and a replay is a duplicate', async () => {
    const verifier = bench.verifier({ tolerancePastSeconds: 0, toleranceFutureSeconds: 0 });
    const body = bench.bytes(spec.payload('an order'));
    const first = await bench.deliver(body, { verifier });
    bench.h.clock.advance(86_400_000);

    expect(first).toMatchObject({ statusCode: 202 });
    expect(await bench.post(body, first.headers, {}, verifier)).toEqual({ statusCode: 200, result: 'duplicate' });
  });

  test('the same signed body replayed under a fresh X-Shopify-Webhook-Id is a duplicate; the row keeps the first id', async () => {
    const body = bench.bytes(spec.payload('an order'));
    const first = await bench.deliver(body);
    const replayed = await bench.post(body, { ...first.headers, [ID]: randomUUID() });

    expect([first.result, replayed.result]).toEqual(['accepted', 'duplicate']);
    expect(await bench.h.inboxItems()).toHaveLength(1);
    expect((await bench.row(sha256Hex(body)))!.meta).toMatchObject({ [ID]: first.headers[ID] });
  });

  test('raw bytes that are not UTF-8 (base64-encoded by API Gateway) verify and are stored byte-exactly', async () => {
    const body = Buffer.concat([Buffer.from('{"note":"'), Buffer.from([0xff, 0xfe, 0x00, 0xc3]), Buffer.from('"}')]);
    const headers = shopifyHeaders(body, bench.secret);
    bench.h.markSensitive(headers[SIGNATURE]);

    expect(await bench.post(body, headers, { base64: true })).toEqual({ statusCode: 202, result: 'accepted' });
    const row = await bench.expectStored(body, headers);
    expect(row.meta).toMatchObject({ [ID]: headers[ID] });
  });
});

describe('{id}.{timestamp}.{body}, SHA-512 base64 with a prefix, a whsec_ base64 secret, through the verifier', () => {
  const SIGNATURE = 'x-webhook-signature';
  const scheme: HmacRuntimeSettings = hmacConfig({
    signatureHeader: 'X-Webhook-Signature',
    algorithm: HmacAlgorithm.SHA512,
    signatureEncoding: SignatureEncoding.BASE64,
    signaturePrefix: 'sha512=',
    signedContent: '{id}.{timestamp}.{body}',
    timestampHeader: 'X-Webhook-Timestamp',
    idHeader: 'X-Webhook-Id',
    secretEncoding: SecretEncoding.BASE64,
  }).hmac!;
  const spec: PresetSpec = {
    name: 'acme',
    adapter: AdapterKind.HMAC,
    config: { hmac: scheme },
    newSecret: () => `whsec_${randomBytes(32).toString('base64')}`,
    payload: (note) => ({ type: 'invoice.paid', data: { note } }),
    sign: (body, secret, timestamp, retryOf) => {
      const id = retryOf?.['x-webhook-id'] ?? `evt_${randomUUID()}`;
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      return {
        'x-webhook-id': id,
        'x-webhook-timestamp': String(timestamp),
        [SIGNATURE]: `sha512=${hmacText('sha512', 'base64', key, signedContent('{id}.{timestamp}.{body}', body, { id, timestamp: String(timestamp) }))}`,
      };
    },
    eventId: (_body, headers) => headers['x-webhook-id'],
    signatureHeader: SIGNATURE,
    timestampField: 'header x-webhook-timestamp',
    malformed: [
      ['a missing X-Webhook-Id', () => ({ 'x-webhook-id': undefined }), 'x-webhook-id'],
      ['an over-long X-Webhook-Id', () => ({ 'x-webhook-id': 'e'.repeat(300) }), 'x-webhook-id'],
      ['a SHA-256 length signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, 'sha512='.length + 44) }), SIGNATURE],
    ],
  };
  const bench = PresetBench.use(spec);

  presetContract(bench);
});
