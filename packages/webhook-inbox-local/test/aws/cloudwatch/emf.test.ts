/**
 * Embedded-metric-format lines become the datapoints CloudWatch Logs would extract: one per metric,
 * value and dimension set, at the document's timestamp. Anything else yields no datapoint.
 */
import { parseEmfLine } from '../../../src/aws/cloudwatch/emf';
import { Telemetry } from '../../../../../lambda/shared/runtime/telemetry';
import { T0 } from './support';

function emf(members: Record<string, unknown>, directive: Record<string, unknown> = {}): string {
  return JSON.stringify({
    _aws: { Timestamp: T0, CloudWatchMetrics: [{ Namespace: 'App', Dimensions: [['Service']], Metrics: [{ Name: 'Calls', Unit: 'Count' }], ...directive }] },
    Service: 'checkout',
    Calls: 3,
    ...members,
  });
}

/** Our handlers' telemetry of the inbox `answers` at T0, and the lines it writes; `perProvider` adds the per-provider dimension set. */
function recordingTelemetry(perProvider = false): { telemetry: Telemetry; lines: string[] } {
  const lines: string[] = [];
  return {
    telemetry: new Telemetry(
      'answers',
      (line) => lines.push(line),
      () => T0,
      perProvider,
    ),
    lines,
  };
}

test("our handlers' telemetry: a provider's counters are published per inbox only, unless metrics per provider are asked for", () => {
  const { telemetry, lines } = recordingTelemetry();
  telemetry.count('Processed', 'answerline', 2);
  telemetry.flush();
  expect(lines.flatMap(parseEmfLine)).toEqual([
    { namespace: 'WebhookInbox', name: 'Processed', dimensions: { Inbox: 'answers' }, timestamp: T0, value: 2, unit: 'Count' },
  ]);
});

test("our handlers' telemetry with metrics per provider: a provider's counters are published per inbox and per inbox and provider", () => {
  const { telemetry, lines } = recordingTelemetry(true);
  telemetry.count('Processed', 'answerline', 2);
  telemetry.count('DeadLettered', 'answerline');
  telemetry.count('Swept', undefined, 4);
  telemetry.log('INFO', 'not a metric', { count: 3 });
  telemetry.flush();

  const datapoints = lines.flatMap(parseEmfLine);
  const inbox = { Inbox: 'answers' };
  const provider = { Inbox: 'answers', Provider: 'answerline' };
  expect(datapoints).toEqual(
    expect.arrayContaining([
      { namespace: 'WebhookInbox', name: 'Processed', dimensions: inbox, timestamp: T0, value: 2, unit: 'Count' },
      { namespace: 'WebhookInbox', name: 'Processed', dimensions: provider, timestamp: T0, value: 2, unit: 'Count' },
      { namespace: 'WebhookInbox', name: 'DeadLettered', dimensions: inbox, timestamp: T0, value: 1, unit: 'Count' },
      { namespace: 'WebhookInbox', name: 'DeadLettered', dimensions: provider, timestamp: T0, value: 1, unit: 'Count' },
      { namespace: 'WebhookInbox', name: 'Swept', dimensions: inbox, timestamp: T0, value: 4, unit: 'Count' },
    ]),
  );
  expect(datapoints).toHaveLength(5);
});

test("a log line written with the metrics carries its own provider's; another provider's go out as a document of their own", () => {
  const { telemetry, lines } = recordingTelemetry(true);
  telemetry.count('Accepted', 'answerline');
  telemetry.count('Accepted', 'echonova', 2);
  telemetry.logAndFlush('INFO', 'delivery', { provider: 'answerline', status: 202 });

  expect(lines).toHaveLength(2);
  const [line, other] = lines.map((text) => JSON.parse(text) as Record<string, unknown>);
  expect(line).toMatchObject({ level: 'INFO', message: 'delivery', status: 202, Inbox: 'answers', Provider: 'answerline', Accepted: 1 });
  expect(other).not.toHaveProperty('message');
  const inbox = { Inbox: 'answers' };
  expect(lines.flatMap(parseEmfLine)).toEqual([
    { namespace: 'WebhookInbox', name: 'Accepted', dimensions: inbox, timestamp: T0, value: 1, unit: 'Count' },
    { namespace: 'WebhookInbox', name: 'Accepted', dimensions: { ...inbox, Provider: 'answerline' }, timestamp: T0, value: 1, unit: 'Count' },
    { namespace: 'WebhookInbox', name: 'Accepted', dimensions: inbox, timestamp: T0, value: 2, unit: 'Count' },
    { namespace: 'WebhookInbox', name: 'Accepted', dimensions: { ...inbox, Provider: 'echonova' }, timestamp: T0, value: 2, unit: 'Count' },
  ]);

  // Nothing counted since: the next line goes out alone, with its time.
  telemetry.logAndFlush('INFO', 'delivery', { provider: 'answerline' });
  expect(JSON.parse(lines[2])).toEqual({ level: 'INFO', time: new Date(T0).toISOString(), Inbox: 'answers', Provider: 'answerline', message: 'delivery' });
  expect(lines).toHaveLength(3);
});

