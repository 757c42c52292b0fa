import { randomUUID } from 'node:crypto';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { answerlineBody, newSigningSecret, taskIdOf } from '../../../../support/inbox-fixture';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { STANDARD_WEBHOOKS_VECTOR as VECTOR, standardWebhooksHeaders } from '../../../../support/senders';

const spec: PresetSpec = {
  name: 'answerline',
  adapter: AdapterKind.ANSWERLINE,
  eventType: 'COMPLETED',
  newSecret: newSigningSecret,
  payload: (note) => JSON.parse(answerlineBody({ response: { result: { answer: note, confidence: 0.93 } } })),
  // Answerline signs with the Standard Webhooks scheme (docs/providers/answerline.md); a retry keeps its Webhook-Id.
  sign: (body, secret, timestamp, retryOf) => standardWebhooksHeaders(body, secret, timestamp, retryOf?.['webhook-id']),
  eventId: (body) => taskIdOf(body.toString('utf8')),
  signatureHeader: 'webhook-signature',
  timestampField: 'header webhook-timestamp',
  malformed: [
    ['a missing webhook-id', () => ({ 'webhook-id': undefined }), 'webhook-id'],
    ['a missing webhook-timestamp', () => ({ 'webhook-timestamp': undefined }), 'webhook-timestamp'],
    ['a fractional webhook-timestamp', (h) => ({ 'webhook-timestamp': `${h['webhook-timestamp']}.25` }), 'webhook-timestamp'],
    ['a missing webhook-signature', () => ({ 'webhook-signature': undefined }), 'webhook-signature'],
    ['a webhook-signature of garbage', () => ({ 'webhook-signature': 'v1,%%%not-base64%%%' }), 'webhook-signature'],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

describe('the stable event id is task.id from the signed body, not webhook-id', () => {
  test('a redelivery under a new webhook-id is a duplicate; another task under a reused webhook-id is a row of its own', async () => {
    const body = Buffer.from(answerlineBody());
    const first = await bench.deliver(body);
    const redelivered = await bench.deliver(body);
    const otherTask = Buffer.from(answerlineBody());
    const reusedId = await bench.deliver(otherTask, { retryOf: first.headers });

    expect([first, redelivered, reusedId].map((answer) => answer.result)).toEqual(['accepted', 'duplicate', 'accepted']);
    expect(redelivered.headers['webhook-id']).not.toBe(first.headers['webhook-id']);
    expect((await bench.h.inboxItems()).map((item) => item.pk).sort()).toEqual(
      [bench.key(taskIdOf(body.toString())), bench.key(taskIdOf(otherTask.toString()))].sort(),
    );
    // The row keeps the webhook-id of the delivery that was first, for the delivery log.
    expect((await bench.row(taskIdOf(body.toString())))!.meta).toMatchObject({ 'webhook-id': first.headers['webhook-id'] });
  });

  test.each([
    ['no task', { response: { result: 'orphan' } }, 'task.id'],
    ['a numeric task.id', { task: { id: 7, status: 'COMPLETED' } }, 'task.id'],
    ['an empty task.id', { task: { id: '', status: 'COMPLETED' } }, 'task.id'],
  ])('a verified body with %s is answered 400 naming the field; nothing is stored', async (_name, payload, field) => {
    expect(await bench.deliver(bench.bytes(payload))).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringContaining(field) });
    await bench.h.expectNothingAdmitted();
  });
});

describe('nesting', () => {
  test('a COMPLETED task whose response nests an array 6,000 deep, signed by Answerline, is answered 400 body_too_deep naming the limit (512 levels), never 500 for the whole retry schedule', async () => {
    const [head, tail] = answerlineBody({ response: { result: 'DEEP' } }).split('"DEEP"');
    const body = Buffer.from(`${head}${'['.repeat(6_000)}${']'.repeat(6_000)}${tail}`, 'utf8');
    expect(body.length).toBeLessThan(13_000);
    const verifier = bench.verifier();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await bench.deliver(body, { verifier })).toEqual({
        statusCode: 400,
        result: 'body_too_deep',
        detail: expect.stringContaining('512 levels'),
        headers: expect.any(Object),
      });
    }
    expect(bench.h.capture.metric(MetricName.BODY_TOO_DEEP, 'answerline')).toBe(3);
    await bench.h.expectNothingAdmitted();
  });
});

