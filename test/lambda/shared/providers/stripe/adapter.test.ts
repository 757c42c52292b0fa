import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { AdapterKind, DeliveryStatus, MetricName } from '../../../../../lib/contract';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { HeaderMap, stripeHeaders, stripeSecret } from '../../../../support/senders';

const HEADER = 'stripe-signature';

const stripeEvent = (note: string, id = `evt_${randomUUID().replace(/-/g, '')}`) => ({
  id,
  object: 'event',
  api_version: '2025-08-27.basil',
  created: 1789000000,
  data: { object: { id: `pi_${randomUUID().replace(/-/g, '')}`, object: 'payment_intent', amount: 2000, currency: 'eur', description: note } },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type: 'payment_intent.succeeded',
});

/** Replaces the part of a `Stripe-Signature` header before its v1 entries. */
const withTimestampPart = (part: string) => (headers: HeaderMap) => ({ [HEADER]: `${part},${headers[HEADER].split(',').slice(1).join(',')}` });

const spec: PresetSpec = {
  name: 'stripe',
  adapter: AdapterKind.STRIPE,
  eventType: 'payment_intent.succeeded',
  newSecret: stripeSecret,
  payload: stripeEvent,
  sign: (body, secret, timestamp) => stripeHeaders(body, timestamp, secret),
  eventId: (body) => (JSON.parse(body.toString('utf8')) as { id: string }).id,
  signatureHeader: HEADER,
  timestampField: `header ${HEADER} t=`,
  malformed: [
    ['a missing Stripe-Signature', () => ({ [HEADER]: undefined }), HEADER],
    ['a Stripe-Signature that is no list of pairs', () => ({ [HEADER]: 'garbage' }), HEADER],
    ['no t= pair', (h) => ({ [HEADER]: h[HEADER].split(',').slice(1).join(',') }), HEADER],
    ['two t= pairs', (h) => ({ [HEADER]: `t=1,${h[HEADER]}` }), HEADER],
    ['a t= in milliseconds', (h) => withTimestampPart(`${h[HEADER].split(',')[0]}000`)(h), HEADER],
    ['an empty t=', withTimestampPart('t='), HEADER],
    ['no v1 signature (only v0)', (h) => ({ [HEADER]: h[HEADER].replace('v1=', 'v0=') }), HEADER],
    ['a truncated v1', (h) => ({ [HEADER]: h[HEADER].slice(0, -2) }), HEADER],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

const stripe = new Stripe('sk_test_x');

describe('the event id is the body id', () => {
  test('a retry of the event is a duplicate; another event is a row of its own', async () => {
    const event = stripeEvent('an order');
    const other = stripeEvent('another order');

    const first = await bench.deliver(bench.bytes(event));
    bench.h.clock.advance(3_600_000);
    const retry = await bench.deliver(bench.bytes(event));
    const second = await bench.deliver(bench.bytes(other));

    expect([first, retry, second].map((answer) => answer.result)).toEqual(['accepted', 'duplicate', 'accepted']);
    expect((await bench.h.inboxItems()).map((item) => item.pk).sort()).toEqual([bench.key(event.id), bench.key(other.id)].sort());
  });

  test.each([
    ['no id', { object: 'event', type: 'charge.succeeded' }],
    ['a numeric id', { id: 42, object: 'event' }],
  ])('a verified body with %s is answered 400 naming the field; nothing is stored', async (_name, payload) => {
    expect(await bench.deliver(bench.bytes(payload))).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringContaining('id') });
    await bench.h.expectNothingAdmitted();
  });

  test('Stripe has no test delivery: test-mode events (livemode: false, as `stripe trigger` sends) are stored', async () => {
    const event = stripeEvent('a test-mode event');
    expect(await bench.deliver(bench.bytes(event))).toMatchObject({ statusCode: 202, result: 'accepted' });
    expect(await bench.row(event.id)).toMatchObject({ status: DeliveryStatus.RECEIVED });
  });
});

describe('a secret roll: one v1 per valid secret', () => {
  test("the library's own verifier accepts the two-signature header for either secret, and so do we", async () => {
    const old = stripeSecret();
    const body = bench.bytes(stripeEvent('during a roll'));
    const header = stripeHeaders(body, bench.h.clock.seconds, old, bench.secret)[HEADER];
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);

    for (const secret of [old, bench.secret]) {
      expect(stripe.webhooks.constructEvent(body.toString('utf8'), header, secret).id).toBe(spec.eventId(body, {}));
      const { adapter, keys } = bench.adapter(secret);
      expect(adapter.verify({ [HEADER]: header }, body, keys, bench.h.clock.seconds)).toMatchObject({ ok: true, key: keys[0] });
    }
    const { adapter, keys } = bench.adapter(stripeSecret());
    expect(adapter.verify({ [HEADER]: header }, body, keys, bench.h.clock.seconds)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  test.each([
    ['old secret first', (old: string, current: string) => [old, current]],
    ['current secret first', (old: string, current: string) => [current, old]],
  ])('through the verifier, whichever order (%s); a header of two foreign secrets is rejected', async (_name, order) => {
    const old = stripeSecret();
    const event = stripeEvent('rolled');
    const body = bench.bytes(event);
    const signed = (...secrets: string[]) => {
      const headers = stripeHeaders(body, bench.h.clock.seconds, ...secrets);
      bench.h.markSensitive(headers[HEADER]);
      return headers;
    };

    expect(await bench.post(body, signed(stripeSecret(), old))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(await bench.post(body, signed(...order(old, bench.secret)))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await bench.h.takeMessages()).toEqual([bench.key(event.id)]);
  });

  test('a v0 entry (Stripe adds one in test mode) is ignored beside a valid v1', async () => {
    const body = bench.bytes(stripeEvent('with v0'));
    const headers = stripeHeaders(body, bench.h.clock.seconds, bench.secret);
    const v1 = headers[HEADER].split(',')[1].slice(3);
    bench.h.markSensitive(v1);

    expect(await bench.post(body, { [HEADER]: `${headers[HEADER]},v0=${'0'.repeat(64)}` })).toMatchObject({ statusCode: 202 });
    expect(bench.h.capture.metric(MetricName.ACCEPTED, 'stripe')).toBe(1);
  });
});
