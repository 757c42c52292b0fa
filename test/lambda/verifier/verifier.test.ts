import { request } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { AdapterKind, Defaults, DeliveryStatus, MetricName, PendingIndex, providerRuntimeConfig } from '../../../lib/contract';
import { shardOf } from '../../../lambda/shared/runtime/digest';
import { MIN_MISS_REFRESH_MS, SecretCache } from '../../../lambda/shared/signatures/secrets';
import {
  answerlineBody,
  answerOf,
  apiGatewayEvent,
  Clock,
  InboxHarness,
  keyOf,
  newSigningSecret,
  PROVIDER,
  RETENTION_SECONDS,
  SecretsFixture,
  sha256Hex,
  signatureHeaders,
  taskIdOf,
  TOLERANCE_SECONDS,
} from '../../support/inbox-fixture';
import { startApiGateway } from '#twin/testing';

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'verifier');
});
afterEach(() => {
  // For every test of this file (docs/DESIGN.md#invariant-9): no line carries a secret, a body or a signature.
  h.expectLogsClean();
  h.destroy();
});

/** Nothing stored, nothing enqueued: the invariant of every rejection. */
async function expectNothingAdmitted(): Promise<void> {
  expect(await h.inboxItems()).toEqual([]);
  expect(await h.takeMessages()).toEqual([]);
}

/** Headers validly signed with the inbox's secret at `offsetSeconds` from now: only freshness can fail. */
const signedAt = (offsetSeconds: number) => (body: string) => signatureHeaders(body, { secret: h.secret.value, timestamp: h.clock.seconds + offsetSeconds });

describe('a valid delivery', () => {
  test('is answered 202 once exactly one complete row is stored and one work message is queued', async () => {
    const body = answerlineBody();
    const event = h.signed(body);
    const answer = answerOf(await h.verifier()(event));

    expect(answer).toEqual({ statusCode: 202, result: 'accepted' });
    const key = keyOf(body);
    const items = await h.inboxItems();
    expect(items).toHaveLength(1);
    const [row] = items;
    expect(row).toMatchObject({
      pk: key,
      sk: 'delivery',
      digest: sha256Hex(body),
      status: DeliveryStatus.RECEIVED,
      attempts: 0,
      receivedAt: h.clock.now(),
      expiresAt: h.clock.seconds + RETENTION_SECONDS,
      pendingShard: shardOf(key, PendingIndex.SHARD_COUNT),
      pendingSince: h.clock.now(),
    });
    expect((row.body as Buffer).equals(Buffer.from(body, 'utf8'))).toBe(true);
    // The row keeps delivery metadata but never the signature.
    expect(row.meta).toEqual({
      'webhook-id': event.headers['webhook-id'],
      'webhook-timestamp': event.headers['webhook-timestamp'],
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'Answerline-Webhooks/1.0',
    });
    expect(JSON.stringify(row.meta)).not.toContain(event.headers['webhook-signature']);

    expect(await h.takeMessages()).toEqual([key]);
    expect(h.capture.metric(MetricName.ACCEPTED, PROVIDER)).toBe(1);
  });

  test('a duplicate is answered 200 and inserts and enqueues nothing', async () => {
    const body = answerlineBody();
    const verifier = h.verifier();
    expect(await h.deliver(body, verifier)).toMatchObject({ statusCode: 202, result: 'accepted' });
    const [original] = await h.inboxItems();
    h.clock.advance(5_000);

    // A retry by the provider: same body, signed again (new timestamp and id of the attempt).
    expect(await h.deliver(body, verifier)).toEqual({ statusCode: 200, result: 'duplicate' });

    expect(await h.inboxItems()).toEqual([original]);
    expect(await h.takeMessages()).toEqual([keyOf(body)]);
    expect(h.capture.metric(MetricName.DUPLICATE)).toBe(1);
  });

  test('20 concurrent copies of one signed request store exactly one row and queue one message', async () => {
    const body = answerlineBody();
    const event = h.signed(body);
    const verifier = h.verifier();

    const answers = (await Promise.all(Array.from({ length: 20 }, () => verifier(structuredClone(event))))).map(answerOf);

    expect(answers.filter((a) => a.result === 'accepted')).toHaveLength(1);
    expect(answers.filter((a) => a.result === 'duplicate')).toHaveLength(19);
    expect(await h.inboxItems()).toHaveLength(1);
    expect(await h.takeMessages()).toEqual([keyOf(body)]);
  });
});

