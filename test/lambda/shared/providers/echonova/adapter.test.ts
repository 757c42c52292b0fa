import { randomUUID } from 'node:crypto';
import { AdapterKind, MetricName, PollingDefaults } from '../../../../../lib/contract';
import { FakeEchonovaApi } from '#twin/testing';
import { sha256Hex } from '../../../../../lambda/shared/runtime/digest';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { eventIdOf } from '../../../../support/inbox-fixture';
import { echonovaHeaders, textSecret } from '../../../../support/senders';

const EVENT = 'x-webhook-event';
const SIGNATURE = 'x-webhook-signature';
const TIMESTAMP = 'x-webhook-timestamp';

const jobCompleted = (note: string, jobId = `job_${randomUUID()}`) => ({
  jobId,
  status: 'completed',
  createdAt: '2026-09-18T10:00:00.000Z',
  title: note,
  audioUrl: `https://cdn.echonova.ai/audio/${jobId}.mp3`,
  durationSeconds: 42.5,
});

/**
 * The rules these tests state: a composite event id escapes each field with encodeURIComponent
 * and joins them with `:`; a job's final event is keyed by its jobId alone.
 */
const composite = (...fields: string[]) => fields.map(encodeURIComponent).join(':');
const jobKey = (jobId: string) => composite(jobId, 'job');

const spec: PresetSpec = {
  name: 'echonova',
  adapter: AdapterKind.ECHONOVA,
  eventType: 'job.completed',
  newSecret: textSecret,
  payload: jobCompleted,
  sign: (body, secret, timestamp) => echonovaHeaders(body, secret, timestamp, 'job.completed'),
  eventId: (body) => jobKey((JSON.parse(body.toString('utf8')) as { jobId: string }).jobId),
  signatureHeader: SIGNATURE,
  timestampField: `header ${TIMESTAMP}`,
  malformed: [
    ['a missing X-Webhook-Signature', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a truncated X-Webhook-Signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(2) }), SIGNATURE],
    ['an X-Webhook-Signature in base64 instead of hex', (h) => ({ [SIGNATURE]: Buffer.from(h[SIGNATURE], 'hex').toString('base64') }), SIGNATURE],
    ['a missing X-Webhook-Timestamp', () => ({ [TIMESTAMP]: undefined }), TIMESTAMP],
    ['an X-Webhook-Timestamp in milliseconds', (h) => ({ [TIMESTAMP]: `${h[TIMESTAMP]}000` }), TIMESTAMP],
    ['an ISO-8601 X-Webhook-Timestamp', (h) => ({ [TIMESTAMP]: new Date(Number(h[TIMESTAMP]) * 1000).toISOString() }), TIMESTAMP],
    ['a missing X-Webhook-Event', () => ({ [EVENT]: undefined }), EVENT],
    ['an X-Webhook-Event that is no event name', () => ({ [EVENT]: 'job completed; drop table' }), EVENT],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

/** Signs `payload` now as Echonova signs `event`, and posts it. */
async function deliverEvent(event: string, payload: unknown) {
  const body = bench.bytes(payload);
  const headers = echonovaHeaders(body, bench.secret, bench.h.clock.seconds, event);
  bench.h.markSensitive(headers[SIGNATURE]);
  return { ...(await bench.post(body, headers)), body, headers };
}

