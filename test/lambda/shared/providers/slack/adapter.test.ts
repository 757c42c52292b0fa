import { createHmac, randomBytes } from 'node:crypto';
import { isValidSlackRequest, verifySlackRequest } from '@slack/bolt';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { sha256Hex } from '../../../../support/inbox-fixture';
import { flipByte, HeaderMap, tamperSignature } from '../../../../support/senders';

const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';
const RETRY_NUM = 'x-slack-retry-num';

/**
 * Slack's official signing vector, from the signature verifier tests of Slack's Python SDK
 * (python-slack-sdk), which reproduce the example of Slack's guide to verifying requests: a
 * slash command's form-encoded body, its timestamp, the signing secret and the signature.
 */
const SLACK_VECTOR = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: 1531420618,
  body:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
    '&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN' +
    '&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
} as const;

/** A Slack app's signing secret: 32 hexadecimal characters. */
const slackSecret = () => randomBytes(16).toString('hex');

/**
 * Slack's rule, stated here: `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the
 * signing secret. Every signature is checked by Slack's own verifier (@slack/bolt) before use,
 * so the rule and Slack's library cannot drift apart.
 */
function slackHeaders(body: Buffer, secret: string, timestamp: number, retryOf?: HeaderMap): HeaderMap {
  const mac = createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex');
  const signature = `v0=${mac}`;
  verifySlackRequest({
    signingSecret: secret,
    body: body.toString('utf8'),
    headers: { [SIGNATURE]: signature, [TIMESTAMP]: timestamp },
    nowMilliseconds: timestamp * 1000,
  });
  const retry: HeaderMap = retryOf ? { [RETRY_NUM]: String(Number(retryOf[RETRY_NUM] ?? 0) + 1), 'x-slack-retry-reason': 'http_timeout' } : {};
  return { [TIMESTAMP]: String(timestamp), [SIGNATURE]: signature, 'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)', ...retry };
}

const eventId = () => `Ev${randomBytes(5).toString('hex').toUpperCase()}`;

const messageEvent = (note: string, id = eventId()) => ({
  token: 'XXYYZZ',
  team_id: 'T061EG9R6',
  api_app_id: 'A0PNCHHK2',
  event: { type: 'message', channel: 'C2147483705', user: 'U2147483697', text: note, ts: '1355517523.000005' },
  type: 'event_callback',
  authorizations: [{ enterprise_id: null, team_id: 'T061EG9R6', user_id: 'U2147483697', is_bot: false }],
  event_context: 'EC12345',
  event_id: id,
  event_time: 1789000000,
});