describe('rejections: nothing stored, nothing enqueued, a 400 naming the header', () => {
  const forgedSecret = newSigningSecret();

  type Case = [name: string, build: (body: string) => Record<string, string | undefined>, reason: string, detail: string, metric: string];
  const cases: Case[] = [
    [
      'a wrong secret',
      (body) => signatureHeaders(body, { secret: forgedSecret, timestamp: h.clock.seconds }),
      'bad_signature',
      'webhook-signature',
      MetricName.BAD_SIGNATURE,
    ],
    ['a stale timestamp (301 s past)', signedAt(-TOLERANCE_SECONDS - 1), 'stale_timestamp', 'webhook-timestamp', MetricName.STALE_TIMESTAMP],
    ['a future timestamp (301 s ahead)', signedAt(TOLERANCE_SECONDS + 1), 'stale_timestamp', 'webhook-timestamp', MetricName.STALE_TIMESTAMP],
    ['a missing webhook-id', () => ({ 'webhook-id': undefined }), 'malformed', 'webhook-id', MetricName.MALFORMED],
    ['an over-long webhook-id', () => ({ 'webhook-id': 'm'.repeat(257) }), 'malformed', 'webhook-id', MetricName.MALFORMED],
    ['a missing webhook-timestamp', () => ({ 'webhook-timestamp': undefined }), 'malformed', 'webhook-timestamp', MetricName.MALFORMED],
    ['a garbled webhook-timestamp', () => ({ 'webhook-timestamp': `${h.clock.seconds}.5` }), 'malformed', 'webhook-timestamp', MetricName.MALFORMED],
    ['a timestamp in milliseconds', () => ({ 'webhook-timestamp': String(h.clock.now()) }), 'malformed', 'webhook-timestamp', MetricName.MALFORMED],
    ['an ISO-8601 timestamp', () => ({ 'webhook-timestamp': new Date(h.clock.now()).toISOString() }), 'malformed', 'webhook-timestamp', MetricName.MALFORMED],
    ['a missing webhook-signature', () => ({ 'webhook-signature': undefined }), 'malformed', 'webhook-signature', MetricName.MALFORMED],
    ['a garbled webhook-signature', () => ({ 'webhook-signature': 'v1,%%%not-base64%%%' }), 'malformed', 'webhook-signature', MetricName.MALFORMED],
    [
      'a truncated v1 signature',
      () => ({ 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1O=' }),
      'malformed',
      'webhook-signature',
      MetricName.MALFORMED,
    ],
    ['a bare "v1"', () => ({ 'webhook-signature': 'v1' }), 'malformed', 'webhook-signature', MetricName.MALFORMED],
  ];

  test.each(cases)('%s', async (_name, build, reason, header, metric) => {
    const body = answerlineBody();
    // The headers under test replace (or, when undefined, remove) those of a valid signature.
    const event = apiGatewayEvent(body, { ...h.signed(body).headers, ...build(body) });

    const answer = answerOf(await h.verifier()(event));

    expect(answer.statusCode).toBe(400);
    expect(answer.result).toBe(reason);
    expect(answer.detail).toContain(header);
    expect(h.capture.metric(metric, PROVIDER)).toBe(1);
    // Every refusal at the authenticity check feeds the signature-failure alarm, whatever its reason.
    expect(h.capture.metric(MetricName.AUTHENTICATION_FAILED, PROVIDER)).toBe(1);
    await expectNothingAdmitted();
  });

  test('a tampered body fails the signature', async () => {
    const body = answerlineBody({ response: { result: { answer: 'yes' } } });
    const event = h.signed(body);
    event.body = event.body!.replace('"yes"', '"no!"');

    expect(answerOf(await h.verifier()(event))).toMatchObject({
      statusCode: 400,
      result: 'bad_signature',
      detail: expect.stringContaining('webhook-signature'),
    });
    await expectNothingAdmitted();
  });

  test('a list holding only non-v1 entries is rejected even when one of them carries the right MAC', async () => {
    const body = answerlineBody();
    const signed = h.signed(body);
    const good = signed.headers['webhook-signature']!.slice(3);
    const event = apiGatewayEvent(body, { ...signed.headers, 'webhook-signature': `v2,${good} v1a,${good} ${good} V1,${good}` });

    expect(answerOf(await h.verifier()(event))).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringContaining('webhook-signature') });
    await expectNothingAdmitted();
  });

  test('the tolerance is 300 s each way, inclusive', async () => {
    const verifier = h.verifier();
    for (const offset of [-TOLERANCE_SECONDS, TOLERANCE_SECONDS]) {
      expect(await h.deliver(answerlineBody(), verifier, { timestamp: h.clock.seconds + offset })).toMatchObject({ statusCode: 202 });
    }
    for (const offset of [-TOLERANCE_SECONDS - 1, TOLERANCE_SECONDS + 1]) {
      expect(await h.deliver(answerlineBody(), verifier, { timestamp: h.clock.seconds + offset })).toMatchObject({
        statusCode: 400,
        result: 'stale_timestamp',
      });
    }
    expect(await h.inboxItems()).toHaveLength(2);
  });
});

