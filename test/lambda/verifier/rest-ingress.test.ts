/**
 * The rule checked here, stated on its own: a signature is over the raw bytes, so a delivery
 * verifies, and is stored as the same bytes, whichever API Gateway API passed it to the verifier:
 * an HTTP API's event (payload 2.0, text or base64) or a REST API's proxy event (payload 1.0,
 * base64 under binary media type `*` / `*`, header names as the sender wrote them). The same
 * signed delivery sent through both is one row: the second is a duplicate of identical bytes.
 * Run against the real verifier on the emulators.
 */
import { randomUUID } from 'node:crypto';
import { standardWebhooksHeaders } from '#twin/testing';
import { answerlineBody, answerOf, apiGatewayEvent, InboxHarness, keyOf, restApiEvent, SecretsFixture, sha256Hex } from '../../support/inbox-fixture';

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'rest-ingress');
});
afterEach(() => h.destroy());

/** Signature headers as a sender capitalizes them: names are case-insensitive on the wire. */
function senderCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase()), value]),
  );
}

/** Bodies whose bytes a text round trip would change: invalid UTF-8, CRLF line ends, non-ASCII text. */
function bodies(): Record<string, Buffer> {
  const [head, tail] = answerlineBody({ response: { result: { answer: 'RAW_BYTE' } } }).split('RAW_BYTE');
  return {
    'invalid UTF-8 (0xFF 0xFE 0x80)': Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from(tail, 'utf8')]),
    'CRLF line ends and tabs': Buffer.from(JSON.stringify(JSON.parse(answerlineBody()), null, '\t').replace(/\n/g, '\r\n'), 'utf8'),
    'unicode (umlauts, emoji, CJK, U+2028)': Buffer.from(answerlineBody({ response: { result: { answer: 'Grüße 🚀 東京 \u2028 ✓' } } }), 'utf8'),
  };
}

describe.each([
  ['HTTP API first, then REST API', ['http', 'rest'] as const],
  ['REST API first, then HTTP API', ['rest', 'http'] as const],
])('one signed delivery sent through both APIs (%s)', (_order, shapes) => {
  test.each(Object.keys(bodies()))('%s: accepted once, stored byte-exactly, then a duplicate of the same bytes', async (name) => {
    const body = bodies()[name];
    const headers = standardWebhooksHeaders(h.secret.value, `msg_${randomUUID()}`, h.clock.seconds, body);
    const event = (shape: 'http' | 'rest') =>
      shape === 'http'
        ? apiGatewayEvent(body, { ...headers, 'content-type': 'application/octet-stream' }, { base64: true })
        : restApiEvent(body, senderCased(headers));
    const verifier = h.verifier();

    expect(answerOf(await verifier(event(shapes[0])))).toEqual({ statusCode: 202, result: 'accepted' });
    const row = await h.row(keyOf(body.toString('utf8')));
    expect((row!.body as Buffer).equals(body)).toBe(true);
    expect(row!.digest).toBe(sha256Hex(body));
    // A duplicate is a repeat whose bytes hash the same: any change in transit would be quarantined instead.
    expect(answerOf(await verifier(event(shapes[1])))).toEqual({ statusCode: 200, result: 'duplicate' });
    expect(await h.inboxItems()).toHaveLength(1);
    expect(await h.takeMessages()).toHaveLength(1);
  });
});

test('an empty body signed as empty verifies in both shapes (and is then refused as no Answerline delivery), never as a bad signature', async () => {
  const empty = Buffer.alloc(0);
  const headers = standardWebhooksHeaders(h.secret.value, `msg_${randomUUID()}`, h.clock.seconds, empty);
  const verifier = h.verifier();
  const rest = restApiEvent(empty, senderCased(headers));
  expect(rest.body).toBeNull();
  for (const event of [apiGatewayEvent(empty, headers), rest]) {
    expect(answerOf(await verifier(event))).toMatchObject({ statusCode: 400, result: 'malformed' });
  }
  await h.expectNothingAdmitted();
});

test('a REST API event whose base64 body differs by one bit from what was signed is a bad signature, nothing stored (control)', async () => {
  const body = Buffer.from(answerlineBody(), 'utf8');
  const headers = standardWebhooksHeaders(h.secret.value, `msg_${randomUUID()}`, h.clock.seconds, body);
  const altered = Buffer.from(body);
  altered[altered.length - 2] ^= 0x01;
  const event = restApiEvent(altered, senderCased(headers));

  expect(answerOf(await h.verifier()(event))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
  await h.expectNothingAdmitted();
});

test('a signature header sent twice reaches the verifier joined as an HTTP API joins it (every value, not the last only), and verifies', async () => {
  const body = Buffer.from(answerlineBody(), 'utf8');
  const good = standardWebhooksHeaders(h.secret.value, `msg_${randomUUID()}`, h.clock.seconds, body);
  const forged = standardWebhooksHeaders(
    'whsec_' + Buffer.from('not the secret, 32 bytes long!!!').toString('base64'),
    good['webhook-id'],
    h.clock.seconds,
    body,
  );
  const event = restApiEvent(body, { ...senderCased(good), 'Webhook-Signature': [good['webhook-signature'], forged['webhook-signature']] });
  // `headers` holds the last value only: the good signature is in `multiValueHeaders` alone.
  expect(event.headers['Webhook-Signature']).toBe(forged['webhook-signature']);

  expect(answerOf(await h.verifier()(event))).toEqual({ statusCode: 202, result: 'accepted' });
});

test('the answers are REST-proxy-valid: a status code, string headers and a string body, nothing a REST API refuses (no cookies, no multiValueHeaders needed)', async () => {
  const body = Buffer.from(answerlineBody(), 'utf8');
  const verifier = h.verifier();
  const answers = [
    await verifier(restApiEvent(body, senderCased(standardWebhooksHeaders(h.secret.value, `msg_${randomUUID()}`, h.clock.seconds, body)))),
    await verifier(restApiEvent(body, {})),
    await verifier(restApiEvent(body, {}, { path: '/hooks/nobody' })),
  ];
  expect(answers.map((answer) => answer.statusCode)).toEqual([202, 400, 404]);
  for (const answer of answers) {
    expect(Object.keys(answer).sort()).toEqual(['body', 'headers', 'statusCode']);
    expect(typeof answer.body).toBe('string');
    expect(Object.values(answer.headers!).every((value) => typeof value === 'string')).toBe(true);
  }
});
