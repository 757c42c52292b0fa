import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { InboxAlarm, WebhookInbox, WebhookInboxAlarms, WebhookInboxBase, WebhookInboxMetrics, WebhookInboxProps, WebhookProvider } from '../../lib';
import { METRIC_NAMESPACE, MetricDimension, MetricName } from '../../lib/contract';
import { Telemetry } from '../../lambda/shared/runtime/telemetry';
import { parseCommandLine } from '../../cli/main';
import { selectOpsConfig, StackOutput } from '../../cli/config';

const INBOX = 'answers';
const RUNBOOK = readFileSync(join(__dirname, '..', '..', 'docs', 'RUNBOOK.md'), 'utf8');

interface Built {
  stack: Stack;
  inbox: WebhookInbox;
  template: Template;
}

function build(props: WebhookInboxProps = {}, withTopic = true): Built {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const topic = withTopic ? new sns.Topic(stack, 'Pager') : undefined;
  const inbox = new WebhookInbox(stack, 'Inbox', {
    inboxName: INBOX,
    ...props,
    alarms: { topic, ...props.alarms },
  });
  // As an inbox with a submission ledger: every alarm exists.
  inbox.alarms.watchSubmissions();
  return { stack, inbox, template: Template.fromStack(stack) };
}

/** Logical id of the one resource of `type` whose id starts with `prefix`. */
function idOf(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  expect(ids).toHaveLength(1);
  return ids[0];
}

function alarmNamed(template: Template, name: string): any {
  return template.findResources('AWS::CloudWatch::Alarm')[idOf(template, 'AWS::CloudWatch::Alarm', `InboxAlarms${name}`)].Properties;
}

/** The anchors GitHub generates for the runbook's headings. */
function runbookAnchors(): string[] {
  return [...RUNBOOK.matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
    match[1]
      .trim()
      .toLowerCase()
      .replace(/[^\w\- ]/g, '')
      .replace(/ /g, '-'),
  );
}

/** The first EMF document the handlers' telemetry writes for what `emit` records. */
function emittedDocument(emit: (telemetry: Telemetry) => void): any {
  const lines: string[] = [];
  const telemetry = new Telemetry(
    INBOX,
    (line) => lines.push(line),
    () => 0,
  );
  emit(telemetry);
  telemetry.flush();
  return JSON.parse(lines[0]);
}

/** The dimension sets the handlers' telemetry writes for a metric (with and without a provider). */
function emittedDimensionSets(metric: string, provider: string | undefined): { namespace: string; sets: string[][]; values: Record<string, unknown> } {
  const document = emittedDocument((telemetry) => telemetry.count(metric, provider));
  const directive = document._aws.CloudWatchMetrics[0];
  expect(directive.Metrics.map((m: any) => m.Name)).toContain(metric);
  return { namespace: directive.Namespace, sets: directive.Dimensions, values: document };
}

const ALL_METRIC_ALARMS = [
  'DeadLetterQueueDepth',
  'DeadLettered',
  'SignatureFailures',
  'QuarantinedDuplicates',
  'OverdueSubmissions',
  'SubmissionsNearDeadline',
  'OldestMessageAge',
  'VerifierServerErrors',
  'ReconcilerErrors',
  'ReconcilerNotRunning',
  'QueueDelay',
  'SweepLag',
  'BreakerOpen',
];

/** The alarms on recorded submissions: only an inbox with a submission ledger (or polling) has them. */
const SUBMISSION_ALARMS = ['OverdueSubmissions', 'SubmissionsNearDeadline'];