describe('signature lists and raw bytes', () => {
  test.each([
    ['after a forged entry', (good: string, forged: string) => `${forged} ${good}`],
    ['before a forged entry', (good: string, forged: string) => `${good} ${forged}`],
    ['after a v2 entry', (good: string) => `v2,abc ${good}`],
    ['among forged, garbled and non-v1 entries', (good: string, forged: string) => `${forged} v1,bogus ${good} v1a,${good.slice(3)}`],
  ])('any v1 entry of a space-separated list may match: %s', async (_name, list) => {
    const body = answerlineBody();
    const signed = h.signed(body);
    const forged = signatureHeaders(body, { secret: newSigningSecret(), timestamp: h.clock.seconds })['webhook-signature'];
    const event = apiGatewayEvent(body, { ...signed.headers, 'webhook-signature': list(signed.headers['webhook-signature']!, forged) });

    expect(answerOf(await h.verifier()(event))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await h.inboxItems()).toHaveLength(1);
  });

  test('a signature header sent twice over HTTP, joined with a comma by API Gateway, verifies', async () => {
    const body = answerlineBody();
    const signed = h.signed(body);
    const forged = signatureHeaders(body, { secret: newSigningSecret(), timestamp: h.clock.seconds })['webhook-signature'];
    const events: APIGatewayProxyEventV2[] = [];
    const verifier = h.verifier();
    const api = await startApiGateway({ routes: [{ routeKey: `POST /hooks/${PROVIDER}`, invoke: (event) => (events.push(event), verifier(event)) }] });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const headers = { ...signed.headers, 'content-type': 'application/json', 'webhook-signature': [forged, signed.headers['webhook-signature']!] };
        const req = request(`${api.url}/hooks/${PROVIDER}`, { method: 'POST', headers }, (res) => resolve(res.resume().statusCode!));
        req.on('error', reject).end(body);
      });

      expect(events[0].headers['webhook-signature']).toBe(`${forged},${signed.headers['webhook-signature']}`);
      expect(status).toBe(202);
      expect(await h.inboxItems()).toHaveLength(1);
    } finally {
      await api.stop();
    }
  });

  test('a base64-encoded API Gateway body verifies and is stored byte-exactly, non-ASCII, emoji and invalid UTF-8 included', async () => {
    const unicode = Buffer.from(answerlineBody({ response: { result: { answer: 'Grüße aus Köln 🚀 — 東京 ✓ \u2028 "quoted" \\' } } }), 'utf8');
    // A stray 0xFF inside a JSON string is not UTF-8: only the raw bytes carry the signature.
    const [head, tail] = answerlineBody({ response: { result: { answer: 'RAW_BYTE' } } }).split('RAW_BYTE');
    const notUtf8 = Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from([0xff, 0xfe]), Buffer.from(tail, 'utf8')]);
    const verifier = h.verifier();

    for (const body of [unicode, notUtf8]) {
      const event = h.signed(body, {}, { 'content-type': 'application/octet-stream' }, { base64: true });
      expect(event.body).toBe(body.toString('base64'));
      expect(answerOf(await verifier(event))).toEqual({ statusCode: 202, result: 'accepted' });
      const row = await h.row(keyOf(body.toString('utf8')));
      expect((row!.body as Buffer).equals(body)).toBe(true);
      expect(row!.digest).toBe(sha256Hex(body));
    }
    expect(await h.takeMessages()).toHaveLength(2);
  });

  test('the isBase64Encoded flag is honoured: base64 text taken as the body fails the signature', async () => {
    const body = answerlineBody();
    const event = h.signed(body, {}, {}, { base64: true });
    event.isBase64Encoded = false;

    expect(answerOf(await h.verifier()(event))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    await expectNothingAdmitted();
  });
});

