/**
 * The dashboard parser reads the dashboard the example app synthesizes (bin/app.ts), its
 * intrinsics resolved as the twin resolves them, into the charts the console draws; and it
 * expands CloudWatch's "." and "..." shorthand, keeps math expressions undrawn, and refuses a body
 * it cannot read with the line at fault.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { IConstruct } from 'constructs';
import { WebhookInbox } from '../../../../../lib';
import { MetricName } from '../../../../../lib/contract';
import { DashboardBodyError, MetricIdentity, MetricLine, MetricWidget, parseDashboardWidgets, widgetSeries } from '../../../src/twin/console/dashboard-widgets';
import { pseudoParameters, resolveString } from '../../../src/aws/cloudformation/intrinsics';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../../../src/aws/local-aws';
import { SAMPLE_DASHBOARD_BODY } from './fake-console';

/** The example app's stack, as bin/app.ts builds it, with the dashboard body resolved. */
function synthesizeExample() {
  const app = new App({ context: { 'aws:cdk:disable-asset-staging': true } });
  const stack = new Stack(app, 'WebhookInboxExample');
  const inbox = new WebhookInbox(stack, 'Answers');
  const resources: Record<string, any> = Template.fromStack(stack).toJSON().Resources;
  const dashboards = Object.values(resources).filter((resource) => resource.Type === 'AWS::CloudWatch::Dashboard');
  expect(dashboards).toHaveLength(1);
  // Every resource stands for itself: a Ref is its logical id, an attribute `<id>.<attribute>`.
  const body = resolveString(dashboards[0].Properties.DashboardBody, {
    resources: {},
    pseudo: pseudoParameters(LOCAL_ACCOUNT, LOCAL_REGION, stack.stackName),
    fallback: (logicalId, attribute) => (attribute ? `${logicalId}.${attribute}` : logicalId),
  });
  const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as never);
  return { body, inbox, id };
}

const example = synthesizeExample();
const widgets = parseDashboardWidgets(example.body);

function widget(title: string): MetricWidget {
  const found = widgets.find((each) => each.title === title);
  if (!found) throw new Error(`no widget ${title} among ${widgets.map((each) => each.title).join(', ')}`);
  return found;
}

function metricLines(title: string): MetricLine[] {
  return widget(title).lines.filter((line): line is MetricLine => line.kind === 'metric');
}

