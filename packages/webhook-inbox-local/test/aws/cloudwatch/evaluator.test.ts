/**
 * Metric alarms change state as CloudWatch documents it. The oracle is the documentation's own
 * examples: the evaluation range of an alarm with 3 evaluation periods is the 5 latest completed
 * periods, and each row below is a range (oldest first; 0 within the threshold, X breaching,
 * - missing) with the state each missing-data treatment gives. Other rules are stated where tested.
 */
import { AlarmDefinitionError, AlarmEvaluator, AlarmResource, AlarmStateValue } from '../../../src/aws/cloudwatch/evaluator';
import { MetricStore } from '../../../src/aws/cloudwatch/metric-store';
import { DIMENSIONS, errorsAt, ManualClock, metricAlarm, MINUTE, NAMESPACE, STACK, T0 } from './support';

type Expected = AlarmStateValue | 'retain';

function setup(resources: AlarmResource[]) {
  const clock = new ManualClock();
  const store = new MetricStore({ clock: clock.read });
  const evaluator = new AlarmEvaluator(resources, { store, clock: clock.read });
  const stateOf = (name: string) => evaluator.states().find((status) => status.alarmName === name)!.state;
  /** Evaluates at `minute` minutes after T0; returns the transitions. */
  const at = (minute: number) => {
    clock.set(T0 + minute * MINUTE);
    return evaluator.evaluate();
  };
  return { clock, store, evaluator, stateOf, at };
}

const TREATMENTS = ['missing', 'ignore', 'breaching', 'notBreaching'] as const;