describe('what the body says', () => {
  test('a test delivery ("test": true) is answered 200 and stores and enqueues nothing', async () => {
    const body = JSON.stringify({ test: true, task: { id: 'tsk_dashboard_sample', status: 'COMPLETED' }, sample: 'dashboard test delivery' });

    expect(await h.deliver(body)).toEqual({ statusCode: 200, result: 'test' });
    await expectNothingAdmitted();
    expect(h.capture.metric(MetricName.TEST_DELIVERY, PROVIDER)).toBe(1);
  });

  test.each([
    ['task.id missing', JSON.stringify({ task: { status: 'COMPLETED' }, response: { result: 'the result of a task without id' } }), 'task.id'],
    ['task.id not a string', JSON.stringify({ task: { id: 42, status: 'COMPLETED' }, response: { result: 'the result of task forty-two' } }), 'task.id'],
    ['a body that is not a JSON object', '["an array body is not an Answerline delivery"]', 'body'],
  ])('%s: 400 malformed naming the field, nothing stored', async (_name, body, field) => {
    const answer = await h.deliver(body);

    expect(answer).toMatchObject({ statusCode: 400, result: 'malformed' });
    expect(answer.detail).toContain(field);
    await expectNothingAdmitted();
  });

  test('a body over the limit is answered 413 before anything else, and one at the limit is accepted', async () => {
    const limit = 4096;
    const verifier = h.verifier({ maxBodyBytes: limit });
    const pad = (body: string, bytes: number) => body.replace('"credits"', `"padding":"${'x'.repeat(bytes - Buffer.byteLength(body) - 13)}","credits"`);
    const atLimit = pad(answerlineBody(), limit);
    const overLimit = pad(answerlineBody(), limit + 1);
    expect(Buffer.byteLength(atLimit)).toBe(limit);
    expect(Buffer.byteLength(overLimit)).toBe(limit + 1);

    expect(answerOf(await verifier(h.signed(overLimit, {}, {}, { base64: true })))).toMatchObject({ statusCode: 413, result: 'too_large' });
    expect(await h.deliver(overLimit, verifier)).toMatchObject({ statusCode: 413, result: 'too_large' });
    await expectNothingAdmitted();
    expect(h.capture.metric(MetricName.TOO_LARGE, PROVIDER)).toBe(2);

    expect(await h.deliver(atLimit, verifier)).toMatchObject({ statusCode: 202 });
  });

  test('an unknown provider path is answered 404 and stores nothing', async () => {
    const verifier = h.verifier();
    for (const path of ['/hooks/someone-else', '/hooks/', '/webhooks/answerline', '/hooks/answerline/extra']) {
      const event = h.signed(answerlineBody(), {}, {}, { path });
      expect(answerOf(await verifier(event))).toMatchObject({ statusCode: 404, result: 'unknown_provider' });
    }
    await expectNothingAdmitted();
  });

  test('a polled-only provider (no signing secret) is served no path: a request naming it is answered 404, as any unknown path', async () => {
    const batches = providerRuntimeConfig({ name: 'batches', adapter: AdapterKind.MESSAGE_BATCHES });
    const verifier = h.verifier({ providers: [h.providerConfig(), batches] });
    const event = h.signed(answerlineBody(), {}, {}, { path: '/hooks/batches' });
    expect(answerOf(await verifier(event))).toMatchObject({ statusCode: 404, result: 'unknown_provider' });
    await expectNothingAdmitted();
    // The provider it does serve is unaffected.
    expect(await h.deliver(answerlineBody(), verifier)).toMatchObject({ statusCode: 202 });
  });
});