describe('alarms on recorded submissions', () => {
  /** The names (construct ids under `Inbox/Alarms`) of an inbox's metric alarms, and of those its dashboard shows. */
  function alarmsOf(configure: (inbox: WebhookInbox, stack: Stack) => void, props: WebhookInboxProps = {}): { alarms: string[]; onDashboard: number } {
    const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
    const topic = new sns.Topic(stack, 'Pager');
    const inbox = new WebhookInbox(stack, 'Inbox', { inboxName: INBOX, ...props, alarms: { topic } });
    configure(inbox, stack);
    const template = Template.fromStack(stack);
    const alarms = Object.keys(template.findResources('AWS::CloudWatch::Alarm')).map((id) => id.replace(/^InboxAlarms/, '').replace(/[0-9A-F]{8}$/, ''));
    const body = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
    return { alarms, onDashboard: (body.match(/InboxAlarms(OverdueSubmissions|SubmissionsNearDeadline)/g) ?? []).length };
  }

  test('an inbox that records no submission and polls no provider has neither alarm', () => {
    const { alarms } = alarmsOf(() => undefined, { providers: [WebhookProvider.stripe()] });
    for (const name of SUBMISSION_ALARMS) expect(alarms).not.toContain(name);
    expect(alarms).toContain('SignatureFailures');
  });

  test('grantRecordSubmission (a submission ledger) adds both, once, and onto the dashboard', () => {
    const { alarms, onDashboard } = alarmsOf((inbox, stack) => {
      const writer = new iam.Role(stack, 'Submitter', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
      inbox.grantRecordSubmission(writer);
      inbox.grantRecordSubmission(writer);
      expect(inbox.alarms.overdueSubmissions).toBeDefined();
      expect(inbox.alarms.submissionsNearDeadline).toBeDefined();
      expect(inbox.alarms.all).toEqual(expect.arrayContaining([inbox.alarms.overdueSubmissions, inbox.alarms.submissionsNearDeadline]));
    });
    expect(alarms.filter((name) => SUBMISSION_ALARMS.includes(name)).sort()).toEqual([...SUBMISSION_ALARMS].sort());
    expect(onDashboard).toBeGreaterThanOrEqual(2);
  });

  test('a polling provider adds both; a disabled one stays out', () => {
    const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
    const apiKey = new secretsmanager.Secret(stack, 'ApiKey');
    const inbox = new WebhookInbox(stack, 'Inbox', {
      inboxName: INBOX,
      providers: [WebhookProvider.answerline({ polling: { apiKeySecret: apiKey } })],
      alarms: { disabled: [InboxAlarm.SUBMISSIONS_NEAR_DEADLINE] },
    });
    expect(inbox.alarms.overdueSubmissions).toBeDefined();
    expect(inbox.alarms.submissionsNearDeadline).toBeUndefined();
  });
});

describe('alarms with defaults', () => {
  const { template, inbox } = build();
  const topic = { Ref: idOf(template, 'AWS::SNS::Topic', 'Pager') };
  const dlq = idOf(template, 'AWS::SQS::Queue', 'InboxDeadLetterQueue');
  const work = idOf(template, 'AWS::SQS::Queue', 'InboxWorkQueue');
  const api = idOf(template, 'AWS::ApiGatewayV2::Api', 'InboxApi');
  const reconciler = idOf(template, 'AWS::Lambda::Function', 'InboxReconciler');
  const inboxDimension = [{ Name: 'Inbox', Value: INBOX }];

  // name, namespace, metric, exact dimensions, statistic, period, threshold, notifies, runbook anchor
  const specs: [string, string, string, unknown[], string, number, number, boolean, string][] = [
    [
      'DeadLetterQueueDepth',
      'AWS/SQS',
      'ApproximateNumberOfMessagesVisible',
      [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }],
      'Maximum',
      60,
      1,
      false,
      'dead-deliveries',
    ],
    ['DeadLettered', METRIC_NAMESPACE, MetricName.DEAD_LETTERED, inboxDimension, 'Sum', 60, 1, false, 'dead-deliveries'],
    ['SignatureFailures', METRIC_NAMESPACE, MetricName.AUTHENTICATION_FAILED, inboxDimension, 'Sum', 300, 10, true, 'signature-failures'],
    ['QuarantinedDuplicates', METRIC_NAMESPACE, MetricName.QUARANTINED, inboxDimension, 'Sum', 300, 1, true, 'quarantined-duplicates'],
    ['OverdueSubmissions', METRIC_NAMESPACE, MetricName.OVERDUE, inboxDimension, 'Maximum', 900, 1, true, 'overdue-submissions'],
    ['SubmissionsNearDeadline', METRIC_NAMESPACE, 'SubmissionsNearDeadline', inboxDimension, 'Maximum', 300, 1, true, 'submissions-near-deadline'],
    [
      'OldestMessageAge',
      'AWS/SQS',
      'ApproximateAgeOfOldestMessage',
      [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [work, 'QueueName'] } }],
      'Maximum',
      300,
      900,
      true,
      'oldest-message-age',
    ],
    ['VerifierServerErrors', 'AWS/ApiGateway', '5xx', [{ Name: 'ApiId', Value: { Ref: api } }], 'Sum', 300, 5, true, 'verifier-server-errors'],
    ['ReconcilerErrors', 'AWS/Lambda', 'Errors', [{ Name: 'FunctionName', Value: { Ref: reconciler } }], 'Sum', 900, 1, true, 'reconciler-errors'],
    ['ReconcilerNotRunning', 'AWS/Lambda', 'Invocations', [{ Name: 'FunctionName', Value: { Ref: reconciler } }], 'Sum', 60, 1, true, 'reconciler-not-running'],
    ['SweepLag', METRIC_NAMESPACE, MetricName.SWEEP_LAG, inboxDimension, 'Maximum', 300, 900, true, 'sweep-lag'],
    ['BreakerOpen', METRIC_NAMESPACE, MetricName.BREAKER_OPEN, inboxDimension, 'Maximum', 300, 1, true, 'circuit-breaker-open'],
  ];
  /** Alarms on an absence: fewer than the threshold, and no data at all is the failure. */
  const ABSENCE_ALARMS = new Set(['ReconcilerNotRunning']);
  /** Alarms on a state each reconciler run reports: a period without a run keeps the state they had. */
  const STATE_ALARMS = new Set(['BreakerOpen']);

  test("the sweep-lag alarm watches the reconciler's SweepLag, one value a run in seconds, at 15 minutes", () => {
    const alarm = alarmNamed(template, 'SweepLag');
    expect(alarm.AlarmDescription).toContain('lagged its cutoff by 15 minutes or more');
    // The reconciler emits it once a run in seconds, with the dimension set the alarm names.
    const document = emittedDocument((telemetry) => telemetry.seconds(MetricName.SWEEP_LAG, undefined, 960));
    expect(document._aws.CloudWatchMetrics[0].Metrics).toEqual([{ Name: MetricName.SWEEP_LAG, Unit: 'Seconds' }]);
    expect(document._aws.CloudWatchMetrics[0].Dimensions).toEqual([alarm.Dimensions.map((d: any) => d.Name)]);
    expect(document[MetricName.SWEEP_LAG]).toEqual([960]);
  });

  test('the breaker alarm is in ALARM while a reconciler run finds the breaker open, and keeps its state between runs', () => {
    const alarm = alarmNamed(template, 'BreakerOpen');
    expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'ignore' });
    expect(alarm.AlarmDescription).toContain('docs/RUNBOOK.md#circuit-breaker-open');
    // The reconciler emits 1 or 0 each run, with the dimension set the alarm names.
    const document = emittedDocument((telemetry) => telemetry.count(MetricName.BREAKER_OPEN, undefined, 1));
    expect(document._aws.CloudWatchMetrics[0].Dimensions).toEqual([alarm.Dimensions.map((d: any) => d.Name)]);
    expect(document[MetricName.BREAKER_OPEN]).toBe(1);
  });

  test("the queue-delay alarm watches the p99 of the processor's QueueDelay over 5 minutes, at 2 minutes in milliseconds", () => {
    const alarm = alarmNamed(template, 'QueueDelay');
    expect(alarm).toMatchObject({
      Namespace: METRIC_NAMESPACE,
      MetricName: MetricName.QUEUE_DELAY,
      Dimensions: inboxDimension,
      // A percentile is an extended statistic in CloudFormation: never Statistic beside it.
      ExtendedStatistic: 'p99',
      Period: 300,
      Threshold: 120_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [topic],
    });
    expect(alarm.Statistic).toBeUndefined();
    expect(alarm.AlarmDescription).toContain('docs/RUNBOOK.md#queue-delay');
    // The processor emits it per row in milliseconds, with the dimension set the alarm names.
    const document = emittedDocument((telemetry) => telemetry.duration(MetricName.QUEUE_DELAY, 'answerline', 42));
    expect(document._aws.CloudWatchMetrics[0].Metrics).toEqual([{ Name: MetricName.QUEUE_DELAY, Unit: 'Milliseconds' }]);
    expect(document._aws.CloudWatchMetrics[0].Dimensions).toContainEqual(alarm.Dimensions.map((d: any) => d.Name));
    expect(document[MetricName.QUEUE_DELAY]).toEqual([42]);
  });

  test('creates one metric alarm per failure and one composite for dead deliveries', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', ALL_METRIC_ALARMS.length);
    template.resourceCountIs('AWS::CloudWatch::CompositeAlarm', 1);
    expect(inbox.alarms.all).toHaveLength(ALL_METRIC_ALARMS.length + 1);
  });

  test.each(specs)(
    '%s alarm: %s %s, exact dimensions, statistic, period, threshold, actions',
    (name, namespace, metric, dimensions, statistic, period, threshold, notifies, anchor) => {
      const alarm = alarmNamed(template, name);
      expect(alarm.Namespace).toBe(namespace);
      expect(alarm.MetricName).toBe(metric);
      expect(alarm.Dimensions).toEqual(dimensions);
      expect(alarm.Statistic).toBe(statistic);
      expect(alarm.Period).toBe(period);
      expect(alarm.Threshold).toBe(threshold);
      const absence = ABSENCE_ALARMS.has(name);
      expect(alarm.ComparisonOperator).toBe(absence ? 'LessThanThreshold' : 'GreaterThanOrEqualToThreshold');
      // An absence is a minute period, an hour's worth of them all breaching: it fires an hour after the last run, and clears a minute after the next.
      expect(alarm.EvaluationPeriods).toBe(absence ? 60 : 1);
      expect(alarm.DatapointsToAlarm).toBe(absence ? 60 : 1);
      expect(alarm.TreatMissingData).toBe(absence ? 'breaching' : STATE_ALARMS.has(name) ? 'ignore' : 'notBreaching');
      expect(alarm.ExtendedStatistic).toBeUndefined();
      expect(alarm.Metrics).toBeUndefined();
      if (notifies) expect(alarm.AlarmActions).toEqual([topic]);
      else expect(alarm.AlarmActions).toBeUndefined();
      expect(alarm.AlarmDescription).toContain(`docs/RUNBOOK.md#${anchor}`);
      expect(alarm.AlarmDescription).toContain(`Webhook inbox ${INBOX}:`);
      expect(alarm.AlarmDescription).toContain('npx webhook-inbox status --stack Test');
    },
  );

  test('the composite dead-deliveries alarm fires on either child and is the one that notifies', () => {
    const composite = template.findResources('AWS::CloudWatch::CompositeAlarm');
    const [props] = Object.values(composite).map((c: any) => c.Properties);
    expect(props.AlarmActions).toEqual([topic]);
    expect(props.AlarmDescription).toContain('docs/RUNBOOK.md#dead-deliveries');
    const rule = JSON.stringify(props.AlarmRule);
    expect(rule).toMatch(/^.*ALARM\(.*OR.*ALARM\(/);
    expect(rule).toContain(idOf(template, 'AWS::CloudWatch::Alarm', 'InboxAlarmsDeadLetterQueueDepth'));
    expect(rule).toContain(idOf(template, 'AWS::CloudWatch::Alarm', 'InboxAlarmsDeadLettered'));
  });

  test('EMF alarms carry exactly a dimension set the handlers emit, in their namespace', () => {
    for (const [name, metric] of [
      ['DeadLettered', MetricName.DEAD_LETTERED],
      ['SignatureFailures', MetricName.AUTHENTICATION_FAILED],
      ['QuarantinedDuplicates', MetricName.QUARANTINED],
      ['OverdueSubmissions', MetricName.OVERDUE],
      ['SubmissionsNearDeadline', MetricName.NEAR_DEADLINE],
    ]) {
      const alarm = alarmNamed(template, name);
      const alarmDimensionNames = alarm.Dimensions.map((d: any) => d.Name);
      // The processor and the verifier count per provider; the reconciler also without one.
      for (const provider of ['answerline', undefined]) {
        const emitted = emittedDimensionSets(metric, provider);
        expect(emitted.namespace).toBe(alarm.Namespace);
        expect(emitted.sets).toContainEqual(alarmDimensionNames);
        for (const dimension of alarm.Dimensions) expect(emitted.values[dimension.Name]).toBe(dimension.Value);
      }
    }
    expect(alarmNamed(template, 'DeadLettered').Dimensions).toEqual([{ Name: MetricDimension.INBOX, Value: INBOX }]);
  });

  test('the verifier alarm uses the metric aws-cdk-lib’s HttpApi.metricServerError produces', () => {
    const metric = inbox.api.metricServerError();
    expect(metric.namespace).toBe('AWS/ApiGateway');
    expect(metric.metricName).toBe('5xx');
    expect(Object.keys(metric.dimensions ?? {})).toEqual(['ApiId']);
    expect(inbox.metricVerifierServerErrors().metricName).toBe(metric.metricName);
    expect(inbox.metricVerifierServerErrors().dimensions).toEqual(metric.dimensions);
  });

  test('every alarm names a runbook section that exists', () => {
    const anchors = runbookAnchors();
    const descriptions = [
      ...Object.values(template.findResources('AWS::CloudWatch::Alarm')),
      ...Object.values(template.findResources('AWS::CloudWatch::CompositeAlarm')),
    ].map((alarm: any) => alarm.Properties.AlarmDescription as string);
    expect(descriptions).toHaveLength(ALL_METRIC_ALARMS.length + 1);
    for (const description of descriptions) {
      const anchor = /docs\/RUNBOOK\.md#([a-z0-9-]+)/.exec(description)?.[1];
      expect(anchors).toContain(anchor);
    }
    for (const alarm of Object.values(InboxAlarm)) {
      expect(anchors).toContain(alarm.toLowerCase().replace(/_/g, '-'));
    }
  });

  test('exposes each alarm, and deadLetterAlarm stays the DLQ depth alarm', () => {
    for (const name of ALL_METRIC_ALARMS) {
      const property = name.charAt(0).toLowerCase() + name.slice(1);
      expect((inbox.alarms as any)[property]).toBeDefined();
    }
    expect(inbox.alarms.deadDeliveries).toBeDefined();
    expect(inbox.deadLetterAlarm).toBe(inbox.alarms.deadLetterQueueDepth);
  });
});