describe('the stable event id (docs/providers/echonova.md: the body carries no delivery id)', () => {
  const admit = (event: string, payload: unknown) => bench.adapter().adapter.admit({ [EVENT]: event, [TIMESTAMP]: '1789000000' }, bench.bytes(payload));

  test.each([
    ['job.completed', { jobId: 'job_1', status: 'completed' }, 'job_1:job'],
    ['job.failed', { jobId: 'job_1', status: 'failed', error: 'TRANSCODE_FAILED' }, 'job_1:job'],
    ['job.completed', { jobId: 'job:1/ü', status: 'completed', createdAt: '2026-09-18T10:00:00+02:00' }, 'job%3A1%2F%C3%BC:job'],
    ['spending.warning', { apiKeyId: 'key_1', billingCycle: '2026-09' }, 'key_1:spending.warning:2026-09'],
    ['spending.warning', { apiKeyId: 'key_1', cycle: '2026-10' }, 'key_1:spending.warning:2026-10'],
    ['spending.warning', { apiKeyId: 'key:1', billingCycle: '2026:09' }, 'key%3A1:spending.warning:2026%3A09'],
    // No cycle in the body: the body's digest (a retry is the same body, signed anew).
    [
      'spending.warning',
      { apiKeyId: 'key_1', spentUsd: 80 },
      `key_1:spending.warning:sha256:${sha256Hex(JSON.stringify({ apiKeyId: 'key_1', spentUsd: 80 }))}`,
    ],
  ])('%s %j → %s, not repeatable', (event, payload, eventId) => {
    const admission = admit(event, payload);
    expect(admission).toMatchObject({ kind: 'event', eventId });
    expect(admission).not.toMatchObject({ repeatable: true });
  });

  test('spending.exhausted is a level: keyed by apiKeyId, event and cycle, and marked repeatable', () => {
    expect(admit('spending.exhausted', { apiKeyId: 'key_1', billingCycle: '2026-09', spentUsd: 100.2 })).toEqual({
      kind: 'event',
      eventId: 'key_1:spending.exhausted:2026-09',
      repeatable: true,
    });
  });

  test('any other event is keyed by its name and body digest (retries reuse the body byte for byte)', () => {
    const payload = { voiceId: 'voice_1', name: 'Narrator' };
    expect(admit('voice.created', payload)).toEqual({ kind: 'event', eventId: `voice.created:${sha256Hex(bench.bytes(payload))}` });
  });

  test('Echonova documents no test delivery: a body saying "test" is an ordinary event', () => {
    expect(admit('job.completed', { jobId: 'job_1', status: 'completed', test: true })).toMatchObject({ kind: 'event', eventId: 'job_1:job' });
  });

  test.each([
    ['job.completed', { status: 'completed' }, 'jobId'],
    ['job.completed', { jobId: 7 }, 'jobId'],
    ['spending.exhausted', { spentUsd: 100 }, 'apiKeyId'],
    ['job.completed', ['not', 'an', 'object'], 'body'],
    ['job.completed', { jobId: 'j'.repeat(513), status: 'completed' }, 'jobId'],
    ['job.completed', { jobId: 'job_1', status: 'completed', createdAt: 1789000000 }, 'createdAt'],
    ['job.failed', { jobId: 'job_1', status: 'failed', createdAt: '2026-02-30T10:00:00Z' }, 'createdAt'],
    ['spending.warning', { apiKeyId: 'key_1', billingCycle: 'é'.repeat(33) }, 'billingCycle'],
  ])('%s %j is malformed, naming %s', (event, payload, field) => {
    expect(admit(event, payload)).toEqual({ kind: 'malformed', detail: expect.stringContaining(field) });
  });
});

describe('nesting', () => {
  test('a 12 KB job.completed whose transcript nests an array 6,000 deep, signed by Echonova, is answered 400 body_too_deep naming the limit (512 levels): never acknowledged, so never a winner without an effect', async () => {
    const payload = { ...jobCompleted('a deep transcript'), transcript: 'DEEP' };
    const [head, tail] = JSON.stringify(payload).split('"DEEP"');
    const body = Buffer.from(`${head}${'['.repeat(6_000)}${']'.repeat(6_000)}${tail}`, 'utf8');
    expect(body.length).toBeGreaterThan(12_000);
    const answer = await bench.deliver(body);
    expect(answer).toMatchObject({ statusCode: 400, result: 'body_too_deep', detail: expect.stringContaining('512 levels') });
    expect(bench.h.capture.metric(MetricName.BODY_TOO_DEEP, 'echonova')).toBe(1);
    await bench.h.expectNothingAdmitted();
  });
});