describe('test deliveries', () => {
  test('"test": true from the dashboard is verified, answered 200, and stores and enqueues nothing', async () => {
    const sample = bench.bytes({ test: true, task: { id: 'tsk_dashboard_sample', status: 'COMPLETED' }, response: { result: { answer: 'sample' } } });

    expect(await bench.deliver(sample)).toMatchObject({ statusCode: 200, result: 'test' });
    await bench.h.expectNothingAdmitted();
    expect(bench.h.capture.metric(MetricName.TEST_DELIVERY, 'answerline')).toBe(1);
  });

  test('a forged test delivery is still a bad signature, not a test', async () => {
    const sample = bench.bytes({ test: true, task: { id: 'tsk_dashboard_sample' } });
    expect(await bench.deliver(sample, { secret: newSigningSecret() })).toMatchObject({ statusCode: 400, result: 'bad_signature' });
  });

  test.each([
    ['"test": false', false],
    ['"test": "true" (a string)', 'true'],
    ['"test": 1', 1],
  ])('%s is an ordinary delivery', (_name, value) => {
    const body = bench.bytes({ ...JSON.parse(answerlineBody({ id: 'tsk_1', idempotencyKey: 'job-1' })), test: value });
    expect(bench.adapter().adapter.admit({}, body)).toEqual({ kind: 'event', eventId: 'tsk_1', jobRef: 'job-1' });
  });
});

describe('the job reference: task.idempotencyKey as it came, kept on the row for submissions known only by their key', () => {
  test.each([
    ['a key', 'job-42-r1', 'job-42-r1'],
    ['a null key', null, undefined],
    ['a key of 512 bytes', 'é'.repeat(256), 'é'.repeat(256)],
    // Admitted (its job is decided under a hashed results key), but too long for an index key.
    ['a key of 514 bytes: no job reference', 'é'.repeat(257), undefined],
  ])('%s', async (_name, key, jobRef) => {
    const body = bench.bytes(JSON.parse(answerlineBody({ id: 'tsk_ref', idempotencyKey: key })));
    const admission = bench.adapter().adapter.admit({}, body);
    expect(admission).toEqual({ kind: 'event', eventId: 'tsk_ref', ...(jobRef !== undefined ? { jobRef } : {}) });
  });

  test('the verifier stores it as <provider>#<key> on the row (the jobRef index)', async () => {
    const body = Buffer.from(answerlineBody({ id: 'tsk_with_ref', idempotencyKey: 'job-7-r2' }));
    expect(await bench.deliver(body)).toMatchObject({ result: 'accepted' });
    expect(await bench.row('tsk_with_ref')).toMatchObject({ jobRef: 'answerline#job-7-r2' });
  });
});

test('the official Standard Webhooks vector verifies under the Answerline scheme (same signature, other body rules)', () => {
  const { adapter, keys } = bench.adapter(VECTOR.secret);
  const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature };

  expect(adapter.verify(headers, Buffer.from(VECTOR.payload), keys, VECTOR.timestamp)).toMatchObject({ ok: true, key: keys[0] });
  // Its body has no task: authentic, but no Answerline delivery.
  expect(adapter.admit(headers, Buffer.from(VECTOR.payload))).toEqual({ kind: 'malformed', detail: expect.stringContaining('task.id') });
});