/** Rows of the documentation's tables: [range, datapoints to alarm, state for missing, ignore, breaching, notBreaching]. */
const DOCUMENTED: [string, number, Expected, Expected, Expected, Expected][] = [
  // 3 out of 3.
  ['0 - X - X', 3, 'OK', 'OK', 'OK', 'OK'],
  ['0 - - - -', 3, 'OK', 'OK', 'OK', 'OK'],
  ['- - - - -', 3, 'INSUFFICIENT_DATA', 'retain', 'ALARM', 'OK'],
  ['0 X X - X', 3, 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
  ['- - X - -', 3, 'ALARM', 'retain', 'ALARM', 'OK'],
  ['- - - - X', 3, 'INSUFFICIENT_DATA', 'retain', 'ALARM', 'OK'],
  ['X - - - -', 3, 'ALARM', 'retain', 'ALARM', 'OK'],
  // 2 out of 3.
  ['0 - X - X', 2, 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
  ['0 0 X 0 X', 2, 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
  ['0 - X - -', 2, 'OK', 'OK', 'ALARM', 'OK'],
  ['- - - - 0', 2, 'OK', 'OK', 'ALARM', 'OK'],
  ['- - - X -', 2, 'ALARM', 'retain', 'ALARM', 'OK'],
  ['- - - - X', 2, 'INSUFFICIENT_DATA', 'retain', 'ALARM', 'OK'],
];

describe.each(DOCUMENTED)('range %s, %d out of 3', (range, datapointsToAlarm, ...expected) => {
  test.each(TREATMENTS.map((treatment, index) => [treatment, expected[index]]))('TreatMissingData %s gives %s', (treatment, state) => {
    for (const prior of ['OK', 'ALARM'] as const) {
      const { store, stateOf, at } = setup([metricAlarm('a', { EvaluationPeriods: 3, DatapointsToAlarm: datapointsToAlarm, TreatMissingData: treatment })]);
      // Three datapoints at minutes 10 to 12 set the prior state; they are out of the range at minute 25.
      for (const minute of [10, 11, 12]) store.put(errorsAt(minute, prior === 'ALARM' ? 5 : 0));
      at(13);
      expect(stateOf('a')).toBe(prior);

      range.split(' ').forEach((point, index) => {
        if (point !== '-') store.put(errorsAt(20 + index, point === 'X' ? 5 : 0));
      });
      at(25);
      expect(stateOf('a')).toBe(state === 'retain' ? prior : state);
    }
  });
});

describe('evaluation: states, completed periods and the evaluation range', () => {
  test('an alarm starts in INSUFFICIENT_DATA, and a transition is reported once, with the reason and the description', () => {
    const { store, evaluator, at } = setup([metricAlarm('a', { AlarmDescription: 'errors: see the runbook' })]);
    expect(evaluator.states()).toEqual([
      expect.objectContaining({
        alarmName: 'a',
        stackName: STACK,
        logicalId: 'aAlarm',
        kind: 'metric',
        state: 'INSUFFICIENT_DATA',
        lastChange: T0,
        description: 'errors: see the runbook',
      }),
    ]);
    store.put(errorsAt(0, 3));
    const [transition, ...others] = at(1);
    expect(others).toEqual([]);
    expect(transition).toEqual({
      alarmName: 'a',
      stackName: STACK,
      logicalId: 'aAlarm',
      from: 'INSUFFICIENT_DATA',
      to: 'ALARM',
      reason: expect.stringContaining('[3 (2025-01-01T00:00:00.000Z)]'),
      description: 'errors: see the runbook',
      at: T0 + MINUTE,
    });
    expect(transition.reason).toContain('greater than or equal to the threshold (1)');
    expect(at(1)).toEqual([]);
    expect(at(1.5)).toEqual([]);
    expect(evaluator.states()[0]).toMatchObject({ state: 'ALARM', lastChange: T0 + MINUTE, reason: transition.reason });
  });

  test('only completed periods count: a datapoint of the current minute waits for the minute to end', () => {
    const { store, stateOf, at } = setup([metricAlarm('a', { TreatMissingData: 'notBreaching' })]);
    store.put(errorsAt(5, 3));
    at(5.9);
    expect(stateOf('a')).toBe('OK');
    at(6);
    expect(stateOf('a')).toBe('ALARM');
  });

  test('periods roll with each minute: a 5-minute period ending now covers the last five whole minutes', () => {
    const { store, stateOf, at } = setup([metricAlarm('a', { Period: 300, Threshold: 4, TreatMissingData: 'notBreaching' })]);
    // 1 at each of minutes 2 to 5: minutes [1, 6) and [2, 7) sum to 4, minutes [3, 8) to 3.
    for (const minute of [2, 3, 4, 5]) store.put(errorsAt(minute, 1));
    at(5);
    expect(stateOf('a')).toBe('OK');
    at(6);
    expect(stateOf('a')).toBe('ALARM');
    at(7);
    expect(stateOf('a')).toBe('ALARM');
    at(8);
    expect(stateOf('a')).toBe('OK');
  });

  test('after the metric stops, the last datapoint is evaluated again until it leaves the range (M + 2 periods)', () => {
    const { store, stateOf, at } = setup([metricAlarm('a', { TreatMissingData: 'notBreaching' })]);
    store.put(errorsAt(0, 2));
    at(1);
    expect(stateOf('a')).toBe('ALARM');
    at(3);
    expect(stateOf('a')).toBe('ALARM');
    at(4);
    expect(stateOf('a')).toBe('OK');
  });

  test('high-resolution periods: a 10-second alarm evaluates every 10 seconds', () => {
    const { clock, store, evaluator, stateOf } = setup([metricAlarm('a', { Period: 10, TreatMissingData: 'notBreaching' })]);
    store.put({ namespace: NAMESPACE, name: 'Errors', dimensions: DIMENSIONS, timestamp: T0 + 21_000, value: 1 });
    clock.set(T0 + 29_999);
    evaluator.evaluate();
    expect(stateOf('a')).toBe('OK');
    clock.set(T0 + 30_000);
    evaluator.evaluate();
    expect(stateOf('a')).toBe('ALARM');
  });
});

describe('evaluation: comparisons, statistics and which datapoints are read', () => {
  test.each([
    ['GreaterThanOrEqualToThreshold', [1, 2], [0]],
    ['GreaterThanThreshold', [2], [1, 0]],
    ['LessThanThreshold', [0], [1, 2]],
    ['LessThanOrEqualToThreshold', [0, 1], [2]],
  ])('%s against threshold 1', (operator, breaching, within) => {
    for (const [values, state] of [
      [breaching, 'ALARM'],
      [within, 'OK'],
    ] as const) {
      for (const value of values) {
        const { store, stateOf, at } = setup([metricAlarm('a', { ComparisonOperator: operator })]);
        store.put(errorsAt(0, value));
        at(1);
        expect(stateOf('a')).toBe(state);
      }
    }
  });

  test('Statistic over the period: Average, Maximum, SampleCount', () => {
    const alarms = [
      metricAlarm('average', { Statistic: 'Average', Threshold: 3 }),
      metricAlarm('maximum', { Statistic: 'Maximum', Threshold: 5 }),
      metricAlarm('count', { Statistic: 'SampleCount', Threshold: 4 }),
    ];
    const { store, stateOf, at } = setup(alarms);
    for (const value of [1, 2, 6]) store.put(errorsAt(0, value));
    at(1);
    // Average 3, maximum 6, 3 samples.
    expect([stateOf('average'), stateOf('maximum'), stateOf('count')]).toEqual(['ALARM', 'ALARM', 'OK']);
  });

  test('ExtendedStatistic percentiles: p90 of 1..10 is 9', () => {
    const { store, stateOf, at } = setup([
      metricAlarm('p90at9', { Statistic: undefined, ExtendedStatistic: 'p90', Threshold: 9 }),
      metricAlarm('p90above9', { Statistic: undefined, ExtendedStatistic: 'p90', Threshold: 9, ComparisonOperator: 'GreaterThanThreshold' }),
      metricAlarm('p99.9', { Statistic: undefined, ExtendedStatistic: 'p99.9', Threshold: 10 }),
    ]);
    for (let value = 1; value <= 10; value++) store.put(errorsAt(0, value));
    at(1);
    expect([stateOf('p90at9'), stateOf('p90above9'), stateOf('p99.9')]).toEqual(['ALARM', 'OK', 'ALARM']);
  });

  test("the alarm's Dimensions name the whole metric: datapoints with another dimension set do not count", () => {
    const { store, stateOf, at } = setup([metricAlarm('a', { TreatMissingData: 'notBreaching' })]);
    store.put({ ...errorsAt(0, 5), dimensions: { ...DIMENSIONS, Provider: 'answerline' } });
    store.put({ ...errorsAt(0, 5), dimensions: {} });
    at(1);
    expect(stateOf('a')).toBe('OK');
  });

  test('with a Unit, the alarm reads only datapoints published in that unit', () => {
    const { store, stateOf, at } = setup([metricAlarm('a', { Unit: 'Milliseconds', Threshold: 100, Statistic: 'Maximum' })]);
    store.put({ ...errorsAt(0, 500), unit: 'Count' });
    store.put({ ...errorsAt(0, 50), unit: 'Milliseconds' });
    at(1);
    expect(stateOf('a')).toBe('OK');
  });

  test('an alarm on an AWS/DynamoDB metric always ignores missing data', () => {
    const { stateOf, at } = setup([metricAlarm('a', { Namespace: 'AWS/DynamoDB', TreatMissingData: 'breaching' })]);
    at(10);
    expect(stateOf('a')).toBe('INSUFFICIENT_DATA');
  });
});

describe('definitions that cannot be evaluated faithfully are refused, naming the alarm and the construct', () => {
  test.each([
    [
      { ComparisonOperator: 'LessThanLowerOrGreaterThanUpperThreshold' },
      /resource aAlarm \(AWS::CloudWatch::Alarm\): alarm a: ComparisonOperator LessThanLowerOrGreaterThanUpperThreshold needs an anomaly detection band/,
    ],
    [{ ComparisonOperator: 'GreaterThanUpperThreshold' }, /GreaterThanUpperThreshold needs an anomaly detection band/],
    [{ ThresholdMetricId: 'ad1' }, /resource aAlarm \(AWS::CloudWatch::Alarm\): alarm a: ThresholdMetricId is not supported locally/],
    [{ Statistic: undefined, ExtendedStatistic: 'tm90' }, /resource aAlarm \(AWS::CloudWatch::Alarm\): alarm a: statistic tm90 is not supported/],
    [
      { Statistic: undefined, ExtendedStatistic: 'p95', EvaluateLowSampleCountPercentile: 'ignore' },
      /EvaluateLowSampleCountPercentile "ignore" is not supported locally/,
    ],
    [{ Statistic: 'p95' }, /Statistic p95 is not one of/],
    [{ ExtendedStatistic: 'p95' }, /exactly one of Statistic and ExtendedStatistic/],
    [{ DatapointsToAlarm: 2 }, /DatapointsToAlarm \(2\) exceeds EvaluationPeriods \(1\)/],
    [{ Period: 45 }, /Period 45 must be 10, 30 or a multiple of 60 seconds/],
    [{ TreatMissingData: 'zero' }, /TreatMissingData zero is not one of/],
    [{ Threshold: { Ref: 'Limit' } }, /Threshold must be a number/],
    [{ Dimensions: [{ Name: 'Service', Value: { 'Fn::GetAtt': ['Queue', 'QueueName'] } }] }, /dimension .* is not a resolved Name and Value/],
  ])('%j', (overrides, message) => {
    const attempt = () => setup([metricAlarm('a', overrides)]);
    expect(attempt).toThrow(AlarmDefinitionError);
    expect(attempt).toThrow(message);
  });

  test('a resource that is not an alarm, and two alarms with one name', () => {
    expect(() => setup([{ ...metricAlarm('a'), type: 'AWS::SNS::Topic' }])).toThrow(
      /resource aAlarm \(AWS::SNS::Topic\): alarm a: resource type AWS::SNS::Topic is not an alarm/,
    );
    expect(() => setup([metricAlarm('a'), { ...metricAlarm('a'), logicalId: 'Other' }])).toThrow(
      /resource Other \(AWS::CloudWatch::Alarm\): alarm a: its name a is also the name of Checkout\/aAlarm/,
    );
  });

  test('a logical id is unique within its stack only: alarms of two stacks with one logical id are two alarms, two in one stack an error', () => {
    // Each stack names its alarm (`<stack>-<logical id>`, as CloudFormation does): two names, two ARNs.
    const inStack = (stackName: string) => ({ ...metricAlarm(`${stackName}-a`), stackName, logicalId: 'aAlarm' });
    const { store, evaluator, at } = setup([inStack('Dev'), { ...inStack('Prod'), properties: { ...inStack('Prod').properties, Threshold: 10 } }]);
    store.put(errorsAt(0, 3));
    expect(at(1).map((transition) => [transition.stackName, transition.logicalId, transition.to])).toEqual([
      ['Dev', 'aAlarm', 'ALARM'],
      ['Prod', 'aAlarm', 'OK'],
    ]);
    expect(evaluator.states().map((status) => [status.stackName, status.state])).toEqual([
      ['Dev', 'ALARM'],
      ['Prod', 'OK'],
    ]);
    expect(() => setup([inStack('Dev'), { ...inStack('Dev'), name: 'other', arn: `${inStack('Dev').arn}-other` }])).toThrow(
      /^stack Dev, resource aAlarm \(AWS::CloudWatch::Alarm\): alarm other: its stack and logical id Dev\/aAlarm is also the stack and logical id of Dev\/aAlarm$/,
    );
  });
});
