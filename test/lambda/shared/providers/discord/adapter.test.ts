/**
 * Discord interactions: every signature made with node:crypto's Ed25519 and confirmed by Discord's
 * own library (`discord-interactions`' `verifyKey`) before it is sent; the answers checked against
 * that library's interaction and response types. Discord publishes no signature vector: the
 * public key decoding is checked with the Ed25519 vector of RFC 8032.
 */
import { generateKeyPairSync, KeyObject, randomBytes, randomInt, sign, verify } from 'node:crypto';
import { InteractionResponseType, InteractionType, verifyKey } from 'discord-interactions';
import { AdapterKind, DeliveryStatus, MetricName } from '../../../../../lib/contract';
import { decodeDiscordPublicKey } from '../../../../../lambda/shared/providers/discord/signature';
import { answerOf } from '../../../../support/inbox-fixture';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { flipByte, HeaderMap, tamperSignature } from '../../../../support/senders';

const SIGNATURE = 'x-signature-ed25519';
const TIMESTAMP = 'x-signature-timestamp';

/** The private key behind each public key a test made (the inbox only ever sees the public one). */
const privateKeys = new Map<string, KeyObject>();

/** A Discord application's public key, as its Developer Portal shows it: 64 hex characters. */
function newApplicationKey(): string {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const hex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
  privateKeys.set(hex, privateKey);
  return hex;
}

/** The headers Discord sends: the hex Ed25519 signature of `timestamp + body`, confirmed by Discord's own library. */
async function discordHeaders(body: Buffer, publicKey: string, timestamp: number): Promise<HeaderMap> {
  const signedAt = String(timestamp);
  const signature = sign(null, Buffer.concat([Buffer.from(signedAt), body]), privateKeys.get(publicKey)!).toString('hex');
  expect(await verifyKey(body, signature, signedAt, publicKey)).toBe(true);
  return { [SIGNATURE]: signature, [TIMESTAMP]: signedAt, 'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)' };
}

/** A snowflake: Discord's ids are 64-bit numbers written as decimal strings. */
const snowflake = () => String(BigInt(randomInt(2 ** 47)) * 4_194_304n + BigInt(randomInt(4_194_304)));

/** An interaction as Discord sends it: a slash command by default, its text option carrying `note`. */
const interaction = (note: string, type: number = InteractionType.APPLICATION_COMMAND, id = snowflake()) => ({
  app_permissions: '442368',
  application_id: '1162853462716543108',
  channel_id: '1162853463169351720',
  context: 0,
  data: { id: '1163120118227750932', name: 'note', options: [{ name: 'text', type: 3, value: note }], type: 1 },
  entitlements: [],
  guild_id: '1162853463169351710',
  id,
  locale: 'en-US',
  member: { user: { id: '301385284524605440', username: 'tester' }, permissions: '2251799813685247' },
  token: `aW50ZXJhY3Rpb246${randomBytes(48).toString('base64url')}`,
  type,
  version: 1,
});

/** What Discord reads in the answer to a stored interaction: a deferral, the update kind for a component. */
const deferral = (body: Buffer) =>
  (JSON.parse(body.toString('utf8')) as { type: number }).type === InteractionType.MESSAGE_COMPONENT
    ? { type: InteractionResponseType.DEFERRED_UPDATE_MESSAGE }
    : { type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE };

