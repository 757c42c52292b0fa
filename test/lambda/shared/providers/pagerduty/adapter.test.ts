import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { flipByte, HeaderMap, tamperSignature } from '../../../../support/senders';

const SIGNATURE = 'x-pagerduty-signature';
const WEBHOOK_ID = 'x-webhook-id';

/**
 * The test vector of PagerDuty's own Go client library (go-pagerduty, package webhookv3,
 * TestVerifySignature "valid"): the secret, the v3 body, and its `v1` signature.
 */
const PAGERDUTY_VECTOR = {
  secret: 'lDQHScfUeXUKaQRNF+8XIiDKZ7XX3itBAYzwU0TARw8lJqRnkKl2iB1anSb0Z+IK',
  body: '{"event":{"id":"01BWDWL3NYY7LUFPZCC28QUCMK","event_type":"incident.priority_updated","resource_type":"incident","occurred_at":"2021-04-26T17:36:27.458Z","agent":{"html_url":"https://acme.pagerduty.com/users/PLH1HKV","id":"PLH1HKV","self":"https://api.pagerduty.com/users/PLH1HKV","summary":"Tenex Engineer","type":"user_reference"},"client":null,"data":{"id":"PGR0VU2","type":"incident","self":"https://api.pagerduty.com/incidents/PGR0VU2","html_url":"https://acme.pagerduty.com/incidents/PGR0VU2","number":2,"status":"triggered","title":"A little bump in the road","service":{"html_url":"https://acme.pagerduty.com/services/PF9KMXH","id":"PF9KMXH","self":"https://api.pagerduty.com/services/PF9KMXH","summary":"API Service","type":"service_reference"},"assignees":[{"html_url":"https://acme.pagerduty.com/users/PTUXL6G","id":"PTUXL6G","self":"https://api.pagerduty.com/users/PTUXL6G","summary":"User 123","type":"user_reference"}],"escalation_policy":{"html_url":"https://acme.pagerduty.com/escalation_policies/PUS0KTE","id":"PUS0KTE","self":"https://api.pagerduty.com/escalation_policies/PUS0KTE","summary":"Default","type":"escalation_policy_reference"},"teams":[{"html_url":"https://acme.pagerduty.com/teams/PFCVPS0","id":"PFCVPS0","self":"https://api.pagerduty.com/teams/PFCVPS0","summary":"Engineering","type":"team_reference"}],"priority":{"html_url":"https://acme.pagerduty.com/account/incident_priorities","id":"PSO75BM","self":"https://api.pagerduty.com/priorities/PSO75BM","summary":"P1","type":"priority_reference"},"urgency":"high","conference_bridge":{"conference_number":1000,"conference_url":"https://example.com"},"resolve_reason":null}}}',
  signature: 'v1=0c0b9495b893a39e70d1fea2fe11fbe0a825f88b9f67846f6cc07dd2bc5476cd',
  /** The same library's "mismatch" signature: well formed, signed over something else. */
  mismatch: 'v1=7020c8a7ec668a9b7012bc3dd82e483394b038f4230acc6785efbf2a7d8bcaf5',
} as const;

/** PagerDuty's secrets: 64 characters of base64 (as the vector's), used as text. */
const pagerdutySecret = () => randomBytes(48).toString('base64');

const incidentEvent = (note: string, eventType = 'incident.triggered') => ({
  event: {
    id: `01${randomUUID().replace(/-/g, '').toUpperCase().slice(0, 24)}`,
    event_type: eventType,
    resource_type: 'incident',
    occurred_at: '2026-09-18T10:00:00.000Z',
    agent: null,
    client: { name: 'PagerDuty' },
    data: { id: 'PGR0VU2', type: 'incident', number: 2, status: 'triggered', title: note, urgency: 'high' },
  },
});

/**
 * PagerDuty's headers, the signature by PagerDuty's rule restated here (one `v1=<hex HMAC-SHA256
 * of the body>` per secret, comma-separated); a retry keeps its `X-Webhook-Id`.
 */
function pagerdutyHeaders(body: Buffer, secrets: readonly string[], webhookId: string = randomUUID()): HeaderMap {
  return {
    [SIGNATURE]: secrets.map((secret) => `v1=${createHmac('sha256', secret).update(body).digest('hex')}`).join(','),
    [WEBHOOK_ID]: webhookId,
    'x-webhook-subscription': 'PSUBSCR',
    'user-agent': 'PagerDuty-Webhook/V3.0',
    'content-type': 'application/json',
  };
}

const eventIdOf = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { event: { id: string } }).event.id;

