import { createHmac } from 'node:crypto';
import * as fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { Headers } from '../../../../lambda/shared/runtime/http';
import { SigningKey } from '../../../../lambda/shared/signatures/signing-key';
import {
  decodeStandardWebhooksSecret,
  signStandardWebhooks,
  standardWebhooksHeaderNames,
  verifyStandardWebhooks,
} from '../../../../lambda/shared/signatures/standard-webhooks';
import { newSigningSecret } from '../../../support/inbox-fixture';
import { STANDARD_WEBHOOKS_VECTOR as VECTOR } from '../../../support/senders';

const TOLERANCE = { pastSeconds: 300, futureSeconds: 300 };

const keyOf = (secret: string, stage = 'AWSCURRENT'): SigningKey => ({ stage, bytes: decodeStandardWebhooksSecret(secret) });

const headersFor = (id: string, timestamp: number, signature: string): Headers => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});

describe('the official test vector', () => {
  test('our signer produces it', () => {
    expect(signStandardWebhooks(decodeStandardWebhooksSecret(VECTOR.secret), VECTOR.id, VECTOR.timestamp, Buffer.from(VECTOR.payload))).toBe(VECTOR.signature);
  });

  test('the reference library produces it', () => {
    expect(new Webhook(VECTOR.secret).sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.payload)).toBe(VECTOR.signature);
  });

  test('our verifier accepts it at its timestamp and rejects one changed byte', () => {
    const headers = headersFor(VECTOR.id, VECTOR.timestamp, VECTOR.signature);
    const key = keyOf(VECTOR.secret);

    expect(verifyStandardWebhooks(headers, Buffer.from(VECTOR.payload), [key], VECTOR.timestamp, TOLERANCE)).toEqual({ ok: true, key });
    expect(verifyStandardWebhooks(headers, Buffer.from('{"test": 2432232315}'), [key], VECTOR.timestamp, TOLERANCE)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
  });
});

/**
 * The svix library's own verification suite (`svix` package, `src/webhook.test.ts`), case by case
 * through our verifier: its message id, payload and secret (the official vector's), signed at a
 * time the case chooses, with `svix-*` headers, then changed as each case changes them. Each
 * expected outcome is the suite's (valid or WebhookVerificationError); ours adds the reason (a
 * signature of the wrong shape is `malformed`, before any MAC).
 */
