import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { AwsLambdaReceiver } from '@zoom/rivet/meetings';
import type { APIGatewayProxyStructuredResultV2, Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { sha256Hex } from '../../../../support/inbox-fixture';
import { flipByte, HeaderMap, tamperSignature } from '../../../../support/senders';

const SIGNATURE = 'x-zm-signature';
const TIMESTAMP = 'x-zm-request-timestamp';
const TRACKING = 'x-zm-trackingid';

/** A Zoom app's secret token: 22 URL-safe characters. */
const zoomSecret = () => randomBytes(16).toString('base64url');

/**
 * Zoom's rule, stated here: `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the
 * secret token. Zoom publishes no complete test vector (its documented URL validation example
 * leaves the secret token out), so Zoom's own SDK, @zoom/rivet, judges the same requests below.
 */
function zoomHeaders(body: Buffer, secret: string, timestamp: number): HeaderMap {
  const mac = createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex');
  return {
    [TIMESTAMP]: String(timestamp),
    [SIGNATURE]: `v0=${mac}`,
    // Zoom's own delivery reference; nothing signs it.
    [TRACKING]: `v=2.0&s=${randomUUID()}&r=VA&c=aw1`,
    'user-agent': 'Zoom Marketplace/1.1a',
  };
}

interface RivetAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** What Zoom's own receiver answers to these bytes and headers (API Gateway and function URLs share the event format). */
async function rivetAnswer(body: Buffer, headers: HeaderMap, secret: string): Promise<RivetAnswer> {
  const handler = new AwsLambdaReceiver({ webhooksSecretToken: secret }).start();
  const event = { body: body.toString('utf8'), headers, isBase64Encoded: false } as unknown as LambdaFunctionURLEvent;
  return (await handler(event, {} as Context, () => undefined)) as RivetAnswer;
}

const meetingStarted = (note: string) => ({
  event: 'meeting.started',
  event_ts: 1789000000000 + Math.floor(Math.random() * 1e6),
  payload: {
    account_id: 'D8cJuqWVQ623CI4Q8yQK0Q',
    object: {
      id: String(Math.floor(Math.random() * 1e11)),
      uuid: `${randomBytes(16).toString('base64')}`,
      host_id: 'z8yCxjabcdEFGHfp8uQ',
      topic: note,
      type: 2,
    },
  },
});

const urlValidation = (payload: Record<string, unknown> = { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }) => ({
  payload,
  event_ts: 1654503849680,
  event: 'endpoint.url_validation',
});

const spec: PresetSpec = {
  name: 'zoom',
  adapter: AdapterKind.ZOOM,
  eventType: 'meeting.started',
  newSecret: zoomSecret,
  payload: meetingStarted,
  sign: zoomHeaders,
  // Zoom signs no delivery id: the inbox key is the body's digest, never x-zm-trackingid.
  eventId: (body) => sha256Hex(body),
  signatureHeader: SIGNATURE,
  timestampField: `header ${TIMESTAMP}`,
  malformed: [
    ['a missing x-zm-signature', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a signature without its v0= prefix', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice('v0='.length) }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -1) }), SIGNATURE],
    ['a missing x-zm-request-timestamp', () => ({ [TIMESTAMP]: undefined }), TIMESTAMP],
    ['a garbled x-zm-request-timestamp', () => ({ [TIMESTAMP]: 'soon' }), TIMESTAMP],
    ['a timestamp in milliseconds', (h) => ({ [TIMESTAMP]: `${h[TIMESTAMP]}000` }), TIMESTAMP],
  ],
};

const bench = PresetBench.use(spec);

// Zoom's receiver logs every event it is given at debug level.
beforeAll(() => jest.spyOn(console, 'debug').mockImplementation(() => undefined));
afterAll(() => jest.restoreAllMocks());

presetContract(bench);

/** Posts signed bytes and returns the raw answer (a handshake's answer is not the inbox's JSON). */
async function postRaw(body: Buffer, headers: HeaderMap, verifier = bench.verifier()): Promise<APIGatewayProxyStructuredResultV2> {
  return verifier(bench.event(body, headers));
}

describe("Zoom's own SDK (@zoom/rivet) as the judge", () => {
  test('its receiver accepts the events we accept, and refuses a flipped byte, another signature or another secret as we do', async () => {
    const body = bench.bytes(meetingStarted('judged by Zoom'));
    const headers = await bench.sign(body);
    const { adapter, keys } = bench.adapter();
    const now = bench.h.clock.seconds;

    expect((await rivetAnswer(body, headers, bench.secret)).statusCode).toBe(200);
    expect(adapter.verify(headers, body, keys, now)).toMatchObject({ ok: true, key: keys[0] });
    for (const [bytes, changed, secret] of [
      [flipByte(body), headers, bench.secret],
      [body, { ...headers, [SIGNATURE]: tamperSignature(headers[SIGNATURE]) }, bench.secret],
      [body, headers, zoomSecret()],
    ] as const) {
      expect((await rivetAnswer(bytes, changed, secret)).statusCode).toBe(400);
      expect(adapter.verify(changed, bytes, bench.adapter(secret).keys, now)).toMatchObject({ ok: false, reason: 'bad_signature' });
    }
  });

  test('its answer to a signed endpoint.url_validation is ours: 200 JSON with the plainToken and its HMAC under the secret token', async () => {
    const body = bench.bytes(urlValidation());
    const headers = await bench.sign(body);

    const theirs = await rivetAnswer(body, headers, bench.secret);
    const ours = await postRaw(body, headers);

    expect(ours).toMatchObject({ statusCode: theirs.statusCode, headers: { 'content-type': 'application/json' } });
    expect(theirs.headers).toEqual({ 'Content-Type': 'application/json' });
    expect(JSON.parse(String(ours.body))).toEqual(JSON.parse(theirs.body));
    expect(JSON.parse(String(ours.body))).toEqual({
      plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
      encryptedToken: createHmac('sha256', bench.secret).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'),
    });
  });
});

describe('endpoint.url_validation: answered at the edge, never stored', () => {
  test('a signed request is answered and counted as a handshake; nothing is stored', async () => {
    const body = bench.bytes(urlValidation());
    const answer = await postRaw(body, await bench.sign(body));

    expect(answer).toMatchObject({ statusCode: 200, headers: { 'content-type': 'application/json' } });
    expect(Object.keys(JSON.parse(String(answer.body)))).toEqual(['plainToken', 'encryptedToken']);
    expect(bench.h.capture.metric(MetricName.HANDSHAKE, 'zoom')).toBe(1);
    expect(bench.h.capture.logs('delivery')).toEqual([expect.objectContaining({ reason: 'handshake', status: 200 })]);
    await bench.h.expectNothingAdmitted();
  });

  test('an unsigned, forged or stale one gets no token back', async () => {
    const body = bench.bytes(urlValidation());
    const signed = await bench.sign(body);
    const stale = await bench.sign(body, { timestamp: bench.h.clock.seconds - 301 });

    for (const [headers, result] of [
      [{ [TIMESTAMP]: signed[TIMESTAMP] }, 'malformed'],
      [{ ...signed, [SIGNATURE]: tamperSignature(signed[SIGNATURE]) }, 'bad_signature'],
      [stale, 'stale_timestamp'],
    ] as const) {
      const answer = await postRaw(body, headers);
      expect(answer).toMatchObject({ statusCode: 400, body: expect.stringContaining(`"result":"${result}"`) });
      expect(answer.body).not.toContain('encryptedToken');
    }
    expect(bench.h.capture.metric(MetricName.HANDSHAKE, 'zoom')).toBe(0);
    await bench.h.expectNothingAdmitted();
  });

  test('during a rotation, a request signed with the staged secret is answered with that secret', async () => {
    const pending = zoomSecret();
    bench.h.markSensitive(pending);
    await bench.h.secrets.stagePending(bench.config.secretId!, pending);
    const body = bench.bytes(urlValidation({ plainToken: 'rotation-check-token-1' }));

    const answer = await postRaw(body, await bench.sign(body, { secret: pending }));

    expect(JSON.parse(String(answer.body))).toEqual({
      plainToken: 'rotation-check-token-1',
      encryptedToken: createHmac('sha256', pending).update('rotation-check-token-1').digest('hex'),
    });
  });

  test.each([
    ['no payload', undefined],
    ['no plainToken', {}],
    ['a numeric plainToken', { plainToken: 7 }],
    ['an empty plainToken', { plainToken: '' }],
  ])('a signed one with %s is answered 400 naming payload.plainToken', async (_name, payload) => {
    const body = bench.bytes({ event: 'endpoint.url_validation', event_ts: 1654503849680, ...(payload ? { payload } : {}) });
    expect(await bench.post(body, await bench.sign(body))).toEqual({
      statusCode: 400,
      result: 'malformed',
      detail: expect.stringMatching(/^payload\.plainToken /),
    });
    await bench.h.expectNothingAdmitted();
  });

  test('the adapter called without the verified key answers malformed instead of throwing', () => {
    const { adapter } = bench.adapter();
    expect(adapter.admit({}, bench.bytes(urlValidation()))).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('payload.plainToken') });
  });
});