/** A template value as CloudFormation would resolve it, with each Ref or GetAtt standing for its logical id. */
function resolvedText(value: unknown): string {
  if (typeof value === 'string') return value;
  const intrinsic = value as Record<string, any>;
  if (intrinsic.Ref) return intrinsic.Ref;
  if (intrinsic['Fn::GetAtt']) return intrinsic['Fn::GetAtt'].join('.');
  if (intrinsic['Fn::Join']) return intrinsic['Fn::Join'][1].map(resolvedText).join(intrinsic['Fn::Join'][0]);
  throw new Error(`cannot resolve ${JSON.stringify(value)}`);
}

describe('two inboxes in one stack', () => {
  test("each alarm's \"Start with\" command, run by the CLI against the stack's outputs, selects that alarm's inbox", () => {
    const stack = new Stack(new App(), 'Shop', { env: { account: '111111111111', region: 'eu-west-1' } });
    new WebhookInbox(stack, 'Payments', { inboxName: 'payments', providers: [WebhookProvider.stripe()] });
    new WebhookInbox(stack, 'Answers', { inboxName: 'answers', providers: [WebhookProvider.answerline()] });
    const template = Template.fromStack(stack);
    const outputs: StackOutput[] = Object.entries(template.findOutputs('*')).map(([key, output]) => ({
      OutputKey: key,
      Description: output.Description,
      OutputValue: resolvedText(output.Value),
    }));
    const alarms = [
      ...Object.values(template.findResources('AWS::CloudWatch::Alarm')),
      ...Object.values(template.findResources('AWS::CloudWatch::CompositeAlarm')),
    ].map((alarm: any) => alarm.Properties.AlarmDescription as string);
    expect(alarms.length).toBeGreaterThan(10);
    for (const description of alarms) {
      const inboxName = /^Webhook inbox (\w+):/.exec(description)![1];
      const command = /Start with: npx webhook-inbox (.+)$/.exec(description)![1].split(' ');
      const { values } = parseCommandLine(command);
      expect(values.stack).toBe('Shop');
      expect(selectOpsConfig(outputs, values.stack!, values.inbox).inboxName).toBe(inboxName);
    }
  });
});

