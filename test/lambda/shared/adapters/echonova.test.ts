import { randomUUID } from 'node:crypto';
import { AdapterKind, MetricName } from '../../../../lib/contract';
import { sha256Hex } from '../../../../lambda/shared/digest';
import { PresetBench, presetContract, PresetSpec } from '../../../support/preset-contract';
import { echonovaHeaders, textSecret } from '../../../support/senders';

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

const spec: PresetSpec = {
  name: 'echonova',
  adapter: AdapterKind.ECHONOVA,
  newSecret: textSecret,
  payload: jobCompleted,
  sign: (body, secret, timestamp) => echonovaHeaders(body, secret, timestamp, 'job.completed'),
  eventId: (body) => `${(JSON.parse(body.toString('utf8')) as { jobId: string }).jobId}:job.completed`,
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

describe('the stable event id (seed 001: the body carries no delivery id)', () => {
  const admit = (event: string, payload: unknown) => bench.adapter().adapter.admit({ [EVENT]: event, [TIMESTAMP]: '1789000000' }, bench.bytes(payload));

  test.each([
    ['job.completed', { jobId: 'job_1' }, 'job_1:job.completed'],
    ['job.failed', { jobId: 'job_1', error: 'TRANSCODE_FAILED' }, 'job_1:job.failed'],
    ['job.started', { jobId: 'job_1' }, 'job_1:job.started'],
    ['spending.warning', { apiKeyId: 'key_1', billingCycle: '2026-09' }, 'key_1:spending.warning:2026-09'],
    ['spending.warning', { apiKeyId: 'key_1', cycle: '2026-10' }, 'key_1:spending.warning:2026-10'],
    // No cycle in the body: the UTC month of the signed timestamp (1789000000 = 2026-09-09).
    ['spending.warning', { apiKeyId: 'key_1', spentUsd: 80 }, 'key_1:spending.warning:2026-09'],
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
    expect(admit('job.completed', { jobId: 'job_1', test: true })).toMatchObject({ kind: 'event', eventId: 'job_1:job.completed' });
  });

  test.each([
    ['job.completed', { status: 'completed' }, 'jobId'],
    ['job.completed', { jobId: 7 }, 'jobId'],
    ['spending.exhausted', { spentUsd: 100 }, 'apiKeyId'],
    ['job.completed', ['not', 'an', 'object'], 'body'],
  ])('%s %j is malformed, naming %s', (event, payload, field) => {
    expect(admit(event, payload)).toEqual({ kind: 'malformed', detail: expect.stringContaining(field) });
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
    const original = await bench.row(`${jobId}:job.completed`);

    const altered = await deliverEvent('job.completed', jobCompleted('an altered result', jobId));

    expect(altered).toMatchObject({ statusCode: 200, result: 'quarantined' });
    expect(await bench.row(`${jobId}:job.completed`)).toEqual(original);
    expect(await bench.row(`${jobId}:job.completed`, `quarantine#${sha256Hex(altered.body)}`)).toMatchObject({ digest: sha256Hex(altered.body), count: 1 });
    expect(bench.h.capture.metric(MetricName.QUARANTINED, 'echonova')).toBe(1);
    expect(await bench.h.takeMessages()).toEqual([bench.key(`${jobId}:job.completed`)]);
  });

  test('job.completed and job.failed of one job are two events; a retry of either is a duplicate', async () => {
    const jobId = `job_${randomUUID()}`;
    const completed = jobCompleted('a completed job', jobId);
    const failed = { jobId, status: 'failed', error: { code: 'TRANSCODE_FAILED' } };

    expect(await deliverEvent('job.completed', completed)).toMatchObject({ statusCode: 202 });
    expect(await deliverEvent('job.failed', failed)).toMatchObject({ statusCode: 202 });
    bench.h.clock.advance(10_000);
    expect(await deliverEvent('job.completed', completed)).toMatchObject({ statusCode: 200, result: 'duplicate' });
    expect(await deliverEvent('job.failed', failed)).toMatchObject({ statusCode: 200, result: 'duplicate' });

    expect((await bench.h.inboxItems()).map((item) => item.eventId).sort()).toEqual([`${jobId}:job.completed`, `${jobId}:job.failed`]);
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

    const row = await bench.row(`${payload.jobId}:job.completed`);
    expect(row!.meta).toEqual({
      [EVENT]: 'job.completed',
      [TIMESTAMP]: delivered.headers[TIMESTAMP],
      'content-type': 'application/json',
      'content-length': String(delivered.body.length),
      'user-agent': expect.any(String),
    });
  });
});
