/**
 * The sanitized delivery record, read back from what the verifier and the processor really write
 * (their log lines and EMF documents) while they run against the emulators.
 *
 * The rules, stated here on their own:
 * - one verifier line (`message: "delivery"`) per request, one processor line (`processed`) per
 *   processed row, both carrying `eventRef`: `sha256:` and the first 16 hex digits of the SHA-256
 *   of `<provider>#<eventId>`;
 * - a resource is named by `resourceRef` (the same over `resource:<provider>#<resourceId>`) and a
 *   tenant by `tenantRef` (over `tenant:<value>`), never by its plain id;
 * - the queue delay is the time from receipt (and from the provider's signed timestamp) to the
 *   start of the row's first processing attempt, logged and emitted in milliseconds;
 * - no body byte, header value, signature or secret appears in any line.
 */
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AdapterKind, Env } from '../../lib/contract';
import { telemetryFromEnv } from '../../lambda/shared/runtime/telemetry';
import { DynamoDbResultsStore } from '../../lambda/shared/stores/results-store';
import { answerlineBody, INBOX_NAME, InboxHarness, LogRecord, PROVIDER, SecretsFixture, storeUncheckedRow, taskIdOf } from '../support/inbox-fixture';

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'record');
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const reference = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16)}`;
const eventRefOf = (taskId: string) => reference(`${PROVIDER}#${taskId}`);
const iso = (ms: number) => new Date(ms).toISOString();

/** The EMF values of one metric the lines carry, in order, with their unit. */
function emitted(name: string, provider?: string): { values: number[]; units: string[] } {
  const values: number[] = [];
  const units: string[] = [];
  for (const line of h.capture.lines) {
    const document = JSON.parse(line) as Record<string, unknown>;
    const directive = (document._aws as { CloudWatchMetrics: { Metrics: { Name: string; Unit: string }[] }[] } | undefined)?.CloudWatchMetrics[0];
    const metric = directive?.Metrics.find((entry) => entry.Name === name);
    if (!metric || (provider !== undefined && document.Provider !== provider)) continue;
    values.push(...([] as number[]).concat(document[name] as number | number[]));
    units.push(metric.Unit);
  }
  return { values, units };
}