const spec: PresetSpec = {
  name: 'discord',
  adapter: AdapterKind.DISCORD,
  eventType: '2',
  newSecret: newApplicationKey,
  payload: (note) => interaction(note),
  sign: (body, publicKey, timestamp) => discordHeaders(body, publicKey, timestamp),
  eventId: (body) => (JSON.parse(body.toString('utf8')) as { id: string }).id,
  signatureHeader: SIGNATURE,
  timestampField: `header ${TIMESTAMP}`,
  refusalStatus: 401,
  storedAnswer: deferral,
  malformed: [
    ['a missing X-Signature-Ed25519', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a missing X-Signature-Timestamp', () => ({ [TIMESTAMP]: undefined }), TIMESTAMP],
    ['a base64 signature', (h) => ({ [SIGNATURE]: Buffer.from(h[SIGNATURE], 'hex').toString('base64') }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -2) }), SIGNATURE],
    ['a timestamp in milliseconds', (h) => ({ [TIMESTAMP]: `${h[TIMESTAMP]}000` }), TIMESTAMP],
    ['an ISO timestamp', () => ({ [TIMESTAMP]: '2026-09-18T10:00:00Z' }), TIMESTAMP],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

/** Posts `payload` signed now, returning the raw answer. */
async function post(payload: unknown, headers?: HeaderMap) {
  const body = bench.bytes(payload);
  const event = bench.event(body, headers ?? (await bench.sign(body)));
  return bench.verifier()(event);
}

describe("Discord's endpoint check", () => {
  // The PING of the examples in discord-interactions' own tests.
  const PING = '{"id":"787053080478613555","token":"ThisIsATokenFromDiscordThatIsVeryLong","type":1,"version":1}';

  test('a signed PING is answered 200 application/json {"type":1}, counted as a handshake, never stored', async () => {
    const headers = await bench.sign(PING);

    const answer = await bench.verifier()(bench.event(PING, headers));

    expect(answer).toEqual({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: InteractionResponseType.PONG }) });
    expect(bench.h.capture.metric(MetricName.HANDSHAKE, 'discord')).toBe(1);
    await bench.h.expectNothingAdmitted();
  });

  test('the same PING with a bad signature, a flipped byte, or signed by another key is answered 401 (Discord removes endpoints that accept them)', async () => {
    const headers = await bench.sign(PING);
    const verifier = bench.verifier();

    for (const event of [
      bench.event(PING, { ...headers, [SIGNATURE]: tamperSignature(headers[SIGNATURE]) }),
      bench.event(flipByte(PING), headers),
      bench.event(PING, await bench.sign(PING, { secret: newApplicationKey() })),
      bench.event(PING, { ...headers, [SIGNATURE]: '0'.repeat(128) }),
    ]) {
      expect(answerOf(await verifier(event))).toEqual({ statusCode: 401, result: 'bad_signature', detail: `header ${SIGNATURE} matches no public key` });
    }
    expect(answerOf(await verifier(bench.event(PING, { [TIMESTAMP]: headers[TIMESTAMP] })))).toMatchObject({ statusCode: 401, result: 'malformed' });
    expect(bench.h.capture.metric(MetricName.AUTHENTICATION_FAILED, 'discord')).toBe(5);
    expect(bench.h.capture.metric(MetricName.HANDSHAKE, 'discord')).toBe(0);
  });
});

describe('interactions', () => {
  test.each([
    ['a slash command', InteractionType.APPLICATION_COMMAND, InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE],
    ['a modal submit', InteractionType.MODAL_SUBMIT, InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE],
    ['a button press (a component)', InteractionType.MESSAGE_COMPONENT, InteractionResponseType.DEFERRED_UPDATE_MESSAGE],
  ])('%s (type %i) is stored under its id and answered 200 with a deferred response (type %i)', async (_name, type, response) => {
    const payload = interaction('stored', type);

    const answer = await post(payload);

    expect(answer).toEqual({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: response }) });
    expect(await bench.row(payload.id)).toMatchObject({ status: DeliveryStatus.RECEIVED });
    expect(await bench.h.takeMessages()).toEqual([bench.key(payload.id)]);
    expect(bench.h.capture.logs('delivery').at(-1)).toMatchObject({ reason: 'accepted', status: 200 });
  });

  test('an autocomplete is answered with no choices (the answer cannot wait for processing) and never stored', async () => {
    const answer = await post(interaction('partial inp', InteractionType.APPLICATION_COMMAND_AUTOCOMPLETE));

    expect(answer).toMatchObject({ statusCode: 200, headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(String(answer.body))).toEqual({ type: InteractionResponseType.APPLICATION_COMMAND_AUTOCOMPLETE_RESULT, data: { choices: [] } });
    expect(bench.h.capture.metric(MetricName.HANDSHAKE, 'discord')).toBe(1);
    await bench.h.expectNothingAdmitted();
  });

  test('a replay of a captured interaction within the tolerance is a duplicate, answered the same; after it, a 401 stale refusal', async () => {
    const payload = interaction('captured');
    const body = bench.bytes(payload);
    const headers = await bench.sign(body);
    const verifier = bench.verifier();

    expect(answerOf(await verifier(bench.event(body, headers)))).toEqual({ statusCode: 200, type: 5 });
    bench.h.clock.advance(60_000);
    expect(answerOf(await verifier(bench.event(body, headers)))).toEqual({ statusCode: 200, type: 5 });
    expect(bench.h.capture.logs('delivery').map((line) => line.reason)).toEqual(['accepted', 'duplicate']);
    bench.h.clock.advance(300_000);
    expect(answerOf(await verifier(bench.event(body, headers)))).toMatchObject({
      statusCode: 401,
      result: 'stale_timestamp',
      detail: `header ${TIMESTAMP} is older than the tolerance`,
    });
    expect(await bench.h.inboxItems()).toHaveLength(1);
  });

  test.each([
    ['no id', { type: 2, token: 'x', data: { name: 'note' } }, 'id is missing or not a string'],
    ['a numeric id', { id: 1162853462716543108, type: 2, token: 'x' }, 'id is missing or not a string'],
    ['no type', { id: '1162853462716543108', token: 'x' }, 'type is missing or not an interaction type'],
    ['a type that is text', { id: '1162853462716543108', type: '2', token: 'x' }, 'type is missing or not an interaction type'],
    ['a JSON array', [{ id: '1162853462716543108', type: 2 }], 'body is not a JSON object'],
  ])('a verified body with %s is answered 400 naming the field; nothing is stored', async (_name, payload, detail) => {
    expect(answerOf(await post(payload))).toEqual({ statusCode: 400, result: 'malformed', detail });
    await bench.h.expectNothingAdmitted();
  });
});

