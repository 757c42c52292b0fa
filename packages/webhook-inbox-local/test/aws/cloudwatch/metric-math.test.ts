/**
 * Metric math alarms compare the result of their one returned expression with the threshold, and
 * the expression follows CloudWatch's documented rules: between two series a datapoint missing from
 * one counts 0, between a series and a number only existing datapoints are computed, a division by
 * zero drops the datapoint, FILL replaces missing datapoints, IF picks per timestamp (a missing
 * condition drops it, a missing true-branch value counts 0, a missing false-branch value drops it).
 */
import { AlarmDefinitionError, AlarmEvaluator, AlarmResource } from '../../../src/aws/cloudwatch/evaluator';
import { MetricStore } from '../../../src/aws/cloudwatch/metric-store';
import { ACCOUNT_ALARM_ARN, DIMENSIONS, errorsAt, ManualClock, MINUTE, NAMESPACE, T0 } from './support';

const metricStat = (id: string, name: string, stat = 'Sum', period = 60) => ({
  Id: id,
  MetricStat: { Metric: { Namespace: NAMESPACE, MetricName: name, Dimensions: [{ Name: 'Service', Value: DIMENSIONS.Service }] }, Period: period, Stat: stat },
  ReturnData: false,
});

/** An alarm on `expression` over m1 = Errors and m2 = Calls (one-minute sums), `>= threshold`, 1 of 1 unless overridden. */
function mathAlarm(expression: string, properties: Record<string, unknown> = {}, metrics?: unknown[]): AlarmResource {
  return {
    stackName: 'Checkout',
    logicalId: 'MathAlarm',
    name: 'math',
    arn: `${ACCOUNT_ALARM_ARN}math`,
    type: 'AWS::CloudWatch::Alarm',
    properties: {
      Metrics: metrics ?? [{ Id: 'e1', Expression: expression, ReturnData: true }, metricStat('m1', 'Errors'), metricStat('m2', 'Calls')],
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      ...properties,
    },
  };
}

/** The alarm's state at minute 5 after the given Errors and Calls datapoints (by minute). */
function stateAfter(alarm: AlarmResource, errors: Record<number, number>, calls: Record<number, number> = {}) {
  const clock = new ManualClock();
  const store = new MetricStore({ clock: clock.read });
  const evaluator = new AlarmEvaluator([alarm], { store, clock: clock.read });
  for (const [minute, value] of Object.entries(errors)) store.put(errorsAt(Number(minute), value));
  for (const [minute, value] of Object.entries(calls)) store.put(errorsAt(Number(minute), value, 'Calls'));
  clock.set(T0 + 5 * MINUTE);
  evaluator.evaluate();
  return evaluator.states()[0].state;
}

test('an error rate: errors / calls * 100 against 10 %', () => {
  const rate = mathAlarm('m1 / m2 * 100', { Threshold: 10 });
  expect(stateAfter(rate, { 4: 3 }, { 4: 20 })).toBe('ALARM');
  expect(stateAfter(rate, { 4: 1 }, { 4: 20 })).toBe('OK');
});

test('a division by zero drops the datapoint: no data rather than infinity', () => {
  expect(stateAfter(mathAlarm('m1 / m2', { TreatMissingData: 'missing' }), { 4: 3 }, { 4: 0 })).toBe('INSUFFICIENT_DATA');
});

test('between two series a missing datapoint counts 0; a timestamp missing from both stays missing', () => {
  // Calls missing at minute 4: errors - calls = 3 - 0.
  expect(stateAfter(mathAlarm('m1 - m2', { Threshold: 3 }), { 4: 3 })).toBe('ALARM');
  expect(stateAfter(mathAlarm('m1 + m2', { TreatMissingData: 'missing' }), {})).toBe('INSUFFICIENT_DATA');
});

test('between a series and a number only the datapoints that exist are computed', () => {
  // Without FILL, m1 + 5 has no datapoint where m1 has none.
  expect(stateAfter(mathAlarm('m1 + 5', { TreatMissingData: 'missing' }), {})).toBe('INSUFFICIENT_DATA');
});

test('FILL(m1, 0) makes missing data a datapoint: a "nothing happened" alarm can go to ALARM without TreatMissingData', () => {
  const quiet = mathAlarm('FILL(m1, 0)', { ComparisonOperator: 'LessThanThreshold', TreatMissingData: 'missing' });
  expect(stateAfter(quiet, {})).toBe('ALARM');
  expect(stateAfter(quiet, { 4: 2 })).toBe('OK');
  const filledFromSeries = mathAlarm('FILL(m1, m2)', { Threshold: 7 });
  expect(stateAfter(filledFromSeries, {}, { 4: 7 })).toBe('ALARM');
});