describe('event ids and retries', () => {
  test('a retry (the same body, signed anew under another x-zm-trackingid) is a duplicate; the row keeps the first tracking id', async () => {
    const body = bench.bytes(meetingStarted('retried after five minutes'));
    const first = await bench.deliver(body);
    bench.h.clock.advance(300_000);
    const retry = await bench.deliver(body);

    expect(retry.headers[TRACKING]).not.toBe(first.headers[TRACKING]);
    expect([first.result, retry.result]).toEqual(['accepted', 'duplicate']);
    expect(await bench.h.inboxItems()).toHaveLength(1);
    expect((await bench.expectStored(body, first.headers)).meta).toMatchObject({ [TRACKING]: first.headers[TRACKING] });
  });

  test('two events of one meeting are two rows', async () => {
    const started = meetingStarted('the same meeting');
    const ended = { ...started, event: 'meeting.ended', event_ts: started.event_ts + 60_000 };

    expect((await bench.deliver(bench.bytes(started))).result).toBe('accepted');
    expect((await bench.deliver(bench.bytes(ended))).result).toBe('accepted');
    expect(await bench.h.inboxItems()).toHaveLength(2);
  });

  test.each([
    ['body that is not JSON', Buffer.from('event=meeting.started'), 'body is not a JSON object'],
    ['JSON array', Buffer.from('[{"event":"meeting.started"}]'), 'body is not a JSON object'],
    ['body without an event name', Buffer.from('{"payload":{"object":{"id":"1"}}}'), 'event is missing or not a string'],
    ['body with a numeric event name', Buffer.from('{"event":42,"payload":{}}'), 'event is missing or not a string'],
  ])('a verified %s is answered 400 naming what is wrong; nothing is stored', async (_name, body, detail) => {
    expect(await bench.deliver(body)).toMatchObject({ statusCode: 400, result: 'malformed', detail });
    await bench.h.expectNothingAdmitted();
  });
});