describe('repeats through the verifier', () => {
  test('spending.exhausted repeats with other bodies are 200 duplicates, never quarantined; the next cycle is a new row', async () => {
    const apiKeyId = `key_${randomUUID()}`;
    const exhausted = (spentUsd: number, billingCycle = '2026-09') => ({ apiKeyId, billingCycle, limitUsd: 100, spentUsd });

    expect(await deliverEvent('spending.exhausted', exhausted(100.02))).toMatchObject({ statusCode: 202, result: 'accepted' });
    const original = await bench.row(`${apiKeyId}:spending.exhausted:2026-09`);
    for (const spentUsd of [100.07, 100.31]) {
      bench.h.clock.advance(60_000);
      expect(await deliverEvent('spending.exhausted', exhausted(spentUsd))).toMatchObject({ statusCode: 200, result: 'duplicate' });
    }

    expect(await bench.h.inboxItems()).toEqual([original]);
    expect(bench.h.capture.metric(MetricName.QUARANTINED)).toBe(0);
    expect(bench.h.capture.metric(MetricName.DUPLICATE, 'echonova')).toBe(2);
    expect(await deliverEvent('spending.exhausted', exhausted(100.01, '2026-10'))).toMatchObject({ statusCode: 202 });
    expect(await bench.row(`${apiKeyId}:spending.exhausted:2026-10`)).toBeDefined();
  });

  test('a job.completed repeat with another body is quarantined beside the untouched original', async () => {
    const jobId = `job_${randomUUID()}`;
    const first = await deliverEvent('job.completed', jobCompleted('the first result', jobId));
    expect(first).toMatchObject({ statusCode: 202 });
    const original = await bench.row(jobKey(jobId));

    const altered = await deliverEvent('job.completed', jobCompleted('an altered result', jobId));

    expect(altered).toMatchObject({ statusCode: 200, result: 'quarantined' });
    expect(await bench.row(jobKey(jobId))).toEqual(original);
    expect(await bench.row(jobKey(jobId), `quarantine#${sha256Hex(altered.body)}`)).toMatchObject({ digest: sha256Hex(altered.body), count: 1 });
    expect(bench.h.capture.metric(MetricName.QUARANTINED, 'echonova')).toBe(1);
    expect(await bench.h.takeMessages()).toEqual([bench.key(jobKey(jobId))]);
  });

  test('a job finishes once: a second final event of the job with another body is an altered copy, quarantined; a retry is a duplicate', async () => {
    const jobId = `job_${randomUUID()}`;
    const completed = jobCompleted('a completed job', jobId);
    const failed = { jobId, status: 'failed', createdAt: completed.createdAt, error: { code: 'TRANSCODE_FAILED' } };

    expect(await deliverEvent('job.completed', completed)).toMatchObject({ statusCode: 202 });
    expect(await deliverEvent('job.failed', failed)).toMatchObject({ statusCode: 200, result: 'quarantined' });
    bench.h.clock.advance(10_000);
    expect(await deliverEvent('job.completed', completed)).toMatchObject({ statusCode: 200, result: 'duplicate' });

    expect((await bench.h.inboxItems()).filter((item) => item.sk === 'delivery').map(eventIdOf)).toEqual([jobKey(jobId)]);
  });

  test('an unknown event: a retry of the same bytes is a duplicate, other bytes are another event', async () => {
    const payload = { voiceId: `voice_${randomUUID()}`, name: 'Narrator' };

    const first = await deliverEvent('voice.created', payload);
    bench.h.clock.advance(5_000);
    const retry = await deliverEvent('voice.created', payload);
    const other = await deliverEvent('voice.created', { ...payload, name: 'Narrator 2' });

    expect([first, retry, other].map((a) => a.result)).toEqual(['accepted', 'duplicate', 'accepted']);
    expect(await bench.row(`voice.created:${sha256Hex(first.body)}`)).toBeDefined();
    expect(await bench.row(`voice.created:${sha256Hex(other.body)}`)).toBeDefined();
  });

  test('the row keeps the event name and timestamp the processor needs, and never the signature', async () => {
    const payload = jobCompleted('meta check');
    const delivered = await deliverEvent('job.completed', payload);

    const row = await bench.row(jobKey(payload.jobId));
    expect(row!.meta).toEqual({
      [EVENT]: 'job.completed',
      [TIMESTAMP]: delivered.headers[TIMESTAMP],
      'content-type': 'application/json',
      'content-length': String(delivered.body.length),
      'user-agent': expect.any(String),
    });
  });
});

