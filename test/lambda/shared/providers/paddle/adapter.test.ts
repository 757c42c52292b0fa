import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Paddle } from '@paddle/paddle-node-sdk';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { paddleAdapter } from '../../../../../lambda/shared/providers/paddle/adapter';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { flipByte, HeaderMap, tamperSignature } from '../../../../support/senders';

const HEADER = 'paddle-signature';

/**
 * The vectors of Paddle's own Node.js SDK tests (webhooks validator, "Valid signature" and
 * "Valid signature with multiple hashes"): secret, bodies, their `Paddle-Signature` headers.
 */
const PADDLE_VECTOR = {
  secret: 'VALID_SECRET',
  timestamp: 1698796800,
  body: '{"data": ["1", "2"]}',
  header: 'ts=1698796800;h1=a300428748dce5c70e4da19bffd60769591ea969c99dea3105d0ec9612cf43f9',
  /** The same body with spaces added: its signature no longer matches. */
  spacedBody: '{ "data": [ "1", "2" ]}',
  multiple: {
    body: '{"data": "value"}',
    header:
      'ts=1698796800;h1=28981e941fae76e53db32f3d2a83cb69db41476595e84e1970a1b5d98f62b261;h1=28981e941fae76e53db32f3d2a83cb69db41476595e84e1970a1b5d98f62b261;h2=RANDOM_HASH',
  },
} as const;

/** A notification destination's endpoint secret key, as Paddle issues it (used as text). */
const paddleSecret = () => `pdl_ntfset_${randomBytes(13).toString('hex').slice(0, 26)}_${randomBytes(24).toString('base64url')}`;

const ulid = () => randomUUID().replace(/-/g, '').slice(0, 26);
const transactionPaid = (note: string, eventId = `evt_${ulid()}`) => ({
  event_id: eventId,
  event_type: 'transaction.paid',
  occurred_at: '2026-09-18T10:00:00.000000Z',
  notification_id: `ntf_${ulid()}`,
  data: { id: `txn_${ulid()}`, status: 'paid', currency_code: 'EUR', custom_data: { note } },
});

/** `Paddle-Signature` by Paddle's rule restated here: `ts=<unix>`, then one `h1=<hex HMAC-SHA256 of "ts:body">` per secret. */
function paddleHeaders(body: Buffer, timestamp: number, ...secrets: string[]): HeaderMap {
  const h1 = secrets.map((secret) => `h1=${createHmac('sha256', secret).update(`${timestamp}:`).update(body).digest('hex')}`);
  return { [HEADER]: [`ts=${timestamp}`, ...h1].join(';') };
}

/** Replaces the `ts=` pair of a `Paddle-Signature` header. */
const withTimestampPart = (part: string) => (headers: HeaderMap) => ({ [HEADER]: [part, ...headers[HEADER].split(';').slice(1)].join(';') });