describe('durable before acknowledged', () => {
  test('a store that cannot be reached is answered 503 and leaves nothing behind; the retry is accepted', async () => {
    const body = answerlineBody();

    const answer = await h.deliver(body, h.verifier({ inbox: h.unreachableInbox() }));

    expect(answer).toEqual({ statusCode: 503, result: 'store_error' });
    await expectNothingAdmitted();
    expect(h.capture.metric(MetricName.STORE_ERROR, PROVIDER)).toBe(1);
    // The provider retries once the store is back.
    expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
    expect(await h.inboxItems()).toHaveLength(1);
  });

  test('a failed enqueue still answers 202: the row is stored, the failure is counted, the message is missing', async () => {
    const body = answerlineBody();

    const answer = await h.deliver(body, h.verifier({ queue: h.missingQueue() }));

    expect(answer).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED, digest: sha256Hex(body) });
    expect(await h.takeMessages()).toEqual([]);
    expect(h.capture.metric(MetricName.ENQUEUE_FAILED, PROVIDER)).toBe(1);
    expect(h.capture.logs('delivery')[0]).toMatchObject({ reason: 'accepted', enqueue: 'failed', error: 'QueueDoesNotExist' });
  });

  test('an unavailable secret is answered 503 and stores nothing', async () => {
    const answer = await h.deliver(answerlineBody(), h.verifier({ secretId: 'no-such-secret' }));

    expect(answer).toEqual({ statusCode: 503, result: 'secret_unavailable' });
    await expectNothingAdmitted();
    expect(h.capture.metric(MetricName.SECRET_UNAVAILABLE, PROVIDER)).toBe(1);
  });
});

describe('AWS throttles the calls (injected by the fault proxy, as many calls in a row as the SDK attempts)', () => {
  test.each(['ProvisionedThroughputExceededException', 'ThrottlingException'] as const)(
    'the inbox write throttled (%s) is answered 503 and stores nothing; the retry after it is stored once',
    async (error) => {
      const faults = await h.faults();
      const body = answerlineBody();
      const attempts = await h.sdkAttempts('dynamodb');
      const throttle = faults.throttle({ operations: ['PutItem'], calls: attempts, error });

      expect(await h.deliver(body)).toEqual({ statusCode: 503, result: 'store_error' });
      expect(throttle.injected).toBe(attempts);
      await expectNothingAdmitted();
      expect(h.capture.metric(MetricName.STORE_ERROR, PROVIDER)).toBe(1);
      expect(h.capture.logs('delivery')[0]).toMatchObject({ reason: 'store_error', error });

      // The provider retries (signed anew) once the table takes writes again.
      h.clock.advance(5_000);
      expect(await h.deliver(body)).toEqual({ statusCode: 202, result: 'accepted' });
      expect(await h.inboxItems()).toHaveLength(1);
      expect(await h.takeMessages()).toEqual([keyOf(body)]);
    },
  );

  test.each(['RequestThrottled', 'ThrottlingException'] as const)(
    'the enqueue throttled (%s) still answers 202: the row is durable, the failure counted, and the sweep enqueues it once',
    async (error) => {
      const faults = await h.faults();
      const body = answerlineBody();
      const attempts = await h.sdkAttempts('sqs');
      const throttle = faults.throttle({ operations: ['SendMessage'], calls: attempts, error });

      expect(await h.deliver(body)).toEqual({ statusCode: 202, result: 'accepted' });
      expect(throttle.injected).toBe(attempts);
      expect(h.capture.metric(MetricName.ENQUEUE_FAILED, PROVIDER)).toBe(1);
      expect(h.capture.logs('delivery')[0]).toMatchObject({ reason: 'accepted', enqueue: 'failed', error });
      expect(await h.takeMessages()).toEqual([]);

      h.clock.advance(Defaults.SWEEP_AFTER_SECONDS * 1000 + 1);
      expect(await h.reconciler()()).toMatchObject({ swept: 1 });
      expect(await h.takeMessages()).toEqual([keyOf(body)]);
    },
  );

  test('a duplicate whose read of the original is throttled is answered 503; the retry is the duplicate it is, and nothing is quarantined', async () => {
    const faults = await h.faults();
    const body = answerlineBody();
    expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
    faults.throttle({ operations: ['GetItem'], calls: await h.sdkAttempts('dynamodb') });

    expect(await h.deliver(body)).toEqual({ statusCode: 503, result: 'store_error' });
    expect(await h.deliver(body)).toEqual({ statusCode: 200, result: 'duplicate' });
    expect((await h.inboxItems()).map((item) => item.sk)).toEqual(['delivery']);
    expect(await h.takeMessages()).toEqual([keyOf(body)]);
  });

  test('an altered copy whose quarantine write is throttled is answered 503; the retry quarantines it, counted once', async () => {
    const faults = await h.faults();
    const original = answerlineBody({ id: 'tsk_throttled_copy' });
    const altered = answerlineBody({ id: 'tsk_throttled_copy' });
    expect(await h.deliver(original)).toMatchObject({ statusCode: 202 });
    faults.throttle({ operations: ['UpdateItem'], calls: await h.sdkAttempts('dynamodb') });

    expect(await h.deliver(altered)).toEqual({ statusCode: 503, result: 'store_error' });
    expect(await h.deliver(altered)).toEqual({ statusCode: 200, result: 'quarantined' });
    expect(await h.row(keyOf(altered), `quarantine#${sha256Hex(altered)}`)).toMatchObject({ count: 1 });
  });
});

