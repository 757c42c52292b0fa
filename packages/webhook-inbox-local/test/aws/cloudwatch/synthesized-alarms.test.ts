/**
 * The alarms the construct synthesizes, evaluated locally from the template itself: the example
 * app's stack is synthesized, its Alarm and CompositeAlarm resources resolved, and datapoints fed
 * as the handlers (through their telemetry) and AWS (Lambda invocations, queue depth) publish them.
 *
 * What CloudWatch does, stated here as the oracle: the alarms evaluate one completed period ending
 * at the latest whole minute; a real datapoint still inside the evaluation range (EvaluationPeriods
 * + 2 periods) is evaluated again after its metric stops, and only when none is left does
 * TreatMissingData decide. The dead-deliveries composite is in ALARM while either child is.
 */
import { App, Stack } from 'aws-cdk-lib';
import { CfnAlarm, CfnCompositeAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { WebhookInbox } from '../../../../../lib';
import { Telemetry } from '../../../../../lambda/shared/runtime/telemetry';
import { parseEmfLine } from '../../../src/aws/cloudwatch/emf';
import { AlarmEvaluator, AlarmResource, AlarmTransition } from '../../../src/aws/cloudwatch/evaluator';
import { MetricStore } from '../../../src/aws/cloudwatch/metric-store';
import { pseudoParameters, resolveIntrinsics, resolveString, TemplateBinding } from '../../../src/aws/cloudformation/intrinsics';
import { ACCOUNT_ALARM_ARN, ManualClock, MINUTE, T0 } from './support';

const ALARM_TYPES = ['AWS::CloudWatch::Alarm', 'AWS::CloudWatch::CompositeAlarm'];

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

const app = new App();
const stack = new Stack(app, 'WebhookInboxExample');
const inbox = new WebhookInbox(stack, 'Answers');
// An inbox with a submission ledger: its submission alarms exist.
inbox.alarms.watchSubmissions();
const resources = (app.synth().getStackByName(stack.stackName).template as { Resources: Record<string, TemplateResource> }).Resources;

/** CloudFormation names an alarm without an AlarmName itself; locally its logical id stands for that name. */
const alarmName = (logicalId: string) => (resources[logicalId].Properties?.AlarmName as string | undefined) ?? logicalId;
const binding: TemplateBinding = {
  resources: {},
  pseudo: pseudoParameters('000000000000', 'us-east-1', stack.stackName),
  fallback: (logicalId, attribute) => {
    if (ALARM_TYPES.includes(resources[logicalId]?.Type)) return attribute === 'Arn' ? `${ACCOUNT_ALARM_ARN}${alarmName(logicalId)}` : alarmName(logicalId);
    return attribute === undefined ? logicalId : `${logicalId}.${attribute}`;
  },
};
const alarms: AlarmResource[] = Object.entries(resources)
  .filter(([, resource]) => ALARM_TYPES.includes(resource.Type))
  .map(([logicalId, resource]) => ({
    stackName: stack.stackName,
    logicalId,
    name: alarmName(logicalId),
    arn: `${ACCOUNT_ALARM_ARN}${alarmName(logicalId)}`,
    type: resource.Type,
    properties: resolveIntrinsics(resource.Properties ?? {}, binding) as Record<string, unknown>,
  }));

const idOf = (alarm: CfnAlarm | CfnCompositeAlarm | undefined) => stack.getLogicalId(alarm!);
const DEAD_LETTERED = idOf(inbox.alarms.deadLettered?.node.defaultChild as CfnAlarm);
const QUEUE_DEPTH = idOf(inbox.alarms.deadLetterQueueDepth?.node.defaultChild as CfnAlarm);
const NOT_RUNNING = idOf(inbox.alarms.reconcilerNotRunning?.node.defaultChild as CfnAlarm);
const NEAR_DEADLINE = idOf(inbox.alarms.submissionsNearDeadline?.node.defaultChild as CfnAlarm);
const DEAD_DELIVERIES = idOf(inbox.alarms.deadDeliveries?.node.defaultChild as CfnCompositeAlarm);
const QUEUE_DELAY = idOf(inbox.alarms.queueDelay?.node.defaultChild as CfnAlarm);
const SWEEP_LAG = idOf(inbox.alarms.sweepLag?.node.defaultChild as CfnAlarm);
const WATCHED = [DEAD_LETTERED, QUEUE_DEPTH, NOT_RUNNING, DEAD_DELIVERIES];

const reconcilerName = resolveString(stack.resolve(inbox.reconcilerFunction.functionName), binding);
const deadLetterQueueName = resolveString(stack.resolve(inbox.deadLetterQueue!.queueName), binding);

function setup() {
  const clock = new ManualClock();
  const store = new MetricStore({ clock: clock.read });
  const evaluator = new AlarmEvaluator(alarms, { store, clock: clock.read });
  /** What a handler's telemetry publishes at `at` for the counts `count` makes. */
  const publish = (at: number, count: (telemetry: Telemetry) => void) => {
    const lines: string[] = [];
    const telemetry = new Telemetry(
      inbox.inboxName,
      (line) => lines.push(line),
      () => at,
    );
    count(telemetry);
    telemetry.flush();
    store.putAll(lines.flatMap(parseEmfLine));
  };
  /** The processor dead-letters one row. */
  const deadLetterRow = (at: number) => publish(at, (telemetry) => telemetry.count('DeadLettered', 'answerline'));
  /** Rows whose first attempt started `delaysMs` after their receipt. */
  const rowsStarted = (at: number, delaysMs: readonly number[]) =>
    publish(at, (telemetry) => {
      for (const delay of delaysMs) telemetry.duration('QueueDelay', 'answerline', delay);
    });
  const reconcilerInvoked = (at: number) =>
    store.put({ namespace: 'AWS/Lambda', name: 'Invocations', dimensions: { FunctionName: reconcilerName }, timestamp: at, value: 1, unit: 'Count' });
  const queueDepth = (at: number, value: number) =>
    store.put({
      namespace: 'AWS/SQS',
      name: 'ApproximateNumberOfMessagesVisible',
      dimensions: { QueueName: deadLetterQueueName },
      timestamp: at,
      value,
      unit: 'Count',
    });
  /** Evaluates every minute up to `lastMinute`, as the twin would; the watched alarms' transitions are in template order, composites last. */
  const runUntil = (lastMinute: number, each: (minute: number) => void = () => {}) => {
    const seen: [number, string, string][] = [];
    const all: AlarmTransition[] = [];
    for (let minute = 0; minute <= lastMinute; minute++) {
      each(minute);
      clock.set(T0 + minute * MINUTE);
      const transitions = evaluator.evaluate();
      all.push(...transitions);
      for (const transition of transitions) if (WATCHED.includes(transition.logicalId)) seen.push([minute, transition.logicalId, transition.to]);
    }
    return { seen, all };
  };
  /** What one reconciler run's telemetry publishes: 0 near-deadline submissions for the inbox, and `near` for the provider when any. */
  const reconcilerRun = (at: number, near: number) =>
    publish(at, (telemetry) => {
      telemetry.count('SubmissionsNearDeadline', undefined, 0);
      for (let i = 0; i < near; i++) telemetry.count('SubmissionsNearDeadline', 'answerline');
    });
  /** What one reconciler run's sweep publishes: how far, in seconds, its watermark lagged its cutoff at the end. */
  const sweepEnded = (at: number, lagSeconds: number) => publish(at, (telemetry) => telemetry.seconds('SweepLag', undefined, lagSeconds));
  return { evaluator, deadLetterRow, rowsStarted, reconcilerInvoked, queueDepth, reconcilerRun, sweepEnded, runUntil };
}

test('every synthesized alarm is one the local evaluator reproduces', () => {
  expect(alarms.map((alarm) => alarm.type).sort()).toEqual([...Array(13).fill('AWS::CloudWatch::Alarm'), 'AWS::CloudWatch::CompositeAlarm']);
  const { evaluator } = setup();
  expect(evaluator.states().every((status) => status.state === 'INSUFFICIENT_DATA')).toBe(true);
});

test('a dead-lettered row raises dead-deliveries; the reconciler alarm follows its invocations, breaching when they stop', () => {
  const { evaluator, deadLetterRow, reconcilerInvoked, runUntil } = setup();
  const { seen, all } = runUntil(200, (minute) => {
    // The reconciler runs every 5 minutes for two hours, then stops; a row is dead-lettered at 00:30:01.
    if (minute <= 120 && minute % 5 === 0) reconcilerInvoked(T0 + minute * MINUTE + 1000);
    if (minute === 30) deadLetterRow(T0 + 30 * MINUTE + 1000);
  });

  expect(seen).toEqual([
    // No data: count alarms are not breaching, and no invocation at all is breaching.
    [0, QUEUE_DEPTH, 'OK'],
    [0, DEAD_LETTERED, 'OK'],
    [0, NOT_RUNNING, 'ALARM'],
    [0, DEAD_DELIVERIES, 'OK'],
    // The minute ending 00:01 holds the 00:00 invocation: a run clears it a minute later.
    [1, NOT_RUNNING, 'OK'],
    // The minute [00:30, 00:31) holds the dead-lettered row; the composite follows in the same evaluation.
    [31, DEAD_LETTERED, 'ALARM'],
    [31, DEAD_DELIVERIES, 'ALARM'],
    // That datapoint stays in the 3-period range until 00:34, when missing data is not breaching again.
    [34, DEAD_LETTERED, 'OK'],
    [34, DEAD_DELIVERIES, 'OK'],
    // The last invocation (02:00:01) leaves the 62-minute range (60 one-minute periods + 2) at 03:03:
    // an alarm on an hour's silence fires an hour and a few minutes after the last run, not earlier.
    [183, NOT_RUNNING, 'ALARM'],
  ]);
  const raised = all.find((transition) => transition.logicalId === DEAD_DELIVERIES && transition.to === 'ALARM')!;
  expect(raised.alarmName).toBe(resources[DEAD_DELIVERIES].Properties!.AlarmName);
  expect(raised.description).toContain('docs/RUNBOOK.md#dead-deliveries');
  expect(raised.reason).toContain(`${ACCOUNT_ALARM_ARN}${DEAD_LETTERED} is ALARM`);
  expect(evaluator.states().find((status) => status.logicalId === NOT_RUNNING)).toMatchObject({
    state: 'ALARM',
    reason: expect.stringContaining('treated as [Breaching]'),
    description: expect.stringContaining('the reconciler was not invoked for 1 hour'),
  });
});

test('the dead-letter queue holding a message raises dead-deliveries too', () => {
  const { queueDepth, runUntil } = setup();
  const { seen } = runUntil(12, (minute) => {
    // CloudWatch samples the queue every minute: empty, then one message from 00:05 to 00:07.
    queueDepth(T0 + minute * MINUTE + 1000, minute >= 5 && minute <= 7 ? 1 : 0);
  });
  expect(seen.filter(([, logicalId]) => logicalId !== NOT_RUNNING)).toEqual([
    [0, QUEUE_DEPTH, 'OK'],
    [0, DEAD_LETTERED, 'OK'],
    [0, DEAD_DELIVERIES, 'OK'],
    [6, QUEUE_DEPTH, 'ALARM'],
    [6, DEAD_DELIVERIES, 'ALARM'],
    [9, QUEUE_DEPTH, 'OK'],
    [9, DEAD_DELIVERIES, 'OK'],
  ]);
});

test('a submission counted near its deadline raises the near-deadline alarm before the deadline, and it clears once none is', () => {
  const { evaluator, reconcilerRun, runUntil } = setup();
  // A deadline at 00:30 with the default 10-minute margin: the run at 00:20 finds the submission
  // inside the margin and unread; at 00:30 it is settled (unavailable or read), and no run counts it again.
  const DEADLINE_MINUTE = 30;
  const { all } = runUntil(45, (minute) => {
    if (minute % 5 === 0) reconcilerRun(T0 + minute * MINUTE + 1000, minute >= DEADLINE_MINUTE - 10 && minute < DEADLINE_MINUTE ? 1 : 0);
  });
  const transitions = all.filter((transition) => transition.logicalId === NEAR_DEADLINE).map((transition) => [transition.at, transition.to]);
  const raised = transitions.find(([, to]) => to === 'ALARM');
  expect(raised).toBeDefined();
  // The rule stated here: the alarm is raised before the deadline, not after it.
  expect(raised![0] as number).toBeLessThan(T0 + DEADLINE_MINUTE * MINUTE);
  expect(transitions.at(-1)![1]).toBe('OK');
  expect(evaluator.states().find((status) => status.logicalId === NEAR_DEADLINE)!.description).toContain('docs/RUNBOOK.md#submissions-near-deadline');
});

describe('the queue-delay alarm judges the p99 of the values the processor emits, not their maximum', () => {
  // CloudWatch's p99 of n values: the value at rank ceil(0.99 × n) in ascending order. Of 10 values
  // that is the largest; of 101 values the 100th, so one outlier among 101 leaves it untouched.
  const queueDelayTransitions = (delaysMs: readonly number[]) => {
    const { rowsStarted, runUntil } = setup();
    const { all } = runUntil(25, (minute) => {
      if (minute === 2) rowsStarted(T0 + 2 * MINUTE + 1000, delaysMs);
    });
    return all.filter((transition) => transition.logicalId === QUEUE_DELAY).map((transition) => [(transition.at - T0) / MINUTE, transition.to]);
  };

  test('one row in ten that waited 3 minutes raises it as soon as a 5-minute period holds it', () => {
    const slow = 3 * MINUTE;
    expect(queueDelayTransitions([...Array(9).fill(400), slow])).toEqual([
      [0, 'OK'],
      // The 5-minute period ending at 00:03 is the first to hold the values of 00:02:01.
      [3, 'ALARM'],
      // They stay in the evaluation range (1 + 2 periods, 15 minutes) until 00:17; then missing data is not breaching.
      [18, 'OK'],
    ]);
  });

  test('one row in 101 that waited 3 minutes does not: the p99 is 400 ms', () => {
    expect(queueDelayTransitions([...Array(100).fill(400), 3 * MINUTE])).toEqual([[0, 'OK']]);
  });
});

test('a sweep whose watermark lags 15 minutes or more at the end of a run raises the sweep-lag alarm; runs that catch up clear it', () => {
  const { sweepEnded, runUntil } = setup();
  // Runs every 5 minutes: caught up, then falling behind (8, 16, 24 minutes), then catching up again.
  const lagsByRun = [0, 0, 480, 960, 1440, 600, 0, 0, 0, 0, 0];
  const { all } = runUntil(55, (minute) => {
    if (minute % 5 === 0) sweepEnded(T0 + minute * MINUTE + 1000, lagsByRun[minute / 5]);
  });
  const transitions = all.filter((transition) => transition.logicalId === SWEEP_LAG).map((transition) => [(transition.at - T0) / MINUTE, transition.to]);
  // The rule stated here: the first run that ends 15 minutes behind (00:15:01) pages within the 5-minute period that holds it; the alarm clears once runs report less.
  expect(transitions[0]).toEqual([0, 'OK']);
  const raised = transitions.find(([, to]) => to === 'ALARM');
  expect(raised![0]).toBeGreaterThanOrEqual(16);
  expect(raised![0]).toBeLessThanOrEqual(20);
  expect(transitions.at(-1)![1]).toBe('OK');
  expect(all.find((transition) => transition.logicalId === SWEEP_LAG && transition.to === 'ALARM')!.description).toContain('docs/RUNBOOK.md#sweep-lag');
});