describe("the verifier's line", () => {
  test('of a new delivery, then its duplicate: provider, type, hashed ids, times, signature and dedupe results, status', async () => {
    const body = answerlineBody();
    const taskId = taskIdOf(body);
    const signedAtSeconds = h.clock.seconds - 7;
    const receivedAt = h.clock.now();
    expect(await h.deliver(body, undefined, { timestamp: signedAtSeconds })).toMatchObject({ statusCode: 202 });
    expect(await h.deliver(body, undefined, { timestamp: signedAtSeconds })).toMatchObject({ statusCode: 200, result: 'duplicate' });

    const [first, second] = h.capture.logs('delivery');
    const common = {
      Provider: PROVIDER,
      eventType: 'COMPLETED',
      eventRef: eventRefOf(taskId),
      resourceRef: reference(`resource:${PROVIDER}#${taskId}`),
      receivedAt: iso(receivedAt),
      eventTimestamp: iso(signedAtSeconds * 1000),
      signatureResult: 'valid',
    };
    expect(first).toMatchObject({ ...common, dedupeResult: 'new', status: 202, reason: 'accepted' });
    expect(second).toMatchObject({ ...common, dedupeResult: 'duplicate', status: 200, reason: 'duplicate' });
    // No tenant path configured: no tenant reference at all.
    expect(first).not.toHaveProperty('tenantRef');
  });

  test('of an altered copy: dedupe result conflict', async () => {
    const original = answerlineBody({ id: 'tsk_conflict_record' });
    const altered = answerlineBody({ id: 'tsk_conflict_record' });
    await h.deliver(original);
    await h.deliver(altered);
    expect(h.capture.logs('delivery').map((line) => [line.dedupeResult, line.status])).toEqual([
      ['new', 202],
      ['conflict', 200],
    ]);
  });

  test('of rejected deliveries: the signature result, nothing stored, and nothing read from the unverified body', async () => {
    const body = answerlineBody();
    await h.deliver(body, undefined, { secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` });
    await h.deliver(body, undefined, { timestamp: h.clock.seconds - 3600 });
    const event = h.signed(body);
    await h.verifier()({ ...event, headers: { ...event.headers, 'webhook-signature': 'v1,garbled' } });

    const lines = h.capture.logs('delivery');
    expect(lines.map((line) => [line.signatureResult, line.dedupeResult, line.status])).toEqual([
      ['bad_signature', 'not_stored', 400],
      ['stale_timestamp', 'not_stored', 400],
      ['malformed', 'not_stored', 400],
    ]);
    for (const line of lines) {
      expect(line.receivedAt).toBe(iso(h.clock.now()));
      for (const field of ['eventRef', 'eventType', 'resourceRef', 'eventTimestamp', 'tenantRef']) expect(line).not.toHaveProperty(field);
    }
    await h.expectNothingAdmitted();
  });
});

/**
 * What CloudWatch Logs extracts from one log event under the embedded metric format, the rules
 * written out here: the event is one JSON object whose `_aws` member holds a numeric `Timestamp`
 * (epoch ms) and `CloudWatchMetrics`, a list of directives, each a `Namespace` (text), `Dimensions`
 * (a list of dimension sets, each a list of member names) and `Metrics` (each a `Name`, and a
 * `Unit` or none). Every dimension a set names is a root member holding text; every metric is a
 * root member holding a number or a list of at most 100 numbers. Any other member is ignored, so
 * a log line may be the document. Each metric yields one datapoint per value and dimension set.
 * A line without `_aws` yields none; a document that breaks a rule fails the test.
 */
function extractedByCloudWatch(line: string): { namespace: string; name: string; unit?: string; dimensions: Record<string, string>; value: number }[] {
  const document = JSON.parse(line) as Record<string, unknown>;
  const metadata = document._aws as { Timestamp?: unknown; CloudWatchMetrics?: unknown } | undefined;
  if (metadata === undefined) return [];
  expect(typeof metadata.Timestamp).toBe('number');
  expect(Array.isArray(metadata.CloudWatchMetrics)).toBe(true);
  return (metadata.CloudWatchMetrics as { Namespace: unknown; Dimensions: unknown; Metrics: { Name: unknown; Unit?: unknown }[] }[]).flatMap((directive) => {
    expect(typeof directive.Namespace).toBe('string');
    const sets = directive.Dimensions as string[][];
    for (const set of sets) for (const dimension of set) expect(typeof document[dimension]).toBe('string');
    return directive.Metrics.flatMap(({ Name, Unit }) => {
      const member = document[Name as string];
      const values = Array.isArray(member) ? (member as unknown[]) : [member];
      expect(values.length).toBeLessThanOrEqual(100);
      for (const value of values) expect(typeof value).toBe('number');
      return sets.flatMap((set) =>
        values.map((value) => ({
          namespace: directive.Namespace as string,
          name: Name as string,
          ...(Unit === undefined ? {} : { unit: Unit as string }),
          dimensions: Object.fromEntries(set.map((dimension) => [dimension, document[dimension] as string])),
          value: value as number,
        })),
      );
    });
  });
}

describe("the verifier's line is its request's metric document", () => {
  const inbox = { Inbox: INBOX_NAME };
  const provider = { Inbox: INBOX_NAME, Provider: PROVIDER };
  // Per inbox by default; per provider too only when the inbox asks (each copy a custom metric billed by the month).
  const counted = (name: string) => [{ namespace: 'WebhookInbox', name, unit: 'Count', dimensions: inbox, value: 1 }];
  const countedPerProvider = (name: string) => [...counted(name), { namespace: 'WebhookInbox', name, unit: 'Count', dimensions: provider, value: 1 }];

  test("an accepted delivery: one line, the whole record, and the request's counts in it, extracted per inbox", async () => {
    const body = answerlineBody();
    const taskId = taskIdOf(body);
    const signedAtSeconds = h.clock.seconds - 3;
    expect(await h.deliver(body, undefined, { timestamp: signedAtSeconds })).toMatchObject({ statusCode: 202 });

    // Nothing else is written for the request.
    expect(h.capture.lines).toHaveLength(1);
    const [line] = h.capture.lines;
    expect(extractedByCloudWatch(line)).toEqual(expect.arrayContaining([...counted('Accepted'), ...counted('MatchedCurrentSecret')]));
    expect(extractedByCloudWatch(line)).toHaveLength(2);

    const record = JSON.parse(line) as Record<string, unknown>;
    expect(record).toMatchObject({
      level: 'INFO',
      message: 'delivery',
      Inbox: INBOX_NAME,
      Provider: PROVIDER,
      eventType: 'COMPLETED',
      eventRef: eventRefOf(taskId),
      resourceRef: reference(`resource:${PROVIDER}#${taskId}`),
      receivedAt: iso(h.clock.now()),
      eventTimestamp: iso(signedAtSeconds * 1000),
      signatureResult: 'valid',
      dedupeResult: 'new',
      status: 202,
      // The line's time is the metrics' timestamp.
      _aws: expect.objectContaining({ Timestamp: h.clock.now() }),
    });
  });

  test('with metrics per provider, each count is extracted per inbox and per inbox and provider', async () => {
    const telemetry = telemetryFromEnv({ [Env.INBOX_NAME]: INBOX_NAME, [Env.METRICS_PER_PROVIDER]: 'true' }, h.capture.write, h.clock.now);
    expect(await h.deliver(answerlineBody(), h.verifier({ telemetry }))).toMatchObject({ statusCode: 202 });
    expect(h.capture.lines).toHaveLength(1);
    expect(extractedByCloudWatch(h.capture.lines[0])).toEqual(
      expect.arrayContaining([...countedPerProvider('Accepted'), ...countedPerProvider('MatchedCurrentSecret')]),
    );
    expect(extractedByCloudWatch(h.capture.lines[0])).toHaveLength(4);
  });

  test("a refusal's line carries the refusal's counts", async () => {
    await h.deliver(answerlineBody(), undefined, { secret: `whsec_${Buffer.alloc(24, 9).toString('base64')}` });
    expect(h.capture.lines).toHaveLength(1);
    expect(extractedByCloudWatch(h.capture.lines[0])).toEqual(expect.arrayContaining([...counted('BadSignature'), ...counted('AuthenticationFailed')]));
    expect(JSON.parse(h.capture.lines[0])).toMatchObject({ message: 'delivery', signatureResult: 'bad_signature', status: 400, Provider: PROVIDER });
  });

  test('a path that serves no provider counts nothing: its line is a plain log line, with its time', async () => {
    await h.verifier()(h.signed(answerlineBody(), {}, {}, { path: '/hooks/someone-else' }));
    expect(h.capture.lines).toHaveLength(1);
    expect(extractedByCloudWatch(h.capture.lines[0])).toEqual([]);
    const record = JSON.parse(h.capture.lines[0]) as Record<string, unknown>;
    expect(record).toMatchObject({ level: 'INFO', message: 'delivery', Inbox: INBOX_NAME, status: 404, time: iso(h.clock.now()) });
    expect(record).not.toHaveProperty('Provider');
  });
});