describe('task.createdAt: a strict ISO-8601 instant, kept to its full precision', () => {
  const observe = (createdAt: unknown) =>
    bench.adapter().adapter.observe(bench.bytes(JSON.parse(answerlineBody({ id: 'tsk_when', idempotencyKey: 'job-when', createdAt }))), {});

  test.each([
    ['2026-09-18T10:00:00Z', '2026-09-18T10:00:00.000000000Z'],
    ['2026-09-18T10:00:00.1Z', '2026-09-18T10:00:00.100000000Z'],
    ['2026-09-18T10:00:00.123456789Z', '2026-09-18T10:00:00.123456789Z'],
    ['2026-09-18T12:30:00.000001+02:30', '2026-09-18T10:00:00.000001000Z'],
    ['2026-09-18T00:15:00-01:00', '2026-09-18T01:15:00.000000000Z'],
    ['2024-02-29T23:59:59.999999999-00:00', '2024-02-29T23:59:59.999999999Z'],
    ['2026-12-31T23:00:00-01:00', '2027-01-01T00:00:00.000000000Z'],
  ])('%s is normalized to %s (fixed width: text order is time order)', (createdAt, normalized) => {
    expect(observe(createdAt)).toMatchObject({ createdAt: normalized });
  });

  test.each([
    ['epoch seconds as a number', 1789000000],
    ['epoch seconds as text', '1789000000'],
    ['an impossible date (Feb 30)', '2026-02-30T10:00:00Z'],
    ['Feb 29 of a common year', '2026-02-29T10:00:00Z'],
    ['a time without a zone', '2026-09-18T10:00:00'],
    ['a date without a time', '2026-09-18'],
    ['hour 24', '2026-09-18T24:00:00Z'],
    ['a leap second', '2026-06-30T23:59:60Z'],
    ['ten fraction digits', '2026-09-18T10:00:00.1234567891Z'],
    ['an offset without its colon', '2026-09-18T10:00:00+0200'],
    ['an offset of 24 hours', '2026-09-18T10:00:00+24:00'],
    ['a space for the T', '2026-09-18 10:00:00Z'],
    ['an RFC 2822 date', 'Fri, 18 Sep 2026 10:00:00 GMT'],
    ['a five-digit year', '+12026-09-18T10:00:00Z'],
  ])('%s is refused, naming task.createdAt', (_name, createdAt) => {
    expect(() => observe(createdAt)).toThrow(/task\.createdAt/);
  });

  test('two tasks of one job created within one millisecond: the one created later wins, whatever their ids', async () => {
    const earlier = answerlineBody({ id: 'tsk_z_created_first', idempotencyKey: 'job-same-ms', createdAt: '2026-09-18T10:00:00.000100Z' });
    const later = answerlineBody({ id: 'tsk_a_created_second', idempotencyKey: 'job-same-ms-r1', createdAt: '2026-09-18T10:00:00.000900Z' });
    for (const body of [later, earlier]) expect(await bench.deliver(body)).toMatchObject({ statusCode: 202 });

    expect(await bench.h.drain(bench.h.processor({ providers: [bench.config] }))).toEqual({ received: 2, failed: 0 });
    expect(await bench.h.result('job-same-ms', 'answerline')).toMatchObject({ taskId: 'tsk_a_created_second', createdAt: '2026-09-18T10:00:00.000900000Z' });
  });
});

describe('the edge refuses what processing could not read (nothing is acknowledged that cannot be processed)', () => {
  const task = (fields: Record<string, unknown>) => ({
    task: { id: `tsk_${randomUUID()}`, status: 'COMPLETED', idempotencyKey: `job-${randomUUID()}`, createdAt: '2026-09-18T10:00:00Z', ...fields },
  });

  test.each([
    ['no task.status', task({ status: undefined }), 'task.status'],
    ['a numeric task.status', task({ status: 3 }), 'task.status'],
    ['a final task without task.createdAt', task({ createdAt: undefined }), 'task.createdAt'],
    ['a final task whose task.createdAt is no date', task({ createdAt: 'not a date' }), 'task.createdAt'],
    ['a final task whose task.createdAt is epoch seconds', task({ createdAt: 1789000000 }), 'task.createdAt'],
    ['a FAILED task created on Feb 30', task({ status: 'FAILED', createdAt: '2026-02-30T10:00:00Z' }), 'task.createdAt'],
    ['a numeric task.idempotencyKey', task({ idempotencyKey: 42 }), 'task.idempotencyKey'],
    ['an empty task.idempotencyKey', task({ idempotencyKey: '' }), 'task.idempotencyKey'],
    ['a task.idempotencyKey that is only a resubmission suffix', task({ idempotencyKey: '-r1' }), 'task.idempotencyKey'],
    ['a task.idempotencyKey over 4,096 bytes (2,049 two-byte characters)', task({ idempotencyKey: 'é'.repeat(2049) }), 'task.idempotencyKey'],
    ['a task.id over 512 bytes (171 three-byte characters)', task({ id: '東'.repeat(171) }), 'task.id'],
  ])('%s: 400 malformed naming the field, nothing stored or enqueued', async (_name, payload, field) => {
    expect(await bench.deliver(bench.bytes(payload))).toMatchObject({
      statusCode: 400,
      result: 'malformed',
      detail: expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')} `)),
    });
    await bench.h.expectNothingAdmitted();
  });
});