describe("svix's own verification suite", () => {
  const SECRET = 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const NOW = 1_789_000_000;
  const payload = Buffer.from(VECTOR.payload);
  const key = keyOf(SECRET);
  /** The suite's TestPayload: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.payload` under the base64-decoded secret. */
  const signedAt = (timestamp: number): Record<string, string> => ({
    'svix-id': VECTOR.id,
    'svix-signature': `v1,${createHmac('sha256', Buffer.from(SECRET, 'base64')).update(`${VECTOR.id}.${timestamp}.${VECTOR.payload}`).digest('base64')}`,
    'svix-timestamp': String(timestamp),
  });
  const verify = (headers: Record<string, string>) => verifyStandardWebhooks(headers, payload, [key], NOW, TOLERANCE, standardWebhooksHeaderNames(headers));
  const without = (name: string) => Object.fromEntries(Object.entries(signedAt(NOW)).filter(([header]) => header !== name));
  const withHeader = (name: string, value: string) => ({ ...signedAt(NOW), [name]: value });
  const valid = signedAt(NOW)['svix-signature'];

  test.each([
    ['missing id raises error', without('svix-id'), 'malformed'],
    ['missing timestamp raises error', without('svix-timestamp'), 'malformed'],
    ['invalid timestamp throws error', withHeader('svix-timestamp', 'hello'), 'malformed'],
    ['missing signature raises error', without('svix-signature'), 'malformed'],
    ['invalid signature throws error', withHeader('svix-signature', 'v1,dawfeoifkpqwoekfpqoekf'), 'malformed'],
    ['partial signature throws error (8 characters)', withHeader('svix-signature', valid.slice(0, 8)), 'malformed'],
    ['partial signature throws error (v1, alone)', withHeader('svix-signature', 'v1,'), 'malformed'],
    ['old timestamp fails', signedAt(NOW - 300 - 1), 'stale_timestamp'],
    ['new timestamp fails', signedAt(NOW + 300 + 1), 'stale_timestamp'],
  ])('%s', (_name, headers, reason) => {
    expect(verify(headers)).toMatchObject({ ok: false, reason });
  });

  test('valid signature is valid, with svix-* or unbranded webhook-* headers, and the secret with or without whsec_', () => {
    const headers = signedAt(NOW);
    expect(verify(headers)).toEqual({ ok: true, key });
    const unbranded = { 'webhook-id': headers['svix-id'], 'webhook-signature': headers['svix-signature'], 'webhook-timestamp': headers['svix-timestamp'] };
    expect(verify(unbranded)).toEqual({ ok: true, key });
    expect(keyOf(`whsec_${SECRET}`).bytes).toEqual(key.bytes);
  });

  test('multi sig payload is valid: wrong v1 entries and a v2 entry around the valid one', () => {
    const sigs = [
      'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
      'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
      valid,
      'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
    ];
    expect(verify(withHeader('svix-signature', sigs.join(' ')))).toEqual({ ok: true, key });
  });

  test('sign function works: the suite vector, whsec_ secret, message id, 1614265330', () => {
    expect(signStandardWebhooks(decodeStandardWebhooksSecret(`whsec_${SECRET}`), VECTOR.id, 1614265330, payload)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });
});

describe('interoperability with the reference library (standardwebhooks)', () => {
  const utf8Payload = fc.string({ unit: 'grapheme', maxLength: 300 });
  const messageId = fc.stringMatching(/^msg_[A-Za-z0-9]{1,40}$/);
  const timestamp = fc.integer({ min: 1_000_000_000, max: 4_000_000_000 });

  test('any payload it signs, we verify (non-ASCII and emoji included)', () => {
    const secret = newSigningSecret();
    const reference = new Webhook(secret);
    fc.assert(
      fc.property(utf8Payload, messageId, timestamp, (payload, id, ts) => {
        const signature = reference.sign(id, new Date(ts * 1000), payload);
        const verdict = verifyStandardWebhooks(headersFor(id, ts, signature), Buffer.from(payload, 'utf8'), [keyOf(secret)], ts, TOLERANCE);
        expect(verdict.ok).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  test('any payload we sign, it verifies', () => {
    const secret = newSigningSecret();
    const reference = new Webhook(secret);
    const now = Math.floor(Date.now() / 1000);
    fc.assert(
      fc.property(utf8Payload, messageId, (payload, id) => {
        const signature = signStandardWebhooks(decodeStandardWebhooksSecret(secret), id, now, Buffer.from(payload, 'utf8'));
        expect(() => reference.verify(payload, headersFor(id, now, signature) as Record<string, string>, { jsonParse: false })).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });

  test('the reference library rejects what we signed with another secret, and so do we', () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = '{"task":{"id":"tsk_1"}}';
    const signature = signStandardWebhooks(decodeStandardWebhooksSecret(newSigningSecret()), 'msg_1', now, Buffer.from(payload));
    const secret = newSigningSecret();

    expect(() => new Webhook(secret).verify(payload, headersFor('msg_1', now, signature) as Record<string, string>, { jsonParse: false })).toThrow();
    expect(verifyStandardWebhooks(headersFor('msg_1', now, signature), Buffer.from(payload), [keyOf(secret)], now, TOLERANCE)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
  });
});

describe('verification', () => {
  const secret = newSigningSecret();
  const now = 1_800_000_000;
  const body = Buffer.from('{"task":{"id":"tsk_1","status":"COMPLETED"}}');
  const good = signStandardWebhooks(decodeStandardWebhooksSecret(secret), 'msg_1', now, body);

  test('any v1 entry of the list may match, and any of several keys (a rotation)', () => {
    const other = newSigningSecret();
    const forged = signStandardWebhooks(decodeStandardWebhooksSecret(other), 'msg_1', now, body);
    const keys = [keyOf(other, 'AWSPREVIOUS'), keyOf(secret, 'AWSPENDING')];

    expect(verifyStandardWebhooks(headersFor('msg_1', now, `${forged} ${good}`), body, [keyOf(secret)], now, TOLERANCE).ok).toBe(true);
    expect(verifyStandardWebhooks(headersFor('msg_1', now, `v1a,abc v2,${good.slice(3)} ${good}`), body, [keyOf(secret)], now, TOLERANCE).ok).toBe(true);
    expect(verifyStandardWebhooks(headersFor('msg_1', now, good), body, keys, now, TOLERANCE)).toEqual({ ok: true, key: keys[1] });
  });

  test('a signature header sent twice, joined with a comma by API Gateway, is read as two entries', () => {
    const forged = signStandardWebhooks(decodeStandardWebhooksSecret(newSigningSecret()), 'msg_1', now, body);

    expect(verifyStandardWebhooks(headersFor('msg_1', now, `${forged},${good}`), body, [keyOf(secret)], now, TOLERANCE).ok).toBe(true);
    expect(verifyStandardWebhooks(headersFor('msg_1', now, `${good},v1a,abc ${forged}`), body, [keyOf(secret)], now, TOLERANCE).ok).toBe(true);
    expect(verifyStandardWebhooks(headersFor('msg_1', now, `${forged}, ${good}`), body, [keyOf(secret)], now, TOLERANCE).ok).toBe(true);
    expect(verifyStandardWebhooks(headersFor('msg_1', now, `${forged},${forged}`), body, [keyOf(secret)], now, TOLERANCE)).toMatchObject({
      reason: 'bad_signature',
    });
  });

  test('the id and the timestamp are signed: changing either breaks the signature', () => {
    expect(verifyStandardWebhooks(headersFor('msg_2', now, good), body, [keyOf(secret)], now, TOLERANCE)).toMatchObject({ reason: 'bad_signature' });
    expect(verifyStandardWebhooks(headersFor('msg_1', now + 1, good), body, [keyOf(secret)], now, TOLERANCE)).toMatchObject({ reason: 'bad_signature' });
  });

  test('freshness is checked against the signed timestamp, inclusive at the tolerance, naming the header', () => {
    const at = (offset: number) => verifyStandardWebhooks(headersFor('msg_1', now, good), body, [keyOf(secret)], now + offset, TOLERANCE);

    expect(at(300).ok).toBe(true);
    expect(at(-300).ok).toBe(true);
    expect(at(301)).toEqual({ ok: false, reason: 'stale_timestamp', detail: 'header webhook-timestamp is older than the tolerance' });
    expect(at(-301)).toEqual({ ok: false, reason: 'stale_timestamp', detail: 'header webhook-timestamp is too far in the future' });
  });

  test('garbage in any header is a clean rejection, never an exception', () => {
    const header = fc.option(fc.string({ maxLength: 120 }), { nil: undefined });
    fc.assert(
      fc.property(header, header, header, fc.uint8Array({ maxLength: 64 }), (id, timestamp, signature, bytes) => {
        const verdict = verifyStandardWebhooks(
          { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature },
          Buffer.from(bytes),
          [keyOf(secret)],
          now,
          TOLERANCE,
        );
        expect(verdict.ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('secrets', () => {
  test('decode with and without the whsec_ prefix', () => {
    const bytes = decodeStandardWebhooksSecret(VECTOR.secret);
    expect(bytes.toString('base64')).toBe('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    expect(decodeStandardWebhooksSecret('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').equals(bytes)).toBe(true);
  });

  test.each(['whsec_', '', 'whsec_not base64!', 'whsec_abc'])('reject %p', (value) => {
    expect(() => decodeStandardWebhooksSecret(value)).toThrow('signing secret is not whsec_ followed by base64');
  });
});