describe('the outcome is the signed job status, never the unsigned X-Webhook-Event header', () => {
  const failedJob = (jobId: string) => ({ jobId, status: 'failed', createdAt: '2026-09-18T10:00:00.000Z', error: { code: 'TRANSCODE_FAILED' } });

  test('a genuine job.failed replayed within the tolerance with the header changed to job.completed: quarantined under the job, and the job stays FAILED', async () => {
    const jobId = `job_${randomUUID()}`;
    const genuine = await deliverEvent('job.failed', failedJob(jobId));
    expect(genuine).toMatchObject({ statusCode: 202, result: 'accepted' });

    bench.h.clock.advance(30_000);
    const forged = await bench.post(genuine.body, { ...genuine.headers, [EVENT]: 'job.completed' });

    expect(forged).toEqual({ statusCode: 200, result: 'quarantined', detail: expect.stringContaining(`header ${EVENT}`) });
    expect(await bench.row(jobKey(jobId), `quarantine#${sha256Hex(genuine.body)}`)).toMatchObject({ digest: sha256Hex(genuine.body), count: 1 });
    expect((await bench.h.inboxItems()).filter((item) => item.sk === 'delivery').map(eventIdOf)).toEqual([jobKey(jobId)]);
    expect(bench.h.capture.metric(MetricName.QUARANTINED, 'echonova')).toBe(1);
    expect(await bench.h.takeMessages()).toEqual([bench.key(jobKey(jobId))]);

    await bench.h.queue.enqueue([bench.key(jobKey(jobId))]);
    expect(await bench.h.drain(bench.h.processor({ providers: [bench.config] }))).toEqual({ received: 1, failed: 0 });
    expect(await bench.h.result(jobId, 'echonova')).toMatchObject({ status: 'FAILED', taskId: jobId });
  });

  test.each([
    ['another event name on a finished job', 'voice.created', { status: 'completed' }],
    ['a spending event name on a finished job', 'spending.exhausted', { status: 'failed', apiKeyId: 'key_1', billingCycle: '2026-09' }],
    ['job.completed on a job that is still processing', 'job.completed', { status: 'processing' }],
    ['job.completed on a body without a status', 'job.completed', { status: undefined }],
    ['job.started on a finished job', 'job.started', { status: 'completed' }],
  ])('%s: 200 quarantined under the job naming the header, no row, nothing enqueued', async (_name, event, fields) => {
    const jobId = `job_${randomUUID()}`;
    const answer = await deliverEvent(event, { ...jobCompleted('relabelled', jobId), ...fields });

    expect(answer).toMatchObject({ statusCode: 200, result: 'quarantined', detail: expect.stringContaining(`header ${EVENT}`) });
    expect(await bench.h.inboxItems()).toEqual([expect.objectContaining({ pk: bench.key(jobKey(jobId)), sk: `quarantine#${sha256Hex(answer.body)}` })]);
    expect(await bench.h.takeMessages()).toEqual([]);
  });
});

test("a job's progress (job.started of a job still processing) is answered not_final: nothing kept, nothing quarantined", async () => {
  const jobId = `job_${randomUUID()}`;
  const answer = await deliverEvent('job.started', { ...jobCompleted('started', jobId), status: 'processing' });

  expect(answer).toMatchObject({ statusCode: 200, result: 'not_final' });
  expect(await bench.h.inboxItems()).toEqual([]);
  expect(bench.h.capture.metric(MetricName.QUARANTINED, 'echonova')).toBe(0);
});

describe('composite ids escape their fields', () => {
  test('an apiKeyId that contains ":spending.warning" and a billing cycle that contains it make two events, two rows', async () => {
    // Joined without escaping, both would be `k:spending.warning:spending.warning:2026-09`.
    const first = await deliverEvent('spending.warning', { apiKeyId: 'k:spending.warning', billingCycle: '2026-09', spentUsd: 80 });
    const second = await deliverEvent('spending.warning', { apiKeyId: 'k', billingCycle: 'spending.warning:2026-09', spentUsd: 80 });

    expect([first.result, second.result]).toEqual(['accepted', 'accepted']);
    expect((await bench.h.inboxItems()).map(eventIdOf).sort()).toEqual(
      [composite('k:spending.warning', 'spending.warning', '2026-09'), composite('k', 'spending.warning', 'spending.warning:2026-09')].sort(),
    );
  });
});

describe('the billing cycle is never the attempt timestamp', () => {
  test('a spending event without a cycle retried across a month boundary is a duplicate (the retry is the same body, signed anew)', async () => {
    const payload = { apiKeyId: `key_${randomUUID()}`, limitUsd: 100, spentUsd: 80.5 };
    bench.h.clock.set(Date.UTC(2026, 8, 30, 23, 59, 58));
    const first = await deliverEvent('spending.warning', payload);
    bench.h.clock.set(Date.UTC(2026, 9, 1, 0, 0, 8));
    const retry = await deliverEvent('spending.warning', payload);

    expect([first.result, retry.result]).toEqual(['accepted', 'duplicate']);
    expect((await bench.h.inboxItems()).map(eventIdOf)).toEqual([composite(payload.apiKeyId, 'spending.warning', 'sha256', sha256Hex(first.body))]);
  });
});