const spec: PresetSpec = {
  name: 'pagerduty',
  adapter: AdapterKind.PAGERDUTY,
  eventType: 'incident.triggered',
  newSecret: pagerdutySecret,
  payload: (note) => incidentEvent(note),
  sign: (body, secret, _timestamp, retryOf) => pagerdutyHeaders(body, [secret], retryOf?.[WEBHOOK_ID]),
  eventId: eventIdOf,
  signatureHeader: SIGNATURE,
  // PagerDuty signs no timestamp: there is no freshness to judge.
  malformed: [
    ['a missing X-PagerDuty-Signature', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a signature without its v1= prefix', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice('v1='.length) }), SIGNATURE],
    ['only an unknown version', (h) => ({ [SIGNATURE]: h[SIGNATURE].replace('v1=', 'v2=') }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -2) }), SIGNATURE],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

describe("the vector of PagerDuty's Go library", () => {
  test('verify() accepts it, its mismatch signature and one changed body byte are bad_signature; the rule restated gives it', () => {
    const { adapter, keys } = bench.adapter(PAGERDUTY_VECTOR.secret);
    const body = Buffer.from(PAGERDUTY_VECTOR.body);

    expect(`v1=${createHmac('sha256', PAGERDUTY_VECTOR.secret).update(body).digest('hex')}`).toBe(PAGERDUTY_VECTOR.signature);
    expect(adapter.verify({ [SIGNATURE]: PAGERDUTY_VECTOR.signature }, body, keys, 0)).toEqual({ ok: true, key: keys[0] });
    expect(adapter.verify({ [SIGNATURE]: PAGERDUTY_VECTOR.mismatch }, body, keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({ [SIGNATURE]: PAGERDUTY_VECTOR.signature }, flipByte(body), keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({}, body, keys, 0)).toMatchObject({ ok: false, reason: 'malformed', detail: expect.stringContaining(SIGNATURE) });
  });

  test('through the verifier it is accepted and stored under its event.id', async () => {
    const config = await bench.h.addProvider('pagerduty', AdapterKind.PAGERDUTY, PAGERDUTY_VECTOR.secret);
    const answer = await bench.post(PAGERDUTY_VECTOR.body, { [SIGNATURE]: PAGERDUTY_VECTOR.signature }, {}, bench.h.verifier({ providers: [config] }));

    expect(answer).toEqual({ statusCode: 202, result: 'accepted' });
    expect((await bench.row('01BWDWL3NYY7LUFPZCC28QUCMK'))!.body).toEqual(Buffer.from(PAGERDUTY_VECTOR.body));
  });
});

describe('a secret rotation: one v1 per valid secret', () => {
  test.each([
    ['old secret first', (old: string, current: string) => [old, current]],
    ['current secret first', (old: string, current: string) => [current, old]],
  ])('either order verifies (%s); a header of two foreign secrets is bad_signature', async (_name, order) => {
    const body = bench.bytes(incidentEvent('during a rotation'));
    const signed = (...secrets: string[]) => {
      const headers = pagerdutyHeaders(body, secrets);
      bench.h.markSensitive(headers[SIGNATURE]);
      return headers;
    };

    expect(await bench.post(body, signed(pagerdutySecret(), pagerdutySecret()))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(await bench.post(body, signed(...order(pagerdutySecret(), bench.secret)))).toEqual({ statusCode: 202, result: 'accepted' });
  });
});

describe('events and deliveries', () => {
  test('pagey.ping, the test sent from the subscription, is verified, answered 200 test, and stores nothing', async () => {
    const ping = bench.bytes({
      event: {
        id: '01DGZ9YQK6H3QRQ0N3M0JXK7HZ',
        event_type: 'pagey.ping',
        resource_type: 'pagey',
        occurred_at: '2026-09-18T10:00:00.000Z',
        agent: null,
        client: null,
        data: { message: 'Hello from your friend Pagey!', type: 'ping' },
      },
    });
    const headers = await bench.sign(ping);

    expect(await bench.post(ping, headers)).toEqual({ statusCode: 200, result: 'test' });
    expect(await bench.post(ping, { ...headers, [SIGNATURE]: tamperSignature(headers[SIGNATURE]) })).toMatchObject({
      statusCode: 400,
      result: 'bad_signature',
    });
    await bench.h.expectNothingAdmitted();
    expect(bench.h.capture.metric(MetricName.TEST_DELIVERY, 'pagerduty')).toBe(1);
  });

  test('a retry is a duplicate; the same event.id with another body is quarantined; X-Webhook-Id proves nothing', async () => {
    const event = incidentEvent('acknowledged', 'incident.acknowledged');
    const body = bench.bytes(event);
    const first = await bench.deliver(body);
    const retry = await bench.deliver(body, { retryOf: first.headers });
    const replayed = await bench.post(body, { ...first.headers, [WEBHOOK_ID]: randomUUID() });
    const altered = await bench.deliver(bench.bytes({ event: { ...event.event, event_type: 'incident.resolved' } }));

    expect([first, retry, replayed, altered].map((answer) => answer.result)).toEqual(['accepted', 'duplicate', 'duplicate', 'quarantined']);
    expect(await bench.h.takeMessages()).toEqual([bench.key(event.event.id)]);
    expect((await bench.row(event.event.id))!.meta).toMatchObject({ [WEBHOOK_ID]: first.headers[WEBHOOK_ID], 'x-webhook-subscription': 'PSUBSCR' });
  });

  test('no timestamp is signed: with zero tolerance a day-old delivery verifies', async () => {
    const verifier = bench.verifier({ tolerancePastSeconds: 0, toleranceFutureSeconds: 0 });
    const body = bench.bytes(incidentEvent('an old delivery'));
    const headers = await bench.sign(body);
    bench.h.clock.advance(86_400_000);
    expect(await bench.post(body, headers, {}, verifier)).toEqual({ statusCode: 202, result: 'accepted' });
  });

  test.each([
    ['no event', { incident: { id: 'P1' } }, 'event.id'],
    ['a numeric event.id', { event: { id: 42, event_type: 'incident.triggered' } }, 'event.id'],
    ['an array body', [incidentEvent('in an array')], 'body'],
  ])('a verified body with %s is answered 400 naming the field; nothing is stored', async (_name, payload, field) => {
    expect(await bench.deliver(bench.bytes(payload))).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringContaining(field) });
    await bench.h.expectNothingAdmitted();
  });
});