describe("the application's public key", () => {
  // RFC 8032, section 7.1, TEST 2: Ed25519 keys and signatures are written in hex there as in Discord's portal.
  const RFC_8032_TEST_2 = {
    publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  };

  test('decodes as the key of the RFC 8032 test vector, upper or lower case', () => {
    const { message, signature } = RFC_8032_TEST_2;
    for (const text of [RFC_8032_TEST_2.publicKey, RFC_8032_TEST_2.publicKey.toUpperCase()]) {
      const { bytes, publicKey } = decodeDiscordPublicKey(text);
      expect(bytes.toString('hex')).toBe(RFC_8032_TEST_2.publicKey);
      expect(verify(null, Buffer.from(message, 'hex'), publicKey!, Buffer.from(signature, 'hex'))).toBe(true);
      expect(verify(null, Buffer.from('73', 'hex'), publicKey!, Buffer.from(signature, 'hex'))).toBe(false);
    }
  });

  test.each([
    ['a Standard Webhooks whpk_ key', `whpk_${Buffer.alloc(32, 7).toString('base64')}`],
    ['63 hex characters', 'a'.repeat(63)],
    ['the key with a trailing newline', `${'a'.repeat(64)}\n`],
    ['the bot token instead', 'MTE2Mjg1MzQ2MjcxNjU0MzEwOA.GhJk3L.abcdefghijklmnopqrstuvwxyz0123456789AB'],
  ])('%s is no key: AWSCURRENT fails loudly, another stage is left out', (_name, value) => {
    const { adapter } = bench.adapter();
    expect(() => adapter.signingKeys([{ stage: 'AWSCURRENT', value }])).toThrow("signing secret is not the application's public key (64 hex characters)");
    expect(
      adapter.signingKeys([
        { stage: 'AWSCURRENT', value: bench.secret },
        { stage: 'AWSPENDING', value },
      ]),
    ).toHaveLength(1);
  });

  test('during a change of key both staged keys verify', async () => {
    const next = newApplicationKey();
    const { adapter } = bench.adapter();
    const keys = adapter.signingKeys([
      { stage: 'AWSCURRENT', value: bench.secret },
      { stage: 'AWSPENDING', value: next },
    ]);
    const body = bench.bytes(interaction('either key'));
    for (const publicKey of [bench.secret, next]) {
      const verdict = adapter.verify(await discordHeaders(body, publicKey, bench.h.clock.seconds), body, keys, bench.h.clock.seconds);
      expect(verdict).toMatchObject({ ok: true, key: { bytes: Buffer.from(publicKey, 'hex') } });
    }
  });
});