describe('a job recovered by polling', () => {
  test('lands on the key a delivery would; a job whose resource names no createdAt is ordered by the poll time and decided, not dead', async () => {
    const api = new FakeEchonovaApi();
    await api.start();
    try {
      const job = api.addJob({ status: 'completed', createdAt: null, outcome: { result: { transcriptUrl: 'https://files.example/t/1' } } });
      const polling = await bench.h.pollingConfig(api.apiKey, api.jobUrlTemplate, {
        provider: 'echonova',
        horizonSeconds: PollingDefaults.echonova.horizonSeconds,
        recheckSeconds: PollingDefaults.echonova.recheckSeconds,
      });
      await bench.h
        .submissionLedger({ horizonSeconds: { echonova: PollingDefaults.echonova.horizonSeconds } })
        .recordSubmission({ provider: 'echonova', taskId: job.jobId });
      bench.h.clock.advance(PollingDefaults.echonova.horizonSeconds * 1000);

      const polledFrom = Math.floor(Date.now() / 1000);
      expect(await bench.h.reconciler({ ledger: bench.h.ledger({ configs: [bench.config], polling: [polling] }) })()).toMatchObject({ recovered: 1 });
      const row = await bench.row(jobKey(job.jobId));
      expect(row).toMatchObject({ recovered: true, meta: { [EVENT]: 'job.completed', [TIMESTAMP]: expect.stringMatching(/^\d+$/) } });
      const polledAt = Number((row!.meta as Record<string, string>)[TIMESTAMP]);
      expect(polledAt).toBeGreaterThanOrEqual(polledFrom);
      expect(polledAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

      expect(await bench.h.drain(bench.h.processor({ providers: [bench.config] }))).toEqual({ received: 1, failed: 0 });
      expect(await bench.h.result(job.jobId, 'echonova')).toMatchObject({
        status: 'COMPLETED',
        createdAt: `${new Date(polledAt * 1000).toISOString().slice(0, 19)}.000000000Z`,
      });
    } finally {
      await api.stop();
    }
  });
});

describe('rows written under the earlier job ids (<jobId>:job.completed, <jobId>:job.failed)', () => {
  test('the ledger still finds them (no poll), and the processor still reads one whose body names no status by its event header', async () => {
    const api = new FakeEchonovaApi();
    await api.start();
    try {
      const jobId = `job_${randomUUID()}`;
      const body = Buffer.from(JSON.stringify({ jobId, createdAt: '2026-09-18T10:00:00.000Z', transcript: 'stored before' }));
      const legacyId = `${jobId}:job.completed`;
      const now = bench.h.clock.now();
      await bench.h.inbox.insert({
        provider: 'echonova',
        eventId: legacyId,
        body,
        digest: sha256Hex(body),
        receivedAt: now,
        meta: { [EVENT]: 'job.completed' },
        expiresAt: Math.floor(now / 1000) + 86_400,
      });
      const polling = await bench.h.pollingConfig(api.apiKey, api.jobUrlTemplate, { provider: 'echonova', horizonSeconds: 60, recheckSeconds: 60 });
      await bench.h.submissionLedger({ horizonSeconds: { echonova: 60 } }).recordSubmission({ provider: 'echonova', taskId: jobId });
      bench.h.clock.advance(61_000);

      expect(await bench.h.reconciler({ ledger: bench.h.ledger({ configs: [bench.config], polling: [polling] }) })()).toMatchObject({
        delivered: 1,
        recovered: 0,
      });
      expect(api.requestsFor(jobId)).toHaveLength(0);

      await bench.h.queue.enqueue([bench.key(legacyId)]);
      expect(await bench.h.drain(bench.h.processor({ providers: [bench.config] }))).toEqual({ received: 1, failed: 0 });
      expect(await bench.h.result(jobId, 'echonova')).toMatchObject({ status: 'COMPLETED', eventKey: bench.key(legacyId) });
    } finally {
      await api.stop();
    }
  });
});