const spec: PresetSpec = {
  name: 'slack',
  adapter: AdapterKind.SLACK,
  eventType: 'message',
  newSecret: slackSecret,
  payload: messageEvent,
  sign: slackHeaders,
  eventId: (body) => (JSON.parse(body.toString('utf8')) as { event_id: string }).event_id,
  signatureHeader: SIGNATURE,
  timestampField: `header ${TIMESTAMP}`,
  malformed: [
    ['a missing X-Slack-Signature', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a signature without its v0= prefix', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice('v0='.length) }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -1) }), SIGNATURE],
    ['a missing X-Slack-Request-Timestamp', () => ({ [TIMESTAMP]: undefined }), TIMESTAMP],
    ['a garbled X-Slack-Request-Timestamp', () => ({ [TIMESTAMP]: 'now' }), TIMESTAMP],
    ['a timestamp in milliseconds', (h) => ({ [TIMESTAMP]: `${h[TIMESTAMP]}000` }), TIMESTAMP],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

/** Posts signed bytes and returns the raw answer (a handshake's answer is not the inbox's JSON). */
async function postRaw(body: Buffer, headers: HeaderMap): Promise<APIGatewayProxyStructuredResultV2> {
  return bench.verifier()(bench.event(body, headers));
}

describe("Slack's official vector", () => {
  const body = Buffer.from(SLACK_VECTOR.body);
  const headers = { [SIGNATURE]: SLACK_VECTOR.signature, [TIMESTAMP]: String(SLACK_VECTOR.timestamp) };

  test("Slack's own verifier and ours accept it; a flipped byte, another signature or a stale clock is refused", () => {
    expect(() =>
      verifySlackRequest({
        signingSecret: SLACK_VECTOR.secret,
        body: SLACK_VECTOR.body,
        headers: { ...headers, [TIMESTAMP]: SLACK_VECTOR.timestamp },
        nowMilliseconds: SLACK_VECTOR.timestamp * 1000,
      }),
    ).not.toThrow();
    expect(slackHeaders(body, SLACK_VECTOR.secret, SLACK_VECTOR.timestamp)[SIGNATURE]).toBe(SLACK_VECTOR.signature);
    const { adapter, keys } = bench.adapter(SLACK_VECTOR.secret);
    const at = SLACK_VECTOR.timestamp;

    expect(adapter.verify(headers, body, keys, at)).toMatchObject({ ok: true, key: keys[0] });
    expect(adapter.verify(headers, flipByte(body), keys, at)).toMatchObject({ ok: false, reason: 'bad_signature', detail: expect.stringContaining(SIGNATURE) });
    expect(adapter.verify({ ...headers, [SIGNATURE]: tamperSignature(SLACK_VECTOR.signature) }, body, keys, at)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(adapter.verify(headers, body, keys, at + 301)).toEqual({
      ok: false,
      reason: 'stale_timestamp',
      detail: `header ${TIMESTAMP} is older than the tolerance`,
    });
    expect(
      isValidSlackRequest({
        signingSecret: SLACK_VECTOR.secret,
        body: flipByte(body).toString('utf8'),
        headers: { ...headers, [TIMESTAMP]: at },
        nowMilliseconds: at * 1000,
      }),
    ).toBe(false);
  });

  test('through the verifier the slash command is stored under its body digest (a form body carries no event id)', async () => {
    const config = await bench.h.addProvider('slack', AdapterKind.SLACK, SLACK_VECTOR.secret);
    bench.h.clock.set(SLACK_VECTOR.timestamp * 1000);
    const verifier = bench.h.verifier({ providers: [config] });
    const event = () => bench.event(body, { ...headers, 'content-type': 'application/x-www-form-urlencoded' });

    expect(await verifier(event())).toMatchObject({ statusCode: 202 });
    expect(await verifier(event())).toMatchObject({ statusCode: 200, body: JSON.stringify({ result: 'duplicate' }) });
    const key = `sha256:${sha256Hex(body)}`;
    expect((await bench.row(key))!.body).toEqual(body);
    expect(await bench.h.takeMessages()).toEqual([bench.key(key)]);
  });
});

describe('url_verification: answered with its challenge at the edge, never stored', () => {
  const challenge = '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P';
  const verification = (fields: Record<string, unknown> = { challenge }) =>
    bench.bytes({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', ...fields, type: 'url_verification' });

  test('a signed request is answered 200 text/plain with the challenge, counted as a handshake', async () => {
    const body = verification();
    const answer = await postRaw(body, await bench.sign(body));

    expect(answer).toEqual({ statusCode: 200, headers: { 'content-type': 'text/plain' }, body: challenge });
    expect(bench.h.capture.metric(MetricName.HANDSHAKE, 'slack')).toBe(1);
    expect(bench.h.capture.logs('delivery')).toEqual([expect.objectContaining({ reason: 'handshake', status: 200 })]);
    await bench.h.expectNothingAdmitted();
  });

  test('an unsigned, forged or stale one gets no challenge back', async () => {
    const body = verification();
    const signed = await bench.sign(body);
    const stale = await bench.sign(body, { timestamp: bench.h.clock.seconds - 301 });

    for (const [headers, result] of [
      [{ [TIMESTAMP]: signed[TIMESTAMP] }, 'malformed'],
      [{ ...signed, [SIGNATURE]: tamperSignature(signed[SIGNATURE]) }, 'bad_signature'],
      [stale, 'stale_timestamp'],
    ] as const) {
      const answer = await postRaw(body, headers);
      expect(answer).toMatchObject({ statusCode: 400, body: expect.stringContaining(`"result":"${result}"`) });
      expect(answer.body).not.toContain(challenge);
    }
    expect(bench.h.capture.metric(MetricName.HANDSHAKE, 'slack')).toBe(0);
    await bench.h.expectNothingAdmitted();
  });

  test.each([
    ['no challenge', {}],
    ['a numeric challenge', { challenge: 42 }],
    ['an empty challenge', { challenge: '' }],
    ['a challenge over 512 bytes', { challenge: 'c'.repeat(513) }],
  ])('a signed one with %s is answered 400 naming challenge', async (_name, fields) => {
    const body = verification(fields);
    expect(await bench.post(body, await bench.sign(body))).toEqual({ statusCode: 400, result: 'malformed', detail: expect.stringMatching(/^challenge /) });
    await bench.h.expectNothingAdmitted();
  });
});

describe('event ids and retries', () => {
  test("a retry (X-Slack-Retry-Num, signed anew) is a duplicate; the row is the first attempt's, without retry headers", async () => {
    const body = bench.bytes(messageEvent('retried after a timeout'));
    const first = await bench.deliver(body);
    bench.h.clock.advance(60_000);
    const retry = await bench.deliver(body, { retryOf: first.headers });

    expect(retry.headers[RETRY_NUM]).toBe('1');
    expect([first.result, retry.result]).toEqual(['accepted', 'duplicate']);
    expect(await bench.h.inboxItems()).toHaveLength(1);
    expect((await bench.expectStored(body, first.headers)).meta).not.toHaveProperty(RETRY_NUM);
  });

  test('a first delivery that is itself a retry keeps X-Slack-Retry-Num and X-Slack-Retry-Reason as metadata', async () => {
    const body = bench.bytes(messageEvent('first seen on its second attempt'));
    const headers = { ...(await bench.sign(body)), [RETRY_NUM]: '2', 'x-slack-retry-reason': 'http_error' };

    expect(await bench.post(body, headers)).toEqual({ statusCode: 202, result: 'accepted' });
    expect((await bench.expectStored(body, headers)).meta).toMatchObject({ [RETRY_NUM]: '2', 'x-slack-retry-reason': 'http_error' });
  });

  test('the same event_id with another body is quarantined as an altered copy', async () => {
    const id = eventId();
    expect((await bench.deliver(bench.bytes(messageEvent('original', id)))).result).toBe('accepted');
    expect((await bench.deliver(bench.bytes(messageEvent('altered', id)))).result).toBe('quarantined');
  });

  test.each([
    ['no event_id', { type: 'event_callback', event: { type: 'message' } }],
    ['a numeric event_id', { type: 'event_callback', event_id: 42 }],
    ['an event_id on another envelope', { type: 'app_rate_limited', event_id: '' }],
  ])('an Events API body with %s is answered 400 naming event_id; nothing is stored', async (_name, payload) => {
    expect(await bench.deliver(bench.bytes(payload))).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringMatching(/^event_id /) });
    await bench.h.expectNothingAdmitted();
  });

  test.each([
    [
      'an interactivity payload (payload=<urlencoded JSON>)',
      `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', trigger_id: '13345224609.738474920.8088930838d88f008e0', actions: [{ action_id: 'approve', action_ts: '1548426417.840180' }] }))}`,
    ],
    [
      'app_rate_limited (Slack names no event id)',
      JSON.stringify({
        token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
        type: 'app_rate_limited',
        team_id: 'T123456',
        minute_rate_limited: 1518467820,
        api_app_id: 'A123456',
      }),
    ],
  ])('%s is stored under sha256:<digest of the body>; the same bytes again are a duplicate', async (_name, text) => {
    const body = Buffer.from(text);
    const first = await bench.deliver(body);
    const again = await bench.deliver(body);

    expect([first.result, again.result]).toEqual(['accepted', 'duplicate']);
    expect((await bench.row(`sha256:${sha256Hex(body)}`))!.body).toEqual(body);
  });
});