describe('a delivery of a task that is not final is acknowledged and never stored', () => {
  test('PROCESSING then COMPLETED under one task.id: 200 not_final (counted), then the final result is accepted, not quarantined', async () => {
    const id = `tsk_${randomUUID()}`;
    const running = bench.bytes({
      task: { id, status: 'PROCESSING', idempotencyKey: 'job-running', createdAt: '2026-09-18T10:00:00Z' },
      credits: { charged: 0 },
    });

    expect(await bench.deliver(running)).toEqual({ statusCode: 200, result: 'not_final', headers: expect.any(Object) });
    await bench.h.expectNothingAdmitted();
    expect(bench.h.capture.metric(MetricName.NOT_FINAL, 'answerline')).toBe(1);

    const done = Buffer.from(answerlineBody({ id, idempotencyKey: 'job-running' }));
    expect(await bench.deliver(done)).toMatchObject({ statusCode: 202, result: 'accepted' });
    expect(bench.h.capture.metric(MetricName.QUARANTINED)).toBe(0);
    await bench.expectStored(done, {});
  });
});

describe('job keys: the idempotency key without a resubmission suffix; a keyless task in a namespace no key can produce', () => {
  const jobKeyOf = (idempotencyKey: string | null, id = 'tsk_1') =>
    bench.adapter().adapter.observe(bench.bytes(JSON.parse(answerlineBody({ id, idempotencyKey }))), {})?.jobKey;

  test.each([
    ['job-42', 'job-42'],
    ['job-42-r1', 'job-42'],
    ['job-42-r999', 'job-42'],
    // Not a resubmission suffix: kept whole.
    ['report-r2024', 'report-r2024'],
    ['job-42-r1000', 'job-42-r1000'],
    ['job-42-r0', 'job-42-r0'],
    ['job-42-r01', 'job-42-r01'],
    ['job-42-r', 'job-42-r'],
    // Only the last suffix goes.
    ['job-r1-r2', 'job-r1'],
    // A key that starts with `~` is escaped by one more, so it never meets a keyless task's job.
    ['~task:tsk_1', '~~task:tsk_1'],
    ['~~x-r3', '~~~x'],
  ])('%s → %s', (key, jobKey) => {
    expect(jobKeyOf(key)).toBe(jobKey);
  });

  test('a keyless task is the job ~task:<task id>', () => {
    expect(jobKeyOf(null, 'tsk_solo')).toBe('~task:tsk_solo');
  });

  test('a keyless task and another task whose idempotency key is the first task id are two jobs with two results', async () => {
    const keyless = answerlineBody({ id: `tsk_${randomUUID()}`, idempotencyKey: null });
    const keyed = answerlineBody({ idempotencyKey: taskIdOf(keyless), createdAt: '2026-09-18T09:00:00Z' });
    for (const body of [keyless, keyed]) expect(await bench.deliver(body)).toMatchObject({ statusCode: 202 });

    expect(await bench.h.drain(bench.h.processor({ providers: [bench.config] }))).toEqual({ received: 2, failed: 0 });
    expect(await bench.h.result(`~task:${taskIdOf(keyless)}`, 'answerline')).toMatchObject({ taskId: taskIdOf(keyless) });
    expect(await bench.h.result(taskIdOf(keyless), 'answerline')).toMatchObject({ taskId: taskIdOf(keyed) });
  });
});