test('FILL(m1, REPEAT) carries the latest value forward', () => {
  // Range (minutes 0 to 4): 0, 5, -, -, -. Three of three must breach.
  const alarm = (expression: string) => mathAlarm(expression, { EvaluationPeriods: 3, Threshold: 5, TreatMissingData: 'notBreaching' });
  expect(stateAfter(alarm('FILL(m1, REPEAT)'), { 0: 0, 1: 5 })).toBe('ALARM');
  // Unfilled, the two real datapoints and one missing one treated as not breaching decide.
  expect(stateAfter(alarm('m1 * 1'), { 0: 0, 1: 5 })).toBe('OK');
});

test('IF(condition, a, b) with comparisons picks per timestamp', () => {
  expect(stateAfter(mathAlarm('IF(m1 > 10, 1, 0)'), { 4: 11 })).toBe('ALARM');
  expect(stateAfter(mathAlarm('IF(m1 > 10, 1, 0)'), { 4: 10 })).toBe('OK');
  // A missing condition datapoint is dropped, even with a number for both branches.
  expect(stateAfter(mathAlarm('IF(m1 > 10, 1, 0)', { TreatMissingData: 'missing' }), {}, { 4: 1 })).toBe('INSUFFICIENT_DATA');
  // True with the true-branch series missing there: 0.
  expect(stateAfter(mathAlarm('IF(m1 >= 1, m2, 5)', { ComparisonOperator: 'LessThanOrEqualToThreshold', Threshold: 0 }), { 4: 1 })).toBe('ALARM');
  // False with no false branch: dropped.
  expect(stateAfter(mathAlarm('IF(m1 > 10, m1)', { TreatMissingData: 'missing' }), { 4: 3 })).toBe('INSUFFICIENT_DATA');
  // False, and the false-branch series missing there: dropped.
  expect(stateAfter(mathAlarm('IF(m1 > 10, 1, m2)', { TreatMissingData: 'missing' }), { 4: 3 })).toBe('INSUFFICIENT_DATA');
  // AND, OR and != combine conditions; a scalar condition picks a whole branch.
  expect(stateAfter(mathAlarm('IF(m1 > 1 AND m2 != 0 || m1 == 100, 1, 0)'), { 4: 2 }, { 4: 3 })).toBe('ALARM');
  expect(stateAfter(mathAlarm('IF(m1 > 1 && m2 != 0, 1, 0)'), { 4: 2 }, { 4: 0 })).toBe('OK');
  expect(stateAfter(mathAlarm('IF(0, m1, m2)', { Threshold: 4 }), { 4: 9 }, { 4: 4 })).toBe('ALARM');
});

test('SUM, MAX, MIN and AVG of a list, per timestamp, a missing datapoint counting 0', () => {
  const at4 = (expression: string, threshold: number, errors: number | undefined, calls: number | undefined) =>
    stateAfter(mathAlarm(expression, { Threshold: threshold }), errors === undefined ? {} : { 4: errors }, calls === undefined ? {} : { 4: calls });
  expect(at4('SUM([m1, m2])', 5, 2, 3)).toBe('ALARM');
  expect(at4('SUM([m1, m2])', 5, 2, undefined)).toBe('OK');
  expect(at4('MAX([m1, m2, 4])', 4, 2, 3)).toBe('ALARM');
  expect(at4('MIN([m1, m2])', 0.5, undefined, 3)).toBe('OK');
  expect(at4('AVG([m1, m2])', 2, 4, undefined)).toBe('ALARM');
  expect(at4('AVG([m1, m2])', 2.5, 4, undefined)).toBe('OK');
  expect(at4('m1 + AVG([2, 4])', 4, 1, undefined)).toBe('ALARM');
});

test('ABS, CEIL, FLOOR, unary minus, ^ and precedence', () => {
  const at4 = (expression: string, threshold: number, errors: number, calls = 0) =>
    stateAfter(mathAlarm(expression, { Threshold: threshold }), { 4: errors }, { 4: calls });
  expect(at4('ABS(m1 - m2)', 5, 1, 6)).toBe('ALARM');
  expect(at4('CEIL(m1 / 4)', 1, 1)).toBe('ALARM');
  expect(at4('FLOOR(m1 / 4)', 1, 3)).toBe('OK');
  // 2 + 3 * 2 ^ 2 = 14; -2 ^ 2 = -4; 2 ^ 3 ^ 2 = 512; (2 + 3) * 2 = 10.
  expect(at4('2 + 3 * m1 ^ 2', 14, 2)).toBe('ALARM');
  expect(at4('2 + 3 * m1 ^ 2', 14.5, 2)).toBe('OK');
  expect(at4('-m1 ^ 2 + 5', 1, 2)).toBe('ALARM');
  expect(at4('-m1 ^ 2 + 5', 1.5, 2)).toBe('OK');
  expect(at4('m1 ^ 3 ^ 2', 512, 2)).toBe('ALARM');
  expect(at4('m1 ^ 3 ^ 2', 513, 2)).toBe('OK');
  expect(at4('(m1 + 3) * 2', 10, 2)).toBe('ALARM');
  expect(at4('m1 - 1 - 1', 1, 3)).toBe('ALARM');
  expect(at4('m1 - 1 - 1', 1.5, 3)).toBe('OK');
});