describe('the tenant reference', () => {
  const tenantBody = (tenant: unknown) => JSON.stringify({ ...JSON.parse(answerlineBody()), account: { tenant } });

  test('is the hash of the value at the configured path, the same for every delivery of that tenant', async () => {
    const verifier = h.verifier({ providers: [{ ...h.providerConfig(), tenantJsonPath: 'account.tenant' }] });
    await h.deliver(tenantBody('acme-tenant-0042'), verifier);
    await h.deliver(tenantBody('acme-tenant-0042'), verifier);
    await h.deliver(tenantBody(4711), verifier);
    await h.deliver(answerlineBody(), verifier);
    expect(h.capture.logs('delivery').map((line) => line.tenantRef)).toEqual([
      reference('tenant:acme-tenant-0042'),
      reference('tenant:acme-tenant-0042'),
      reference('tenant:4711'),
      // The path leads nowhere in this body: no reference, and the delivery is accepted as any other.
      undefined,
    ]);
    expect(h.capture.reasons()).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    h.capture.expectNoLineContains(['acme-tenant-0042']);
  });

  test('a path that is not a dotted path is refused at cold start, naming the field', () => {
    expect(() => h.verifier({ providers: [{ ...h.providerConfig(), tenantJsonPath: 'account..tenant' }] })).toThrow(
      /tenantJsonPath "account\.\.tenant" is not a dotted path/,
    );
  });
});