describe('the first accepted body is immutable', () => {
  test('an altered, validly signed duplicate is quarantined beside the untouched original, and counted on repeat', async () => {
    const taskId = 'tsk_altered_duplicate';
    const original = answerlineBody({ id: taskId, idempotencyKey: 'job-1' });
    const altered = answerlineBody({ id: taskId, idempotencyKey: 'job-1' });
    const verifier = h.verifier();
    expect(await h.deliver(original, verifier)).toMatchObject({ statusCode: 202 });
    const before = await h.row(keyOf(original));

    expect(await h.deliver(altered, verifier)).toEqual({ statusCode: 200, result: 'quarantined' });
    h.clock.advance(1_000);
    expect(await h.deliver(altered, verifier)).toEqual({ statusCode: 200, result: 'quarantined' });

    expect(await h.row(keyOf(original))).toEqual(before);
    const quarantineSk = `quarantine#${sha256Hex(altered)}`;
    const copy = await h.row(keyOf(altered), quarantineSk);
    expect(copy).toMatchObject({ provider: PROVIDER, digest: sha256Hex(altered), count: 2 });
    expect((copy!.body as Buffer).toString('utf8')).toBe(altered);
    expect(copy).not.toHaveProperty('pendingShard');
    expect((await h.inboxItems()).map((item) => item.sk).sort()).toEqual(['delivery', quarantineSk]);
    expect(await h.takeMessages()).toEqual([keyOf(original)]);
    expect(h.capture.metric(MetricName.QUARANTINED, PROVIDER)).toBe(2);
    expect(h.capture.logs('delivery')[1]).toMatchObject({ reason: 'quarantined', originalDigest: sha256Hex(original) });
  });
});

