import { createHash, createHmac } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { MetricName } from '../../../lib/contract';
import { DynamoDbRejectionStore } from '../../../lambda/shared/stores/rejection-store';
import { RejectionPolicy, RejectionRecorder } from '../../../lambda/verifier/rejections';
import { answerlineBody, answerOf, apiGatewayEvent, InboxHarness, Item, PROVIDER, SecretsFixture, signatureHeaders } from '../../support/inbox-fixture';

/**
 * The rules checked here, stated on their own: a request refused at the authenticity check leaves
 * one record (provider, reason, status, time, a keyed hash of the source address, the header
 * names, body length and digest), never its body, a header value or the address; at most 60 a
 * minute per provider by default, however many verifier instances share the flood, the rest
 * counted; kept 7 days (the TTL attribute `expiresAt`); and the answer is the same with or
 * without the record, even when the record cannot be written.
 */

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'rejections');
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const SOURCE_IP = '203.0.113.7';
const SEVEN_DAYS = 7 * 86_400;

/** A delivery signed with another secret: refused `bad_signature`. */
function forged(body = answerlineBody()) {
  const event = apiGatewayEvent(body, signatureHeaders(body, { secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, timestamp: h.clock.seconds }));
  h.markSensitive(body, event.headers['webhook-signature']!);
  return event;
}

const records = async (): Promise<Item[]> => (await h.rejectionItems()).filter((item) => String(item.sk).startsWith('record#'));