describe('alarm options', () => {
  test('threshold overrides apply', () => {
    const { template } = build({
      alarms: {
        signatureFailureThreshold: 25,
        quarantinedThreshold: 3,
        overdueSubmissionThreshold: 2,
        nearDeadlineThreshold: 4,
        maxMessageAge: Duration.minutes(30),
        verifierServerErrorThreshold: 1,
        reconcilerErrorThreshold: 2,
        maxQueueDelay: Duration.seconds(30),
        maxSweepLag: Duration.hours(1),
      },
    });
    expect(alarmNamed(template, 'SweepLag').Threshold).toBe(3600);
    expect(alarmNamed(template, 'SweepLag').AlarmDescription).toContain('by 1 hour or more');
    expect(alarmNamed(template, 'SignatureFailures').Threshold).toBe(25);
    expect(alarmNamed(template, 'QueueDelay').Threshold).toBe(30_000);
    expect(alarmNamed(template, 'QueueDelay').AlarmDescription).toContain('reached 30 seconds');
    expect(alarmNamed(template, 'QuarantinedDuplicates').Threshold).toBe(3);
    expect(alarmNamed(template, 'OverdueSubmissions').Threshold).toBe(2);
    expect(alarmNamed(template, 'SubmissionsNearDeadline').Threshold).toBe(4);
    expect(alarmNamed(template, 'OldestMessageAge').Threshold).toBe(1800);
    expect(alarmNamed(template, 'OldestMessageAge').AlarmDescription).toContain('30 minutes');
    expect(alarmNamed(template, 'VerifierServerErrors').Threshold).toBe(1);
    expect(alarmNamed(template, 'ReconcilerErrors').Threshold).toBe(2);
    expect(alarmNamed(template, 'DeadLettered').Threshold).toBe(1);
  });

  test('a disabled alarm is not created; the others are', () => {
    const { template, inbox } = build({ alarms: { disabled: [InboxAlarm.DEAD_DELIVERIES, InboxAlarm.SIGNATURE_FAILURES] } });
    template.resourceCountIs('AWS::CloudWatch::CompositeAlarm', 0);
    template.resourceCountIs('AWS::CloudWatch::Alarm', ALL_METRIC_ALARMS.length - 3);
    for (const gone of ['DeadLetterQueueDepth', 'DeadLettered', 'SignatureFailures']) {
      expect(Object.keys(template.findResources('AWS::CloudWatch::Alarm')).some((id) => id.startsWith(`InboxAlarms${gone}`))).toBe(false);
    }
    expect(inbox.alarms.deadDeliveries).toBeUndefined();
    expect(inbox.alarms.signatureFailures).toBeUndefined();
    expect(inbox.deadLetterAlarm).toBeUndefined();
    expect(inbox.alarms.quarantinedDuplicates).toBeDefined();
  });

  test('enabled: false creates no alarm at all', () => {
    const { template, inbox } = build({ alarms: { enabled: false } });
    template.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    template.resourceCountIs('AWS::CloudWatch::CompositeAlarm', 0);
    expect(inbox.alarms.all).toEqual([]);
    expect(inbox.deadLetterAlarm).toBeUndefined();
  });

  test('WebhookInboxAlarms takes any IWebhookInbox: alarms built apart match the inbox’s own', () => {
    const own = build({}, false).template;
    const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
    const inbox = new WebhookInbox(stack, 'Inbox', { inboxName: INBOX, alarms: { enabled: false } });
    const alarms = new WebhookInboxAlarms(stack, 'MyAlarms', { inbox });
    alarms.watchSubmissions();
    const apart = Template.fromStack(stack);
    expect(alarms.all).toHaveLength(ALL_METRIC_ALARMS.length + 1);
    for (const name of ALL_METRIC_ALARMS) {
      const mine = apart.findResources('AWS::CloudWatch::Alarm')[idOf(apart, 'AWS::CloudWatch::Alarm', `MyAlarms${name}`)];
      expect(mine.Properties).toEqual(alarmNamed(own, name));
    }
    apart.resourceCountIs('AWS::CloudWatch::CompositeAlarm', 1);
  });

  test('without a topic the alarms change state only', () => {
    const { template } = build({}, false);
    template.resourceCountIs('AWS::CloudWatch::Alarm', ALL_METRIC_ALARMS.length);
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm')) as any[]) {
      expect(alarm.Properties.AlarmActions).toBeUndefined();
    }
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::CompositeAlarm')) as any[]) {
      expect(alarm.Properties.AlarmActions).toBeUndefined();
    }
  });

  test('an encrypted topic’s key lets CloudWatch publish', () => {
    const stack = new Stack(new App(), 'Encrypted');
    const key = new kms.Key(stack, 'PagerKey', { enableKeyRotation: true });
    new WebhookInbox(stack, 'Inbox', { alarms: { topic: new sns.Topic(stack, 'Pager', { masterKey: key }) } });
    const template = Template.fromStack(stack);
    const policy = Object.values(template.findResources('AWS::KMS::Key'))[0] as any;
    const statement = policy.Properties.KeyPolicy.Statement.find((s: any) => s.Principal?.Service === 'cloudwatch.amazonaws.com');
    expect(statement).toBeDefined();
    expect([statement.Action].flat().sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey*']);
  });

  test('with a work queue brought with its DLQ, the queue alarms watch those queues', () => {
    const stack = new Stack(new App(), 'Byo');
    const deadLetterQueue = new sqs.Queue(stack, 'Dlq', { queueName: 'existing-dlq' });
    const workQueue = new sqs.Queue(stack, 'Work', { queueName: 'existing-work', deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: 5 } });
    const inbox = new WebhookInbox(stack, 'Inbox', { inboxName: INBOX, workQueue });
    const template = Template.fromStack(stack);
    expect(inbox.deadLetterQueue).toBe(deadLetterQueue);
    expect(inbox.alarms.deadLettered).toBeDefined();
    expect(inbox.alarms.deadDeliveries).toBeDefined();
    expect(stack.resolve(alarmNamed(template, 'OldestMessageAge').Dimensions)).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [stack.getLogicalId(workQueue.node.defaultChild as sqs.CfnQueue), 'QueueName'] } },
    ]);
    expect(stack.resolve(alarmNamed(template, 'DeadLetterQueueDepth').Dimensions)).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [stack.getLogicalId(deadLetterQueue.node.defaultChild as sqs.CfnQueue), 'QueueName'] } },
    ]);
    // No submission ledger and no polling: no submission alarms.
    template.resourceCountIs('AWS::CloudWatch::Alarm', ALL_METRIC_ALARMS.length - SUBMISSION_ALARMS.length);
  });

  test('the not-running alarm waits three runs of a slow schedule, an hour for a fast one, or what it is told, in minute periods (hours past a day)', () => {
    const periods = (template: any) => {
      const alarm = alarmNamed(template, 'ReconcilerNotRunning');
      expect(alarm.DatapointsToAlarm).toBe(alarm.EvaluationPeriods);
      return [alarm.Period, alarm.EvaluationPeriods];
    };
    const slow = build({ reconcileSchedule: events.Schedule.rate(Duration.hours(2)) });
    expect(periods(slow.template)).toEqual([60, 6 * 60]);
    expect(alarmNamed(slow.template, 'ReconcilerNotRunning').AlarmDescription).toContain('not invoked for 6 hours');
    const daily = build({ reconcileSchedule: events.Schedule.rate(Duration.days(1)) });
    // CloudWatch takes at most a day of one-minute periods.
    expect(periods(daily.template)).toEqual([3600, 3 * 24]);
    const cron = build({ reconcileSchedule: events.Schedule.cron({ minute: '*/10' }) });
    expect(periods(cron.template)).toEqual([60, 60]);
    const told = build({ alarms: { maxReconcilerSilence: Duration.minutes(20) } });
    expect(periods(told.template)).toEqual([60, 20]);
    expect(told.inbox.alarms.reconcilerNotRunning).toBeDefined();
  });

  test('a reconciler silence shorter than two runs, or not whole minutes, is refused', () => {
    expect(() => build({ reconcileSchedule: events.Schedule.rate(Duration.minutes(30)), alarms: { maxReconcilerSilence: Duration.minutes(45) } })).toThrow(
      /alarms\.maxReconcilerSilence: must be at least twice the reconcile schedule's rate \(rate\(30 minutes\)\), got 45 minutes/,
    );
    expect(() => build({ alarms: { maxReconcilerSilence: Duration.seconds(150) } })).toThrow(/alarms\.maxReconcilerSilence: must be a whole number of minutes/);
    expect(() => build({ alarms: { maxReconcilerSilence: Duration.days(8) } })).toThrow(/alarms\.maxReconcilerSilence: .*got 8 days/);
  });

  test('a queue delay under a second or over 12 hours is refused', () => {
    expect(() => build({ alarms: { maxQueueDelay: Duration.millis(500) } })).toThrow(
      /alarms\.maxQueueDelay: must be from 1 second to 12 hours, got 500 millis/,
    );
    expect(() => build({ alarms: { maxQueueDelay: Duration.hours(13) } })).toThrow(/alarms\.maxQueueDelay: .*got 13 hours/);
    expect(() => build({ alarms: { maxQueueDelay: Duration.hours(12) } })).not.toThrow();
  });

  test('a sweep lag under a minute is refused: a run’s own last step would page', () => {
    expect(() => build({ alarms: { maxSweepLag: Duration.seconds(30) } })).toThrow(/alarms\.maxSweepLag: must be at least 1 minute, got 30 seconds/);
    expect(() => build({ alarms: { maxSweepLag: Duration.minutes(1) } })).not.toThrow();
  });

  test('invalid thresholds are refused with one error naming each', () => {
    expect(() =>
      build({
        alarms: {
          signatureFailureThreshold: 0,
          quarantinedThreshold: -1,
          maxMessageAge: Duration.seconds(30),
          disabled: ['NOPE' as InboxAlarm],
        },
      }),
    ).toThrow(/alarms\.signatureFailureThreshold[\s\S]*alarms\.quarantinedThreshold[\s\S]*alarms\.maxMessageAge[\s\S]*alarms\.disabled: unknown alarm "NOPE"/);
  });
});