test('expressions may build on other expressions', () => {
  const metrics = [
    { Id: 'rate', Expression: 'errors / calls', ReturnData: false },
    { Id: 'percent', Expression: 'rate * 100', ReturnData: true },
    { ...metricStat('errors', 'Errors') },
    { ...metricStat('calls', 'Calls') },
  ];
  expect(stateAfter(mathAlarm('', { Threshold: 50 }, metrics), { 4: 1 }, { 4: 2 })).toBe('ALARM');
});

test('percentile and other statistics in MetricStat', () => {
  const metrics = [{ Id: 'e1', Expression: 'm1 * 1', ReturnData: true }, metricStat('m1', 'Errors', 'p50')];
  expect(stateAfter(mathAlarm('', { Threshold: 2 }, metrics), { 4: 1 })).toBe('OK');
});

describe('what CloudWatch would refuse, or what is not supported locally, is an error naming the alarm and the construct', () => {
  test.each([
    ['METRICS()', /resource MathAlarm \(AWS::CloudWatch::Alarm\): alarm math: query e1 expression "METRICS\(\)": function METRICS is not supported locally/],
    ['ANOMALY_DETECTION_BAND(m1)', /function ANOMALY_DETECTION_BAND is not supported locally/],
    ['FILL(m1, LINEAR)', /FILL\(\.\.\., LINEAR\) is not supported locally/],
    ['SUM(m1)', /SUM of a single time series is not supported locally/],
    ['SEARCH(\'{AWS/EC2}\', "Average")', /unexpected "'" at position 7/],
    ['m1 + unknown', /query e1 names unknown, which no query has as its Id/],
    ['1 + 2', /query e1 yields a number, not one time series/],
    ['[m1, m2]', /query e1 yields a list, not one time series/],
    ['m1 +', /ends where a value is expected/],
    ['(m1 + m2', /expected "\)" at the end/],
    ['m1 m2', /unexpected "m2" at position 3/],
    ['FILL(1, 0)', /FILL needs a time series to fill, got a number/],
    ['IF([m1], 1, 0)', /IF does not take lists/],
    ['ABS(m1, m2)', /ABS takes 1 arguments, got 2/],
    ['1 / 0 + m1', /a constant expression divides by zero/],
    ['REPEAT + m1', /REPEAT is not a value/],
  ])('%s', (expression, message) => {
    const attempt = () => new AlarmEvaluator([mathAlarm(expression)], { store: new MetricStore({ clock: () => T0 }), clock: () => T0 });
    expect(attempt).toThrow(AlarmDefinitionError);
    expect(attempt).toThrow(message);
  });

  test.each([
    [
      'two results',
      [
        { Id: 'e1', Expression: 'm1', ReturnData: true },
        { ...metricStat('m1', 'Errors'), ReturnData: true },
      ],
      /exactly one query must return data \(ReturnData\), got 2/,
    ],
    [
      'metrics of different periods',
      [{ Id: 'e1', Expression: 'm1 + m2', ReturnData: true }, metricStat('m1', 'Errors'), metricStat('m2', 'Calls', 'Sum', 300)],
      /must use the same period, got 60, 300/,
    ],
    [
      'a cycle',
      [{ Id: 'e1', Expression: 'e2', ReturnData: true }, { Id: 'e2', Expression: 'e1 + m1', ReturnData: false }, metricStat('m1', 'Errors')],
      /in a cycle: e1 -> e2 -> e1/,
    ],
    [
      'an id CloudWatch refuses',
      [{ Id: 'E1', Expression: 'm1', ReturnData: true }, metricStat('m1', 'Errors')],
      /query id "E1" must start with a lowercase letter/,
    ],
    ['a duplicate id', [{ Id: 'e1', Expression: 'm1', ReturnData: true }, metricStat('m1', 'Errors'), metricStat('m1', 'Calls')], /query id m1 is used twice/],
    [
      'a cross-account query',
      [
        { Id: 'e1', Expression: 'm1', ReturnData: true },
        { ...metricStat('m1', 'Errors'), AccountId: '111111111111' },
      ],
      /query m1: AccountId is not supported locally/,
    ],
    [
      'an unsupported statistic',
      [{ Id: 'e1', Expression: 'm1', ReturnData: true }, metricStat('m1', 'Errors', 'TM(10%:90%)')],
      /statistic TM\(10%:90%\) is not supported/,
    ],
  ])('%s', (_what, metrics, message) => {
    expect(() => new AlarmEvaluator([mathAlarm('', {}, metrics)], { store: new MetricStore({ clock: () => T0 }), clock: () => T0 })).toThrow(message);
  });

  test('Metrics together with a single-metric property', () => {
    expect(() => new AlarmEvaluator([mathAlarm('m1', { Period: 60 })], { store: new MetricStore({ clock: () => T0 }), clock: () => T0 })).toThrow(
      /resource MathAlarm \(AWS::CloudWatch::Alarm\): alarm math: Metrics cannot be combined with Period/,
    );
  });
});