describe('signing secrets', () => {
  test('the Standard Webhooks test vector verifies through the handler (its body is no Answerline delivery)', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const vector = await secrets.create(secret);
    const clock = new Clock(1614265330 * 1000);
    h.markSensitive(secret);
    const reader = h.countingReader('verifier', { providers: [h.providerConfig(vector.id)] });
    const verifier = h.verifier({
      secretId: vector.id,
      now: clock.now,
      secrets: new SecretCache(reader, { ttlMs: 60_000, minRefreshIntervalMs: 60_000 }, clock.now),
    });
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };

    // Authentic: the rejection is about the body, not the signature.
    expect(answerOf(await verifier(apiGatewayEvent('{"test": 2432232314}', headers)))).toMatchObject({
      statusCode: 400,
      result: 'malformed',
      detail: expect.stringContaining('task.id'),
    });
    // One byte changed: not authentic.
    expect(answerOf(await verifier(apiGatewayEvent('{"test": 2432232315}', headers)))).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    await expectNothingAdmitted();
  });

  test('a secret staged right after the cache was read verifies at once, and forged floods cannot hammer Secrets Manager', async () => {
    const reader = h.countingReader();
    const verifier = h.verifier({ secrets: h.secretCache(reader, MIN_MISS_REFRESH_MS) });
    expect(await h.deliver(answerlineBody(), verifier)).toMatchObject({ statusCode: 202 });
    expect(reader.reads).toBe(1);

    // A second later the provider's new secret is in place, and the provider signs with it at once.
    h.clock.advance(1_000);
    const rotated = newSigningSecret();
    h.markSensitive(rotated);
    await secrets.rotate(h.secret.id, rotated);
    const withRotated = () => h.deliver(answerlineBody(), verifier, { secret: rotated });

    // The read a second ago was for the cache's TTL: it does not delay the read this miss forces.
    expect(await withRotated()).toMatchObject({ statusCode: 202, result: 'accepted' });
    expect(reader.reads).toBe(2);

    // A flood of forged deliveries: no read within the interval of the last forced one, one per interval after it.
    const forgedSecret = newSigningSecret();
    const flood = () => Promise.all(Array.from({ length: 25 }, () => h.deliver(answerlineBody(), verifier, { secret: forgedSecret })));
    for (const answer of await flood()) expect(answer).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(reader.reads).toBe(2);
    h.clock.advance(MIN_MISS_REFRESH_MS);
    for (const answer of await flood()) expect(answer).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(reader.reads).toBe(3);
    for (const answer of await flood()) expect(answer).toMatchObject({ statusCode: 400 });
    expect(reader.reads).toBe(3);

    expect(await h.inboxItems()).toHaveLength(2);
    expect(await h.takeMessages()).toHaveLength(2);
    expect(h.capture.metric(MetricName.BAD_SIGNATURE, PROVIDER)).toBe(75);
  });
});

describe('secret rotation', () => {
  test('each verified delivery counts the staged version it matched', async () => {
    const next = newSigningSecret();
    h.markSensitive(next);
    await secrets.stagePending(h.secret.id, next);
    const verifier = h.verifier();

    expect(await h.deliver(answerlineBody(), verifier)).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await h.deliver(answerlineBody(), verifier, { secret: next })).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await h.deliver(answerlineBody(), verifier, { secret: newSigningSecret() })).toMatchObject({ statusCode: 400, result: 'bad_signature' });

    expect(h.capture.metric(MetricName.MATCHED_CURRENT_SECRET, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.MATCHED_PENDING_SECRET, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.MATCHED_PREVIOUS_SECRET, PROVIDER)).toBe(0);
    // Each delivery line carries the count of the stage that verified it, and no other.
    expect(h.capture.logs('delivery').map((record) => [record.MatchedCurrentSecret, record.MatchedPendingSecret, record.MatchedPreviousSecret])).toEqual([
      [1, undefined, undefined],
      [undefined, 1, undefined],
      [undefined, undefined, undefined],
    ]);
  });

  test('a staged AWSPENDING value that is no signing secret is left out instead of failing every delivery', async () => {
    await secrets.stagePending(h.secret.id, 'a value mistyped by hand, not whsec_ and base64');

    expect(await h.deliver(answerlineBody())).toEqual({ statusCode: 202, result: 'accepted' });
    expect(h.capture.metric(MetricName.SECRET_UNAVAILABLE)).toBe(0);
    expect(h.capture.metric(MetricName.MATCHED_CURRENT_SECRET, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.UNUSABLE_SECRET_VERSION, PROVIDER)).toBe(0);

    // A provider that switched to its new secret now fails: the answer stays bad_signature, the log says why.
    expect(await h.deliver(answerlineBody(), undefined, { secret: newSigningSecret() })).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(h.capture.metric(MetricName.UNUSABLE_SECRET_VERSION, PROVIDER)).toBe(1);
    expect(h.capture.metric(MetricName.BAD_SIGNATURE, PROVIDER)).toBe(1);
    expect(h.capture.logs('delivery').map((record) => record.unusableSecretStages)).toEqual([undefined, 'AWSPENDING']);
  });

  test('a bad signature with every staged value usable names no secret stage', async () => {
    await secrets.stagePending(h.secret.id, newSigningSecret());
    expect(await h.deliver(answerlineBody(), undefined, { secret: newSigningSecret() })).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(h.capture.metric(MetricName.UNUSABLE_SECRET_VERSION, PROVIDER)).toBe(0);
    expect(h.capture.logs('delivery')[0].unusableSecretStages).toBeUndefined();
  });
});

