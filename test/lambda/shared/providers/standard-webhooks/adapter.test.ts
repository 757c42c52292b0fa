import { randomUUID } from 'node:crypto';
import { AdapterKind, DeliveryStatus, MetricName } from '../../../../../lib/contract';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { deliveryKey } from '../../../../../lambda/shared/stores/inbox';
import { answerOf, apiGatewayEvent, Clock, eventIdOf, newSigningSecret } from '../../../../support/inbox-fixture';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import {
  Ed25519Sender,
  flipByte,
  messageId,
  STANDARD_WEBHOOKS_VECTOR as VECTOR,
  standardWebhooksHeaders,
  svixHeaders,
  tamperSignature,
} from '../../../../support/senders';

const NAME = 'openai';

/** An OpenAI-style completion event (docs/providers/standard-webhooks.md): the event names the resource, which is fetched later. */
const responseCompleted = (note: string) => ({
  object: 'event',
  id: `evt_${randomUUID().replace(/-/g, '')}`,
  type: 'response.completed',
  created_at: 1789000000,
  data: { id: `resp_${randomUUID().replace(/-/g, '')}`, note },
});

const spec: PresetSpec = {
  name: NAME,
  adapter: AdapterKind.STANDARD_WEBHOOKS,
  eventType: 'response.completed',
  newSecret: newSigningSecret,
  payload: responseCompleted,
  sign: (body, secret, timestamp, retryOf) => standardWebhooksHeaders(body, secret, timestamp, retryOf?.['webhook-id']),
  eventId: (_body, headers) => headers['webhook-id'],
  signatureHeader: 'webhook-signature',
  timestampField: 'header webhook-timestamp',
  malformed: [
    ['a missing webhook-id', () => ({ 'webhook-id': undefined }), 'webhook-id'],
    ['an over-long webhook-id', () => ({ 'webhook-id': `msg_${'x'.repeat(260)}` }), 'webhook-id'],
    ['a missing webhook-timestamp', () => ({ 'webhook-timestamp': undefined }), 'webhook-timestamp'],
    ['a negative webhook-timestamp', (h) => ({ 'webhook-timestamp': `-${h['webhook-timestamp']}` }), 'webhook-timestamp'],
    ['a missing webhook-signature', () => ({ 'webhook-signature': undefined }), 'webhook-signature'],
    ['a webhook-signature without a version', (h) => ({ 'webhook-signature': h['webhook-signature'].slice(3) }), 'webhook-signature'],
    ['a webhook-signature of an unknown version only', (h) => ({ 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') }), 'webhook-signature'],
    ['a truncated v1 signature', (h) => ({ 'webhook-signature': h['webhook-signature'].slice(0, -4) }), 'webhook-signature'],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

describe('the official test vector', () => {
  test('verify() accepts it at its timestamp; one changed byte of the body or the signature is bad_signature', () => {
    const { adapter, keys } = bench.adapter(VECTOR.secret);
    const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature };
    const payload = Buffer.from(VECTOR.payload);

    expect(adapter.verify(headers, payload, keys, VECTOR.timestamp)).toMatchObject({ ok: true, key: keys[0] });
    expect(adapter.verify(headers, flipByte(payload), keys, VECTOR.timestamp)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({ ...headers, 'webhook-signature': tamperSignature(VECTOR.signature) }, payload, keys, VECTOR.timestamp)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    // Five years later it is authentic but stale.
    expect(adapter.verify(headers, payload, keys, VECTOR.timestamp + 5 * 365 * 86_400)).toMatchObject({ ok: false, reason: 'stale_timestamp' });
  });

  test('through the verifier at its timestamp it is accepted, stored under its webhook-id', async () => {
    const clock = new Clock(VECTOR.timestamp * 1000);
    const config = await bench.h.addProvider(NAME, AdapterKind.STANDARD_WEBHOOKS, VECTOR.secret);
    const verifier = bench.h.verifier({ providers: [config], now: clock.now });
    const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature };

    expect(await bench.post(VECTOR.payload, headers, {}, verifier)).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await bench.post(Buffer.from(VECTOR.payload).toString('base64'), headers, {}, verifier)).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(await bench.post(Buffer.from(VECTOR.payload), headers, { base64: true }, verifier)).toEqual({ statusCode: 200, result: 'duplicate' });
    const row = await bench.row(VECTOR.id);
    expect((row!.body as Buffer).toString('utf8')).toBe(VECTOR.payload);
  });
});

describe('svix-* headers (Svix-powered senders), signed by the svix library', () => {
  test('accepted; the event id is svix-id; the row keeps svix-id and svix-timestamp, never svix-signature', async () => {
    const body = bench.bytes(responseCompleted('sent through Svix'));
    const headers = svixHeaders(body, bench.secret, bench.h.clock.seconds);
    bench.h.markSensitive(headers['svix-signature']);

    expect(await bench.post(body, headers)).toEqual({ statusCode: 202, result: 'accepted' });

    const row = await bench.expectStored(body, { ...headers, 'webhook-id': headers['svix-id'] });
    expect(row.meta).toMatchObject({ 'svix-id': headers['svix-id'], 'svix-timestamp': headers['svix-timestamp'] });
    expect(row.meta).not.toHaveProperty('svix-signature');
  });

  test.each([
    ['a flipped body byte', (body: Buffer, headers: Record<string, string>) => [flipByte(body), headers] as const, 400, 'bad_signature', 'svix-signature'],
    [
      'a flipped signature',
      (body: Buffer, headers: Record<string, string>) => [body, { ...headers, 'svix-signature': tamperSignature(headers['svix-signature']) }] as const,
      400,
      'bad_signature',
      'svix-signature',
    ],
    [
      'a missing svix-id',
      (body: Buffer, headers: Record<string, string>) => [body, { ...headers, 'svix-id': undefined }] as const,
      400,
      'malformed',
      'svix-id',
    ],
    [
      'a missing svix-signature',
      (body: Buffer, headers: Record<string, string>) => [body, { ...headers, 'svix-signature': undefined }] as const,
      400,
      'malformed',
      'svix-signature',
    ],
    [
      'a garbled svix-timestamp',
      (body: Buffer, headers: Record<string, string>) => [body, { ...headers, 'svix-timestamp': 'yesterday' }] as const,
      400,
      'malformed',
      'svix-timestamp',
    ],
  ])('%s is rejected naming the svix header', async (_name, change, statusCode, result, header) => {
    const body = bench.bytes(responseCompleted('sent through Svix'));
    const signed = svixHeaders(body, bench.secret, bench.h.clock.seconds);
    bench.h.markSensitive(signed['svix-signature']);
    const [sent, headers] = change(body, signed);

    expect(await bench.post(sent, headers)).toEqual({ statusCode, result, detail: expect.stringContaining(header) });
    await bench.h.expectNothingAdmitted();
  });
});

describe('v1a: Ed25519 signatures verified with a whpk_ public key', () => {
  let sender: Ed25519Sender;
  beforeEach(() => {
    sender = new Ed25519Sender();
  });

  test('verify() accepts a v1a signature; a flipped body byte, a flipped signature or another key is bad_signature', () => {
    const { adapter, keys } = bench.adapter(sender.publicKey);
    const body = bench.bytes(responseCompleted('signed with Ed25519'));
    const now = bench.h.clock.seconds;
    const headers = sender.headers(body, now);
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(keys[0].publicKey?.asymmetricKeyType).toBe('ed25519');

    expect(adapter.verify(headers, body, keys, now)).toMatchObject({ ok: true, key: keys[0] });
    for (let index = 0; index < body.length; index += 7) {
      expect(adapter.verify(headers, flipByte(body, index), keys, now)).toMatchObject({ ok: false, reason: 'bad_signature' });
    }
    expect(adapter.verify({ ...headers, 'webhook-signature': tamperSignature(headers['webhook-signature']) }, body, keys, now)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(adapter.verify(new Ed25519Sender().headers(body, now, headers['webhook-id']), body, keys, now)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    // The id and the timestamp are signed too.
    expect(adapter.verify({ ...headers, 'webhook-id': messageId() }, body, keys, now)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({ ...headers, 'webhook-timestamp': String(now - 1) }, body, keys, now)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  test('a public key never verifies a v1 HMAC, and an HMAC secret never a v1a signature', () => {
    const body = bench.bytes(responseCompleted('mixed'));
    const now = bench.h.clock.seconds;
    const hmac = standardWebhooksHeaders(body, bench.secret, now);
    const ed = sender.headers(body, now, hmac['webhook-id']);
    const byPublicKey = bench.adapter(sender.publicKey);
    const bySecret = bench.adapter(bench.secret);

    expect(byPublicKey.adapter.verify(hmac, body, byPublicKey.keys, now)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(bySecret.adapter.verify(ed, body, bySecret.keys, now)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // One list may carry both; each key picks its own entry.
    const both = { ...hmac, 'webhook-signature': `${hmac['webhook-signature']} ${ed['webhook-signature']}` };
    expect(byPublicKey.adapter.verify(both, body, byPublicKey.keys, now).ok).toBe(true);
    expect(bySecret.adapter.verify(both, body, bySecret.keys, now).ok).toBe(true);
  });

  test.each([
    ['whpk_ of 31 bytes', `whpk_${Buffer.alloc(31, 1).toString('base64')}`],
    ['whpk_ that is not base64', 'whpk_not base64!'],
  ])('an unusable stored key (%s) throws when keys are made, and the verifier answers 503 storing nothing', async (_name, value) => {
    expect(() => bench.adapter(value)).toThrow();
    const config = await bench.h.addProvider(NAME, AdapterKind.STANDARD_WEBHOOKS, value);
    const body = bench.bytes(responseCompleted('signed, but the stored key is broken'));

    expect(await bench.post(body, sender.headers(body, bench.h.clock.seconds), {}, bench.h.verifier({ providers: [config] }))).toEqual({
      statusCode: 503,
      result: 'secret_unavailable',
    });
    await bench.h.expectNothingAdmitted();
  });

  test('through the verifier: accepted from a non-ASCII body (base64-encoded by API Gateway), a flipped byte rejected', async () => {
    const config = await bench.h.addProvider(NAME, AdapterKind.STANDARD_WEBHOOKS, sender.publicKey);
    const verifier = bench.h.verifier({ providers: [config] });
    const body = bench.bytes(responseCompleted('Ed25519 über alles 🔑'));
    const headers = sender.headers(body, bench.h.clock.seconds);
    bench.h.markSensitive(headers['webhook-signature']);

    expect(await bench.post(flipByte(body), headers, { base64: true }, verifier)).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(await bench.post(body, headers, { base64: true }, verifier)).toEqual({ statusCode: 202, result: 'accepted' });
    await bench.expectStored(body, headers);
  });
});

describe('the event id is the signed webhook-id', () => {
  test('one body under two message ids is two events; one message id with another body is quarantined', async () => {
    const payload = responseCompleted('the same body twice');
    const body = bench.bytes(payload);
    const first = await bench.deliver(body);
    const second = await bench.deliver(body);
    const altered = await bench.deliver(bench.bytes({ ...payload, type: 'response.failed' }), { retryOf: first.headers });

    expect([first, second, altered].map((answer) => answer.result)).toEqual(['accepted', 'accepted', 'quarantined']);
    expect(
      (await bench.h.inboxItems())
        .filter((item) => item.sk === 'delivery')
        .map(eventIdOf)
        .sort(),
    ).toEqual([first.headers['webhook-id'], second.headers['webhook-id']].sort());
    expect(bench.h.capture.metric(MetricName.QUARANTINED, NAME)).toBe(1);
  });

  test('the generic preset has no test delivery: a body with "test": true is stored', async () => {
    const body = bench.bytes({ test: true, type: 'response.completed' });
    const answer = await bench.deliver(body);
    expect(answer).toMatchObject({ statusCode: 202, result: 'accepted' });
    await bench.expectStored(body, answer.headers);
  });
});

describe('named senders: OpenAI with webhook-* headers, Clerk and Resend through Svix with svix-* headers', () => {
  const clerkUserCreated = () => ({ object: 'event', type: 'user.created', data: { id: `user_${randomUUID().replace(/-/g, '')}`, first_name: 'Grüße' } });
  const resendEmailSent = () => ({ type: 'email.sent', created_at: '2026-09-18T10:00:00.000Z', data: { email_id: randomUUID(), subject: 'Köln 🚀' } });

  test.each([
    ['clerk', clerkUserCreated],
    ['resend', resendEmailSent],
  ])('%s: the svix library signs and verifies the delivery, the inbox accepts it under <name>#<svix-id>; a flipped byte is refused', async (name, payload) => {
    const secret = newSigningSecret();
    const config = await bench.h.addProvider(name, AdapterKind.STANDARD_WEBHOOKS, secret);
    const verifier = bench.h.verifier({ providers: [config] });
    const body = bench.bytes(payload());
    const headers = svixHeaders(body, secret, bench.h.clock.seconds);
    bench.h.markSensitive(headers['svix-signature']);
    const post = (bytes: Buffer) => verifier(apiGatewayEvent(bytes, headers, { path: `/hooks/${name}` }));

    expect(new SvixWebhook(secret).verify(body.toString('utf8'), headers)).toEqual(JSON.parse(body.toString('utf8')));
    expect(answerOf(await post(flipByte(body)))).toMatchObject({ statusCode: 400, result: 'bad_signature', detail: expect.stringContaining('svix-signature') });
    expect(answerOf(await post(body))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await bench.h.row(deliveryKey(name, headers['svix-id']))).toMatchObject({ status: DeliveryStatus.RECEIVED });
  });

  test('openai: the reference standardwebhooks library verifies what the inbox accepts', async () => {
    const body = bench.bytes(responseCompleted('from OpenAI'));
    const answer = await bench.deliver(body);

    expect(new StandardWebhook(bench.secret).verify(body.toString('utf8'), answer.headers)).toEqual(JSON.parse(body.toString('utf8')));
    expect(answer).toMatchObject({ statusCode: 202, result: 'accepted' });
    await bench.expectStored(body, answer.headers);
  });
});