describe('the example dashboard', () => {
  test('gives every metric chart, in the dashboard order, and leaves out the text and alarm widgets', () => {
    expect(widgets.map((each) => each.title)).toEqual([
      'Deliveries by reason',
      'Endpoint (HTTP API)',
      'Work queue',
      'Queue delay (ms, p99)',
      'Dead deliveries',
      'Processing',
      'Effects',
      'Reconciler',
      'Signing secrets',
      'Submission deadlines',
      'Verifier function',
      'Processor function',
      'Reconciler function',
    ]);
    const types = (JSON.parse(example.body).widgets as { type: string }[]).map((each) => each.type);
    expect(types.filter((type) => type !== 'metric')).toEqual(['text', 'alarm']);
  });

  test("reads the inbox's own metrics with their namespace, dimension, statistic, period and label", () => {
    const lines = metricLines('Deliveries by reason');
    expect(lines.map((line) => line.metricName)).toEqual([
      MetricName.ACCEPTED,
      MetricName.DUPLICATE,
      MetricName.QUARANTINED,
      MetricName.TEST_DELIVERY,
      MetricName.NOT_FINAL,
      MetricName.FILTERED,
      MetricName.BAD_SIGNATURE,
      MetricName.STALE_TIMESTAMP,
      MetricName.MALFORMED,
      MetricName.TOO_LARGE,
      MetricName.STORE_ERROR,
      MetricName.SECRET_UNAVAILABLE,
    ]);
    expect(lines[0]).toEqual({
      kind: 'metric',
      namespace: 'WebhookInbox',
      metricName: 'Accepted',
      dimensions: { Inbox: example.inbox.inboxName },
      stat: 'Sum',
      periodSeconds: 300,
      label: 'accepted',
      rightAxis: false,
    });
    expect(new Set(lines.map((line) => `${line.namespace} ${JSON.stringify(line.dimensions)} ${line.stat} ${line.periodSeconds}`))).toEqual(
      new Set([`WebhookInbox {"Inbox":"${example.inbox.inboxName}"} Sum 300`]),
    );
  });

  test('reads the AWS metrics of the queues, the API and the functions, each named by its resolved resource, on its axis', () => {
    const deadLetterQueue = `${example.id(example.inbox.deadLetterQueue!)}.QueueName`;
    expect(metricLines('Dead deliveries')[0]).toEqual({
      kind: 'metric',
      namespace: 'AWS/SQS',
      metricName: 'ApproximateNumberOfMessagesVisible',
      dimensions: { QueueName: deadLetterQueue },
      stat: 'Maximum',
      periodSeconds: 60,
      label: 'DLQ visible',
      rightAxis: false,
    });
    const endpoint = metricLines('Endpoint (HTTP API)');
    expect(endpoint.map((line) => [line.metricName, line.stat, line.label, line.rightAxis])).toEqual([
      ['Latency', 'p50', 'latency p50', false],
      ['Latency', 'p99', 'latency p99', false],
      ['IntegrationLatency', 'p99', 'verifier p99', false],
      ['4xx', 'Sum', '4xx', true],
      ['5xx', 'Sum', '5xx', true],
    ]);
    expect(new Set(endpoint.map((line) => JSON.stringify(line.dimensions)))).toEqual(new Set([JSON.stringify({ ApiId: example.id(example.inbox.api) })]));
    expect(metricLines('Verifier function').map((line) => [line.namespace, line.metricName, line.dimensions, line.stat, line.rightAxis])).toEqual([
      ['AWS/Lambda', 'Errors', { FunctionName: example.id(example.inbox.verifierFunction) }, 'Sum', false],
      ['AWS/Lambda', 'Throttles', { FunctionName: example.id(example.inbox.verifierFunction) }, 'Sum', false],
      ['AWS/Lambda', 'Duration', { FunctionName: example.id(example.inbox.verifierFunction) }, 'p99', true],
    ]);
  });

  test("widgetSeries asks the metric source for each line's metric, statistic and period over the window, and charts what it answers", () => {
    const asked: string[] = [];
    const now = Date.UTC(2030, 0, 1, 12);
    const filled = widgetSeries(
      widgets,
      (metric: MetricIdentity, stat, periodSeconds, fromMs, toMs) => {
        asked.push(`${metric.namespace}/${metric.metricName} ${stat} ${periodSeconds} ${fromMs} ${toMs}`);
        return [[toMs, periodSeconds]];
      },
      now,
      3_600_000,
    );
    expect(filled.map((each) => each.title)).toEqual(widgets.map((each) => each.title));
    expect(asked).toHaveLength(widgets.reduce((sum, each) => sum + each.lines.length, 0));
    // Whole periods of the clock, the current one included.
    expect(asked).toContain(`AWS/SQS/ApproximateNumberOfMessagesVisible Maximum 60 ${now - 3_600_000} ${now + 60_000}`);
    const deadDeliveries = filled.find((each) => each.title === 'Dead deliveries')!;
    expect(deadDeliveries.series).toEqual([
      { label: 'DLQ visible', points: [[now, 60]] },
      { label: 'dead-lettered rows', points: [[now, 300]] },
    ]);
    expect(filled.find((each) => each.title === 'Work queue')!.series[1]).toEqual({ label: 'oldest message age (s)', points: [[now, 300]], rightAxis: true });
  });

  test('periods are whole ones of the clock, the current one included, and each point is drawn at its period’s end or now: never before it was counted', () => {
    const minute = 60_000;
    // The twin started at 12:56; a delivery at 12:57 is counted in the 5-minute period 12:55–13:00; it is 12:58.
    const now = Date.UTC(2030, 0, 1, 12, 58);
    const counted = Date.UTC(2030, 0, 1, 12, 57);
    const asked: [number, number][] = [];
    const [chart] = widgetSeries(
      [
        {
          title: 'Deliveries',
          lines: [
            { kind: 'metric', namespace: 'N', metricName: 'Accepted', dimensions: {}, stat: 'Sum', periodSeconds: 300, label: 'accepted', rightAxis: false },
          ],
        },
      ],
      (_metric, _stat, periodSeconds, fromMs, toMs) => {
        asked.push([fromMs, toMs]);
        // One point per whole period, at its start, as CloudWatch and the twin's store stamp them.
        const points: [number, number][] = [];
        for (let start = fromMs; start + periodSeconds * 1000 <= toMs; start += periodSeconds * 1000)
          points.push([start, start <= counted && counted < start + periodSeconds * 1000 ? 1 : 0]);
        return points;
      },
      now,
      30 * minute,
    );
    expect(asked).toEqual([[Date.UTC(2030, 0, 1, 12, 25), Date.UTC(2030, 0, 1, 13, 0)]]);
    const points = chart.series[0].points;
    expect(points.at(-1)).toEqual([now, 1]);
    expect(points.at(-2)).toEqual([Date.UTC(2030, 0, 1, 12, 55), 0]);
    expect(points.every(([at, value]) => value === 0 || at >= counted)).toBe(true);
  });
});