describe('logs carry no secrets and no content', () => {
  test('every outcome logs a reason code and hashes, never the body, the secret or the signature', async () => {
    const verifier = h.verifier();
    const body = answerlineBody();
    await h.deliver(body, verifier);
    await h.deliver(body, verifier);
    await h.deliver(answerlineBody({ id: taskIdOf(body) }), verifier);
    await h.deliver(answerlineBody(), verifier, { secret: newSigningSecret() });
    await h.deliver(answerlineBody(), h.verifier({ queue: h.missingQueue() }));

    expect(h.capture.reasons()).toEqual(['accepted', 'duplicate', 'quarantined', 'bad_signature', 'accepted']);
    const accepted = h.capture.logs('delivery')[0];
    expect(accepted).toMatchObject({ Provider: PROVIDER, status: 202, digest: sha256Hex(body), eventRef: expect.stringMatching(/^sha256:[0-9a-f]{16}$/) });
    expect(JSON.stringify(h.capture.lines)).not.toContain(taskIdOf(body));
    h.expectLogsClean();
    // The guard itself can fail: anything a line does carry is caught.
    expect(() => h.capture.expectNoLineContains(['"reason":"accepted"'])).toThrow();
  });
});

describe("a provider's source allow-list", () => {
  // The fixture's requests come from 203.0.113.7, as API Gateway reports the sender.
  const withSources = (allowedSourceCidrs: string[]) => h.verifier({ providers: [{ ...h.providerConfig(), allowedSourceCidrs }] });

  test('lets a request from an allowed range be verified as any other', async () => {
    const body = answerlineBody();
    expect(answerOf(await withSources(['198.51.100.0/24', '203.0.113.0/24'])(h.signed(body)))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await h.inboxItems()).toHaveLength(1);
  });

  test('answers 403 to a request from elsewhere before verifying it: a forgery from there is refused the same, and counted as neither', async () => {
    const verifier = withSources(['198.51.100.0/24', '2001:db8::/32']);
    const body = answerlineBody();
    const forged = apiGatewayEvent(body, signatureHeaders(body, { secret: newSigningSecret(), timestamp: h.clock.seconds }));

    expect(answerOf(await verifier(h.signed(body)))).toMatchObject({ statusCode: 403, result: 'source_not_allowed' });
    expect(answerOf(await verifier(forged))).toMatchObject({ statusCode: 403, result: 'source_not_allowed' });
    expect(h.capture.metric(MetricName.SOURCE_NOT_ALLOWED, PROVIDER)).toBe(2);
    expect(h.capture.metric(MetricName.AUTHENTICATION_FAILED, PROVIDER)).toBe(0);
    await expectNothingAdmitted();
  });

  test('matches IPv6 senders against IPv6 ranges', async () => {
    const body = answerlineBody();
    const fromV6 = (ip: string) => {
      const event = h.signed(body);
      return { ...event, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, sourceIp: ip } } };
    };
    const verifier = withSources(['2001:db8::/32']);
    expect(answerOf(await verifier(fromV6('2001:db8::17')))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(answerOf(await verifier(fromV6('2001:db9::17')))).toMatchObject({ statusCode: 403 });
  });
});