describe("the processor's line and the queue-delay metrics", () => {
  test('name the delays from receipt and from the signed timestamp to the first attempt, with the same eventRef', async () => {
    const body = answerlineBody();
    const taskId = taskIdOf(body);
    const signedAtSeconds = h.clock.seconds - 4;
    const receivedAt = h.clock.now();
    await h.deliver(body, undefined, { timestamp: signedAtSeconds });
    h.clock.advance(1500);
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });

    const [processed] = h.capture.logs('processed');
    expect(processed).toMatchObject({
      Provider: PROVIDER,
      eventRef: eventRefOf(taskId),
      receivedAt: iso(receivedAt),
      eventTimestamp: iso(signedAtSeconds * 1000),
      queueDelayMs: 1500,
      queueDelayFromEventMs: receivedAt + 1500 - signedAtSeconds * 1000,
      reconcileResult: 'winner',
      // No bus and no processing function here: the row has no effect to send.
      outboxResult: 'none',
      attempts: 1,
    });
    expect(emitted('QueueDelay', PROVIDER)).toEqual({ values: [1500], units: ['Milliseconds'] });
    expect(emitted('QueueDelayFromEvent', PROVIDER)).toEqual({ values: [receivedAt + 1500 - signedAtSeconds * 1000], units: ['Milliseconds'] });
  });

  test('a retried row logs each attempt, but only its first attempt is a queue-delay value', async () => {
    const body = answerlineBody();
    await h.deliver(body);
    // The results table unreachable for the first attempt: a real store, failing as DynamoDB fails.
    const unreachable = new DynamoDbResultsStore(new DynamoDBClient({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 }), h.names.resultsTable);
    await h.drain(h.processor({ results: unreachable }));
    h.clock.advance(60_000);
    await h.queue.enqueue([`${PROVIDER}#${taskIdOf(body)}`]);
    await h.drain(h.processor());

    const lines = h.capture.logs().filter((line) => line.reconcileResult !== undefined);
    expect(lines.map((line) => [line.message, line.reconcileResult, line.queueDelayMs])).toEqual([
      ['processing failed', 'failed', 0],
      ['processed', 'winner', 60_000],
    ]);
    expect(emitted('QueueDelay', PROVIDER).values).toEqual([0]);
  });

  test('a row written before the signed time was kept is processed, and names only its delay from receipt', async () => {
    const key = await storeUncheckedRow(h, answerlineBody());
    h.clock.advance(250);
    await h.drain(h.processor());
    const [processed] = h.capture.logs('processed');
    expect(processed).toMatchObject({ eventRef: reference(key), queueDelayMs: 250, reconcileResult: 'winner' });
    expect(processed).not.toHaveProperty('eventTimestamp');
    expect(processed).not.toHaveProperty('queueDelayFromEventMs');
    expect(emitted('QueueDelay', PROVIDER).values).toEqual([250]);
    expect(emitted('QueueDelayFromEvent').values).toEqual([]);
  });
});

test('no body byte, header value, signature or secret of a delivery appears in any line of either handler', async () => {
  const canary = 'CANARY7f3a9c1e5b2d48aa';
  const secret = `whsec_${Buffer.from(`${canary}-secret-bytes!`).toString('base64')}`;
  const providers = [{ ...(await h.addProvider('canary', AdapterKind.ANSWERLINE, secret)), tenantJsonPath: 'account.tenant' }];
  const body = JSON.stringify({
    ...JSON.parse(answerlineBody({ id: `tsk_${canary}_id`, idempotencyKey: `job-${canary}-key`, response: { answer: `${canary} answer text` } })),
    account: { tenant: `${canary}-tenant`, email: `${canary}@example.com` },
  });
  const event = h.signed(
    body,
    { secret },
    { 'user-agent': `${canary}-agent/1.0`, 'x-extra': `${canary}-header`, cookie: `session=${canary}` },
    { path: '/hooks/canary' },
  );

  const verifier = h.verifier({ providers });
  expect((await verifier(event)).statusCode).toBe(202);
  expect((await verifier(event)).statusCode).toBe(200);
  await verifier({ ...event, headers: { ...event.headers, 'webhook-signature': `v1,${Buffer.from(canary).toString('base64')}` } });
  expect(await h.drain(h.processor({ providers }))).toEqual({ received: 1, failed: 0 });

  const lines = h.capture.lines;
  expect(h.capture.logs('delivery')).toHaveLength(3);
  expect(h.capture.logs('processed')).toHaveLength(1);
  // The canary is in the body, the ids, the tenant, three headers and the secret: in no line, in any form that names it.
  const offending = lines.filter((line) => line.includes(canary) || line.includes(Buffer.from(canary).toString('base64')));
  expect(offending).toEqual([]);
  for (const value of [secret, event.headers['webhook-signature']!, event.body!]) {
    expect(lines.filter((line) => line.includes(value))).toEqual([]);
  }
  // The record still says what happened, by reference.
  const [accepted] = h.capture.logs('delivery') as LogRecord[];
  expect(accepted).toMatchObject({ Provider: 'canary', tenantRef: reference(`tenant:${canary}-tenant`), dedupeResult: 'new' });
});