describe('a request refused at the authenticity check', () => {
  test('leaves one record of what and why, never its content, kept 7 days', async () => {
    const body = answerlineBody();
    const event = forged(body);
    const answer = answerOf(await h.verifier()(event));

    expect(answer.statusCode).toBe(400);
    expect(answer.result).toBe('bad_signature');
    const [record, ...others] = await records();
    expect(others).toEqual([]);
    expect(record).toMatchObject({
      provider: PROVIDER,
      reason: 'bad_signature',
      httpStatus: 400,
      receivedAt: h.clock.now(),
      bodyBytes: Buffer.byteLength(body),
      digest: createHash('sha256').update(body).digest('hex'),
      expiresAt: h.clock.seconds + SEVEN_DAYS,
      headerNames: Object.keys(event.headers).sort(),
      headerNamesTruncated: false,
    });
    // Nothing it carried: no body, no header value (but numbers, which a time could equal), no plain address, nor its unkeyed digest.
    const stored = JSON.stringify(record);
    for (const value of [
      body,
      ...Object.values(event.headers).filter((v) => v!.length >= 8 && !/^\d+$/.test(v!)),
      SOURCE_IP,
      createHash('sha256').update(SOURCE_IP).digest('hex'),
    ]) {
      expect(stored).not.toContain(value!);
    }
    expect(record.sourceHash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(await h.inboxItems()).toEqual([]);
    expect(await h.takeMessages()).toEqual([]);
    expect(h.capture.metric(MetricName.REJECTION_RECORDED)).toBe(1);
  });

  test('the source hash is an HMAC under the key kept in the table: the same address, the same hash, across instances', async () => {
    await h.verifier()(forged());
    await h.verifier()(forged());
    const other = forged();
    await h.verifier()({ ...other, requestContext: { ...other.requestContext, http: { ...other.requestContext.http, sourceIp: '198.51.100.9' } } });

    const key = (await h.rejectionItems()).find((item) => item.sk === 'source-hash-key')!.hashKey as Buffer;
    expect(key.length).toBe(32);
    const hashOf = (ip: string) => `hmac-sha256:${createHmac('sha256', key).update(ip).digest('hex')}`;
    expect((await records()).map((record) => record.sourceHash).sort()).toEqual([hashOf(SOURCE_IP), hashOf(SOURCE_IP), hashOf('198.51.100.9')].sort());
  });

  test.each([
    ['stale_timestamp', (body: string) => apiGatewayEvent(body, signatureHeaders(body, { secret: h.secret.value, timestamp: h.clock.seconds - 3600 }))],
    [
      'malformed',
      (body: string) =>
        apiGatewayEvent(body, { ...signatureHeaders(body, { secret: h.secret.value, timestamp: h.clock.seconds }), 'webhook-signature': undefined }),
    ],
  ])('%s is recorded with its reason', async (reason, make) => {
    const body = answerlineBody();
    const event = make(body);
    h.markSensitive(body, event.headers['webhook-signature'] ?? body);
    const answer = answerOf(await h.verifier()(event));

    expect(answer.result).toBe(reason);
    expect((await records()).map((record) => [record.reason, record.httpStatus])).toEqual([[reason, 400]]);
  });

  test('a source outside the allowed ranges is recorded as source_not_allowed', async () => {
    const verifier = h.verifier({ providers: [{ ...h.providerConfig(), allowedSourceCidrs: ['192.0.2.0/24'] }] });
    const answer = answerOf(await verifier(h.signed(answerlineBody())));

    expect(answer).toMatchObject({ statusCode: 403, result: 'source_not_allowed' });
    expect((await records()).map((record) => record.reason)).toEqual(['source_not_allowed']);
  });

  test('a verified delivery with a malformed body is not an authenticity failure: no record', async () => {
    const answer = await h.deliver(JSON.stringify({ task: { status: 'COMPLETED' } }));

    expect(answer.result).toBe('malformed');
    expect(await h.rejectionItems()).toEqual([]);
  });
});

describe('a flood of refused requests', () => {
  test('writes at most 60 records a minute per provider across concurrent instances, counts the rest, and records again the next minute', async () => {
    const instances = [h.verifier(), h.verifier(), h.verifier()];
    const answers = await Promise.all(Array.from({ length: 90 }, (_, i) => instances[i % 3](forged())));

    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(90).fill(400));
    expect(await records()).toHaveLength(60);
    expect(h.capture.metric(MetricName.REJECTION_RECORDED)).toBe(60);
    expect(h.capture.metric(MetricName.REJECTION_SUPPRESSED)).toBe(30);
    const counters = (await h.rejectionItems()).filter((item) => String(item.sk).startsWith('count#'));
    expect(counters).toEqual([expect.objectContaining({ count: 60, expiresAt: expect.any(Number) })]);

    h.clock.advance(60_000);
    await instances[0](forged());
    expect(await records()).toHaveLength(61);
  });

  test('a sample percent keeps only the drawn share', async () => {
    const draws = [0.1, 0.6, 0.2, 0.9];
    const telemetry = h.capture.telemetry(h.clock.now);
    const store = new DynamoDbRejectionStore(h.as('verifier').dynamodb, h.names.inboxTable);
    const recorder = new RejectionRecorder(store, policy({ samplePercent: 50 }), telemetry, h.clock.now, () => draws.shift()!);
    for (let i = 0; i < 4; i++) await h.verifier({ rejections: recorder, telemetry })(forged());

    expect(await records()).toHaveLength(2);
    expect(h.capture.metric(MetricName.REJECTION_SUPPRESSED)).toBe(2);
  });
});

describe('a record that cannot be written', () => {
  test('changes nothing in the answer and is counted, not thrown', async () => {
    const down = new DynamoDBClient({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 });
    const telemetry = h.capture.telemetry(h.clock.now);
    const failing = new RejectionRecorder(new DynamoDbRejectionStore(down, h.names.inboxTable), policy(), telemetry, h.clock.now);
    const event = forged();

    const without = await h.verifier({ rejections: undefined })(event);
    const withFailing = await h.verifier({ rejections: failing, telemetry })(event);

    expect(withFailing).toEqual(without);
    expect(h.capture.metric(MetricName.REJECTION_RECORD_FAILED)).toBe(1);
    expect(await h.rejectionItems()).toEqual([]);
    down.destroy();
  });
});

function policy(overrides: Partial<RejectionPolicy> = {}): RejectionPolicy {
  return { perMinute: 60, samplePercent: 100, retentionSeconds: SEVEN_DAYS, counterTtlSeconds: 3600, budgetMs: 5_000, ...overrides };
}