test('an array of values publishes each value; a metric without a unit has none; an empty dimension set is a metric without dimensions', () => {
  const line = emf({ Latency: [12, 30] }, { Dimensions: [[], ['Service']], Metrics: [{ Name: 'Latency' }] });
  expect(parseEmfLine(line)).toEqual([
    { namespace: 'App', name: 'Latency', dimensions: {}, timestamp: T0, value: 12 },
    { namespace: 'App', name: 'Latency', dimensions: {}, timestamp: T0, value: 30 },
    { namespace: 'App', name: 'Latency', dimensions: { Service: 'checkout' }, timestamp: T0, value: 12 },
    { namespace: 'App', name: 'Latency', dimensions: { Service: 'checkout' }, timestamp: T0, value: 30 },
  ]);
});

test('several directives in one document each publish their metrics', () => {
  const line = JSON.stringify({
    _aws: {
      Timestamp: T0,
      CloudWatchMetrics: [
        { Namespace: 'A', Dimensions: [['Service']], Metrics: [{ Name: 'Calls' }] },
        { Namespace: 'B', Dimensions: [['Region']], Metrics: [{ Name: 'Calls', Unit: 'Count' }] },
      ],
    },
    Service: 'checkout',
    Region: 'eu',
    Calls: 1,
  });
  expect(parseEmfLine(line)).toEqual([
    { namespace: 'A', name: 'Calls', dimensions: { Service: 'checkout' }, timestamp: T0, value: 1 },
    { namespace: 'B', name: 'Calls', dimensions: { Region: 'eu' }, timestamp: T0, value: 1, unit: 'Count' },
  ]);
});

test('a document after the tab-separated metadata Lambda may prefix still counts', () => {
  const line = `2025-01-01T00:00:00.000Z\t6c2e3d1e-0000-4000-8000-000000000000\tINFO\t${emf({})}`;
  expect(parseEmfLine(line)).toEqual([{ namespace: 'App', name: 'Calls', dimensions: { Service: 'checkout' }, timestamp: T0, value: 3, unit: 'Count' }]);
});

test.each([
  ['plain text', 'START RequestId: 1 Version: $LATEST'],
  ['JSON that is not an object', '[1, 2, 3]'],
  ['a JSON log line without _aws', JSON.stringify({ level: 'INFO', message: 'hello', count: 3 })],
  ['text before the document that is not a Lambda prefix', `note: ${emf({})}`],
  ['truncated JSON', emf({}).slice(0, -5)],
  ['no timestamp', JSON.stringify({ _aws: { CloudWatchMetrics: [] }, Calls: 1 })],
  ['a timestamp in text', JSON.stringify({ _aws: { Timestamp: '1735689600000', CloudWatchMetrics: [] } })],
  ['a metric member missing', emf({ Calls: undefined })],
  ['a metric value in text', emf({ Calls: '3' })],
  ['an array holding text', emf({ Calls: [1, 'two'] })],
  ['a dimension member missing', emf({ Service: undefined })],
  ['a dimension value that is a number', emf({ Service: 7 })],
  ['no dimension set at all', emf({}, { Dimensions: [] })],
  ['a directive without a namespace', emf({}, { Namespace: undefined })],
  ['a metric definition without a name', emf({}, { Metrics: [{ Unit: 'Count' }] })],
])('%s yields no datapoint', (_what, line) => {
  expect(parseEmfLine(line)).toEqual([]);
});