const spec: PresetSpec = {
  name: 'paddle',
  adapter: AdapterKind.PADDLE,
  eventType: 'transaction.paid',
  newSecret: paddleSecret,
  payload: transactionPaid,
  // Paddle signs every attempt anew: a retry is the same body under a fresh ts.
  sign: (body, secret, timestamp) => paddleHeaders(body, timestamp, secret),
  eventId: (body) => (JSON.parse(body.toString('utf8')) as { event_id: string }).event_id,
  signatureHeader: HEADER,
  timestampField: `header ${HEADER} ts=`,
  malformed: [
    ['a missing Paddle-Signature', () => ({ [HEADER]: undefined }), HEADER],
    ['a Paddle-Signature that is no list of pairs', () => ({ [HEADER]: 'garbage' }), HEADER],
    ['no ts= pair', (h) => ({ [HEADER]: h[HEADER].split(';').slice(1).join(';') }), HEADER],
    ['two ts= pairs', (h) => ({ [HEADER]: `ts=1;${h[HEADER]}` }), HEADER],
    ['a ts= in milliseconds', (h) => withTimestampPart(`${h[HEADER].split(';')[0]}000`)(h), HEADER],
    ['an empty ts=', withTimestampPart('ts='), HEADER],
    ['pairs separated by commas', (h) => ({ [HEADER]: h[HEADER].replace(';', ',') }), HEADER],
    ['no h1 signature (only h2)', (h) => ({ [HEADER]: h[HEADER].replace('h1=', 'h2=') }), HEADER],
    ['a truncated h1', (h) => ({ [HEADER]: h[HEADER].slice(0, -2) }), HEADER],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

describe("the vectors of Paddle's SDK", () => {
  test('verify() accepts them at their ts (any h1 may match, h2 ignored); the spaced body, another secret and a flipped byte are bad_signature', () => {
    const { adapter, keys } = bench.adapter(PADDLE_VECTOR.secret);
    const at = PADDLE_VECTOR.timestamp;
    const body = Buffer.from(PADDLE_VECTOR.body);

    expect(paddleHeaders(body, at, PADDLE_VECTOR.secret)[HEADER]).toBe(PADDLE_VECTOR.header);
    expect(adapter.verify({ [HEADER]: PADDLE_VECTOR.header }, body, keys, at)).toMatchObject({ ok: true, key: keys[0] });
    expect(adapter.verify({ [HEADER]: PADDLE_VECTOR.multiple.header }, Buffer.from(PADDLE_VECTOR.multiple.body), keys, at)).toMatchObject({
      ok: true,
      key: keys[0],
    });
    expect(adapter.verify({ [HEADER]: PADDLE_VECTOR.header }, Buffer.from(PADDLE_VECTOR.spacedBody), keys, at)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(adapter.verify({ [HEADER]: PADDLE_VECTOR.header }, flipByte(body), keys, at)).toMatchObject({ ok: false, reason: 'bad_signature' });
    const other = bench.adapter('INVALID_VALID_SECRET');
    expect(other.adapter.verify({ [HEADER]: PADDLE_VECTOR.header }, body, other.keys, at)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  test("with the preset's 5 s: valid 5 s after its ts, stale 6 s after (the SDK's own boundaries), and long after", () => {
    const adapter = paddleAdapter({ ...bench.config, tolerancePastSeconds: 5 });
    const keys = adapter.signingKeys([{ stage: 'AWSCURRENT', value: PADDLE_VECTOR.secret }]);
    const body = Buffer.from(PADDLE_VECTOR.body);
    const headers = { [HEADER]: PADDLE_VECTOR.header };

    expect(adapter.verify(headers, body, keys, PADDLE_VECTOR.timestamp + 5)).toMatchObject({ ok: true, key: keys[0] });
    for (const late of [6, 4 * 86_400]) {
      expect(adapter.verify(headers, body, keys, PADDLE_VECTOR.timestamp + late)).toEqual({
        ok: false,
        reason: 'stale_timestamp',
        detail: `header ${HEADER} ts= is older than the tolerance`,
      });
    }
  });
});

describe("Paddle's SDK judges the same deliveries", () => {
  const paddle = new Paddle('pdl_sdbx_apikey_test');
  // The SDK reads the real clock: these deliveries are signed now.
  const now = () => Math.floor(Date.now() / 1000);

  test('a fresh delivery is valid for both; a flipped byte or another secret is invalid for both', async () => {
    const body = bench.bytes(transactionPaid('Grüße aus Köln 🚀'));
    const headers = paddleHeaders(body, now(), bench.secret);
    const { adapter, keys } = bench.adapter();

    expect(await paddle.webhooks.isSignatureValid(body.toString('utf8'), bench.secret, headers[HEADER])).toBe(true);
    expect(adapter.verify(headers, body, keys, now())).toMatchObject({ ok: true, key: keys[0] });
    expect(await paddle.webhooks.isSignatureValid(flipByte(body).toString('utf8'), bench.secret, headers[HEADER])).toBe(false);
    expect(adapter.verify(headers, flipByte(body), keys, now())).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(await paddle.webhooks.isSignatureValid(body.toString('utf8'), paddleSecret(), headers[HEADER])).toBe(false);
  });

  test('during a rotation either secret verifies here, whichever h1 comes first (the SDK reads only the last)', async () => {
    const old = paddleSecret();
    const body = bench.bytes(transactionPaid('rotating'));
    const header = paddleHeaders(body, now(), old, bench.secret)[HEADER];
    expect(header).toMatch(/^ts=\d+;h1=[0-9a-f]{64};h1=[0-9a-f]{64}$/);

    expect(await paddle.webhooks.isSignatureValid(body.toString('utf8'), bench.secret, header)).toBe(true);
    for (const secret of [old, bench.secret]) {
      const { adapter, keys } = bench.adapter(secret);
      expect(adapter.verify({ [HEADER]: header }, body, keys, now())).toMatchObject({ ok: true, key: keys[0] });
    }
  });
});

describe('the event id is the body event_id', () => {
  test('a retry (the same body, re-signed an hour later) is a duplicate; the same event_id with another body is quarantined', async () => {
    const event = transactionPaid('an order');
    const first = await bench.deliver(bench.bytes(event));
    bench.h.clock.advance(3_600_000);
    const retry = await bench.deliver(bench.bytes(event));
    const altered = await bench.deliver(bench.bytes({ ...event, event_type: 'transaction.completed' }));

    expect([first, retry, altered].map((answer) => answer.result)).toEqual(['accepted', 'duplicate', 'quarantined']);
    expect(await bench.h.takeMessages()).toEqual([bench.key(event.event_id)]);
    expect(bench.h.capture.metric(MetricName.QUARANTINED, 'paddle')).toBe(1);
  });

  test('a signature whose ts was tampered with is bad_signature: the ts is signed', async () => {
    const body = bench.bytes(transactionPaid('tampered ts'));
    const headers = await bench.sign(body);
    const later = headers[HEADER].replace(/^ts=(\d+)/, (_, ts: string) => `ts=${Number(ts) + 1}`);
    expect(await bench.post(body, { [HEADER]: later })).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(await bench.post(body, { [HEADER]: tamperSignature(headers[HEADER]) })).toMatchObject({ statusCode: 400, result: 'bad_signature' });
  });

  test.each([
    ['no event_id', { event_type: 'transaction.paid', data: { id: 'txn_1' } }],
    ['a numeric event_id', { event_id: 42, event_type: 'transaction.paid' }],
  ])('a verified body with %s is answered 400 naming the field; nothing is stored', async (_name, payload) => {
    expect(await bench.deliver(bench.bytes(payload))).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringContaining('event_id') });
    await bench.h.expectNothingAdmitted();
  });
});