describe('dashboard', () => {
  /** The dashboard body with CloudFormation references written as `<id>` / `<id.attr>`. */
  function dashboardBody(template: Template): any {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as any[];
    expect(dashboards).toHaveLength(1);
    const body = dashboards[0].Properties.DashboardBody;
    const text =
      typeof body === 'string'
        ? body
        : (body['Fn::Join'][1] as any[])
            .map((part) =>
              typeof part === 'string' ? part : part.Ref ? `<${part.Ref}>` : part['Fn::GetAtt'] ? `<${part['Fn::GetAtt'].join('.')}>` : '<token>',
            )
            .join('');
    return JSON.parse(text);
  }

  /** Every metric on the dashboard as `namespace/name` (CloudWatch's `[ns, name, dim, value, ..., {options}]` arrays). */
  function metricsOf(body: any): string[] {
    return body.widgets.flatMap((widget: any) => (widget.properties.metrics ?? []).map((metric: any[]) => `${metric[0]}/${metric[1]}`));
  }

  test('shows the pipeline: every delivery reason, the endpoint, queues, processing, reconciler, effects and alarm status', () => {
    const { template, inbox } = build();
    expect(inbox.dashboard).toBeDefined();
    const body = dashboardBody(template);
    const metrics = metricsOf(body);
    for (const name of [
      MetricName.ACCEPTED,
      MetricName.DUPLICATE,
      MetricName.QUARANTINED,
      MetricName.TEST_DELIVERY,
      MetricName.BAD_SIGNATURE,
      MetricName.STALE_TIMESTAMP,
      MetricName.MALFORMED,
      MetricName.TOO_LARGE,
      MetricName.STORE_ERROR,
      MetricName.PROCESSED,
      MetricName.PROCESSING_FAILED,
      MetricName.DEAD_LETTERED,
      MetricName.WINNER_CHANGED,
      MetricName.SWEPT,
      MetricName.RECOVERED,
      MetricName.UNKNOWN_SUBMISSIONS,
      MetricName.STILL_PENDING,
      MetricName.OVERDUE,
      MetricName.EFFECTS_DISPATCHED,
      MetricName.EFFECT_FAILURES,
      MetricName.QUEUE_DELAY,
      MetricName.QUEUE_DELAY_FROM_EVENT,
    ]) {
      expect(metrics).toContain(`${METRIC_NAMESPACE}/${name}`);
    }
    for (const aws of [
      'AWS/ApiGateway/Latency',
      'AWS/ApiGateway/5xx',
      'AWS/ApiGateway/4xx',
      'AWS/SQS/ApproximateNumberOfMessagesVisible',
      'AWS/SQS/ApproximateAgeOfOldestMessage',
      'AWS/Lambda/Errors',
    ]) {
      expect(metrics).toContain(aws);
    }
    const reasons = body.widgets.find((w: any) => w.properties.title === 'Deliveries by reason');
    expect(reasons.properties.metrics.map((m: any[]) => m[m.length - 1].label)).toEqual(
      expect.arrayContaining(['accepted', 'duplicate', 'quarantined', 'test', 'bad_signature', 'stale_timestamp', 'malformed', 'too_large', 'store_error']),
    );
    // EMF metrics on the dashboard carry exactly the Inbox dimension, like the alarms.
    for (const metric of reasons.properties.metrics) expect(metric.slice(2, 4)).toEqual([MetricDimension.INBOX, INBOX]);
    const delay = body.widgets.find((w: any) => w.properties.title === 'Queue delay (ms, p99)');
    expect(delay.properties.metrics.map((m: any[]) => [m[1], m[m.length - 1].stat])).toEqual([
      [MetricName.QUEUE_DELAY, 'p99'],
      [MetricName.QUEUE_DELAY_FROM_EVENT, 'p99'],
      [MetricName.QUEUE_DELAY, 'p50'],
    ]);
    const status = body.widgets.find((w: any) => w.type === 'alarm');
    expect(status.properties.alarms).toHaveLength(ALL_METRIC_ALARMS.length + 1);
  });

  test('takes a name, and can be left out', () => {
    const named = build({ dashboard: { dashboardName: 'answers-inbox' } });
    named.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'answers-inbox' });
    const none = build({ dashboard: { enabled: false } });
    none.template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(none.inbox.dashboard).toBeUndefined();
  });

  test('has no alarm status widget when there are no alarms', () => {
    const { template } = build({ alarms: { enabled: false } });
    expect(dashboardBody(template).widgets.some((w: any) => w.type === 'alarm')).toBe(false);
  });
});