describe('the compact notation', () => {
  test('"." repeats the item above it and "..." the items the line leaves out; an expression is kept, named as not drawn', () => {
    const [deliveries, queue] = parseDashboardWidgets(SAMPLE_DASHBOARD_BODY);
    expect(
      deliveries.lines.map((line) => (line.kind === 'metric' ? [line.namespace, line.metricName, line.dimensions, line.stat, line.periodSeconds] : line)),
    ).toEqual([
      ['WebhookInbox', 'Accepted', { Inbox: 'answers' }, 'Sum', 60],
      ['WebhookInbox', 'Duplicate', { Inbox: 'answers' }, 'Sum', 60],
      ['WebhookInbox', 'BadSignature', { Inbox: 'answers' }, 'Sum', 60],
      { kind: 'expression', expression: '100 * bad / (accepted + bad)', label: 'refused %', id: 'refused', rightAxis: false },
    ]);
    expect(
      queue.lines.map((line) =>
        line.kind === 'metric' ? [line.namespace, line.metricName, line.dimensions, line.stat, line.periodSeconds, line.rightAxis] : line,
      ),
    ).toEqual([
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', { QueueName: 'answers-work' }, 'Maximum', 300, false],
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', { QueueName: 'answers-dead-letter' }, 'Maximum', 300, false],
      ['AWS/SQS', 'ApproximateAgeOfOldestMessage', { QueueName: 'answers-work' }, 'Maximum', 300, true],
    ]);

    const asked: string[] = [];
    const [filled] = widgetSeries([deliveries], (metric) => (asked.push(metric.metricName), []), 0, 60_000);
    expect(asked).toEqual(['Accepted', 'Duplicate', 'BadSignature']);
    expect(filled.series[3]).toEqual({ label: 'refused %', points: [], notDrawn: 'math expression 100 * bad / (accepted + bad): not drawn locally' });
  });

  test("a line without options takes the widget's statistic and period, or CloudWatch's; a hidden line is not drawn; an untitled chart is named by its lines", () => {
    const body = JSON.stringify({
      widgets: [
        {
          type: 'metric',
          properties: {
            metrics: [
              ['AWS/Lambda', 'Errors', 'FunctionName', 'verifier', { visible: false, id: 'errors' }],
              ['...', 'processor'],
              ['AWS/Lambda', 'Invocations'],
            ],
          },
        },
      ],
    });
    expect(parseDashboardWidgets(body)).toEqual([
      {
        title: 'Errors, Invocations',
        lines: [
          {
            kind: 'metric',
            namespace: 'AWS/Lambda',
            metricName: 'Errors',
            dimensions: { FunctionName: 'processor' },
            stat: 'Average',
            periodSeconds: 300,
            label: 'Errors',
            rightAxis: false,
          },
          {
            kind: 'metric',
            namespace: 'AWS/Lambda',
            metricName: 'Invocations',
            dimensions: {},
            stat: 'Average',
            periodSeconds: 300,
            label: 'Invocations',
            rightAxis: false,
          },
        ],
      },
    ]);
  });

  test.each([
    ['a body without widgets', { dashboard: [] }, 'a dashboard body is an object with a widgets array'],
    ['a metric widget without metrics', { widgets: [{ type: 'metric', properties: { title: 'x' } }] }, 'metric widget 1: its properties have no metrics array'],
    [
      'shorthand on the first line',
      { widgets: [{ type: 'metric', properties: { metrics: [['.', 'Errors']] } }] },
      'metric widget 1, line 1: "." and "..." repeat',
    ],
    [
      'a dimension without its value',
      { widgets: [{ type: 'metric', properties: { metrics: [['AWS/SQS', 'NumberOfMessagesSent', 'QueueName']] } }] },
      'metric widget 1, line 1: a metric is a namespace, a name and dimension name-value pairs',
    ],
    [
      'options alone, no expression',
      { widgets: [{ type: 'metric', properties: { metrics: [[{ label: 'x' }]] } }] },
      'line 1: neither a metric nor an expression',
    ],
  ])('refuses %s, saying what is wrong', (_case, body, message) => {
    expect(() => parseDashboardWidgets(JSON.stringify(body))).toThrow(DashboardBodyError);
    expect(() => parseDashboardWidgets(JSON.stringify(body))).toThrow(message);
  });
});