describe('metric methods', () => {
  const { inbox, stack } = build();
  const emf: [keyof WebhookInbox, string, string][] = [
    ['metricDuplicates', MetricName.DUPLICATE, 'Sum'],
    ['metricTestDeliveries', MetricName.TEST_DELIVERY, 'Sum'],
    ['metricStaleTimestamps', MetricName.STALE_TIMESTAMP, 'Sum'],
    ['metricMalformed', MetricName.MALFORMED, 'Sum'],
    ['metricTooLarge', MetricName.TOO_LARGE, 'Sum'],
    ['metricBodyTooDeep', MetricName.BODY_TOO_DEEP, 'Sum'],
    ['metricSecretUnavailable', MetricName.SECRET_UNAVAILABLE, 'Sum'],
    ['metricEnqueueFailures', MetricName.ENQUEUE_FAILED, 'Sum'],
    ['metricWinnerChanged', MetricName.WINNER_CHANGED, 'Sum'],
    ['metricCurrentSecretMatches', MetricName.MATCHED_CURRENT_SECRET, 'Sum'],
    ['metricPendingSecretMatches', MetricName.MATCHED_PENDING_SECRET, 'Sum'],
    ['metricPreviousSecretMatches', MetricName.MATCHED_PREVIOUS_SECRET, 'Sum'],
    ['metricRecovered', MetricName.RECOVERED, 'Sum'],
    ['metricUnknownSubmissions', MetricName.UNKNOWN_SUBMISSIONS, 'Sum'],
    ['metricStillPending', MetricName.STILL_PENDING, 'Sum'],
    ['metricOverdueSubmissions', MetricName.OVERDUE, 'Maximum'],
    ['metricSubmissionsNearDeadline', MetricName.NEAR_DEADLINE, 'Maximum'],
    ['metricPollRateLimited', MetricName.POLL_RATE_LIMITED, 'Sum'],
    ['metricPollErrors', MetricName.POLL_ERRORS, 'Sum'],
    ['metricEffectsDispatched', MetricName.EFFECTS_DISPATCHED, 'Sum'],
    ['metricEffectFailures', MetricName.EFFECT_FAILURES, 'Sum'],
    ['metricResourceUnavailable', MetricName.RESOURCE_UNAVAILABLE, 'Sum'],
    ['metricDeadLettered', MetricName.DEAD_LETTERED, 'Sum'],
    ['metricRefusedKeys', MetricName.REFUSED_KEYS, 'Sum'],
  ];

  test.each(emf)('%s: %s, %s over 5 minutes, dimension Inbox only', (method, name, statistic) => {
    const metric = (inbox[method] as any).call(inbox);
    expect(metric.namespace).toBe(METRIC_NAMESPACE);
    expect(metric.metricName).toBe(name);
    expect(metric.dimensions).toEqual({ Inbox: INBOX });
    expect(metric.statistic).toBe(statistic);
    expect(metric.period.toSeconds()).toBe(300);
  });

  test('every metric name in the contract has a method, written once on WebhookInboxMetrics or WebhookInboxBase', () => {
    expect(Object.getOwnPropertyNames(WebhookInbox.prototype).filter((name) => name.startsWith('metric'))).toEqual([]);
    const metricsMethods = Object.getOwnPropertyNames(WebhookInboxMetrics.prototype).filter((name) => name.startsWith('metric'));
    const baseMethods = Object.getOwnPropertyNames(WebhookInboxBase.prototype).filter((name) => name.startsWith('metric'));
    expect(baseMethods.filter((name) => metricsMethods.includes(name))).toEqual([]);
    const covered = new Set(
      [...metricsMethods, ...baseMethods]
        .filter((name) => name.startsWith('metric') && name !== 'metric')
        .map((name) => (inbox as any)[name]())
        .filter((metric) => metric?.namespace === METRIC_NAMESPACE)
        .map((metric) => metric.metricName),
    );
    expect(Object.values(MetricName).filter((name) => !covered.has(name))).toEqual([]);
  });

  test('queue, API and reconciler metrics name their resource', () => {
    const oldest = inbox.metricOldestMessageAge();
    expect([oldest.namespace, oldest.metricName, oldest.statistic]).toEqual(['AWS/SQS', 'ApproximateAgeOfOldestMessage', 'Maximum']);
    expect(stack.resolve(oldest.dimensions)).toEqual({ QueueName: stack.resolve(inbox.workQueue.queueName) });
    const depth = inbox.metricWorkQueueDepth();
    expect([depth.metricName, depth.statistic]).toEqual(['ApproximateNumberOfMessagesVisible', 'Maximum']);
    const dlq = inbox.metricDeadLetterQueueDepth()!;
    expect([dlq.metricName, dlq.statistic, dlq.period.toSeconds()]).toEqual(['ApproximateNumberOfMessagesVisible', 'Maximum', 60]);
    expect(stack.resolve(dlq.dimensions)).toEqual({ QueueName: stack.resolve(inbox.deadLetterQueue!.queueName) });
    const errors = inbox.metricReconcilerErrors();
    expect([errors.namespace, errors.metricName, errors.statistic]).toEqual(['AWS/Lambda', 'Errors', 'Sum']);
    const invocations = inbox.metricReconcilerInvocations();
    expect([invocations.namespace, invocations.metricName, invocations.statistic]).toEqual(['AWS/Lambda', 'Invocations', 'Sum']);
    expect(stack.resolve(invocations.dimensions)).toEqual({ FunctionName: stack.resolve(inbox.reconcilerFunction.functionName) });
    expect(stack.resolve(errors.dimensions)).toEqual({ FunctionName: stack.resolve(inbox.reconcilerFunction.functionName) });
    const server = inbox.metricVerifierServerErrors({ period: Duration.minutes(1) });
    expect([server.namespace, server.metricName, server.statistic, server.period.toSeconds()]).toEqual(['AWS/ApiGateway', '5xx', 'Sum', 60]);
    expect(stack.resolve(server.dimensions)).toEqual({ ApiId: stack.resolve(inbox.api.apiId) });
  });
});

describe('security checks', () => {
  test('cdk-nag AwsSolutions reports no unacknowledged finding with alarms to an encrypted topic and the dashboard', () => {
    const app = new App();
    const stack = new Stack(app, 'Nag');
    const key = new kms.Key(stack, 'PagerKey', { enableKeyRotation: true });
    const topic = new sns.Topic(stack, 'Pager', { masterKey: key, enforceSSL: true });
    new WebhookInbox(stack, 'Inbox', {
      providers: [WebhookProvider.answerline(), WebhookProvider.echonova()],
      alarms: { topic, signatureFailureThreshold: 20 },
      dashboard: { dashboardName: 'nag-inbox' },
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    let findings: string | undefined;
    try {
      app.synth();
    } catch (error) {
      const report = /found in: (\S+)/.exec((error as Error).message)?.[1];
      findings = report ? readFileSync(report, 'utf8') : (error as Error).message;
    }
    expect(findings).toBeUndefined();
  });
});
