/**
 * A composite alarm is in ALARM while its rule is TRUE and OK while it is FALSE. ALARM(x), OK(x) and
 * INSUFFICIENT_DATA(x) test the state of the alarm x names (by name or ARN, quoted or not); NOT binds
 * tighter than AND, AND tighter than OR. A composite is evaluated after the alarms it names, in the
 * same evaluation.
 */
import { AlarmDefinitionError, AlarmEvaluator, AlarmResource } from '../../../src/aws/cloudwatch/evaluator';
import { MetricStore } from '../../../src/aws/cloudwatch/metric-store';
import { ACCOUNT_ALARM_ARN, compositeAlarm, errorsAt, ManualClock, metricAlarm, MINUTE, T0 } from './support';

/** Alarms `high` (Errors >= 1), `low` (Calls >= 1) and `unknown` (Latency, never published), all one minute. */
const children = [
  metricAlarm('high', { TreatMissingData: 'notBreaching' }),
  metricAlarm('low', { MetricName: 'Calls', TreatMissingData: 'notBreaching' }),
  metricAlarm('unknown', { MetricName: 'Latency' }),
];

function setup(composites: AlarmResource[]) {
  const clock = new ManualClock();
  const store = new MetricStore({ clock: clock.read });
  const evaluator = new AlarmEvaluator([...composites, ...children], { store, clock: clock.read });
  const stateOf = (name: string) => evaluator.states().find((status) => status.alarmName === name)!.state;
  return { clock, store, evaluator, stateOf };
}

/** The rule's state once `high` and `low` are in the given states (and `unknown` in INSUFFICIENT_DATA). */
function ruleState(rule: string, high: 'ALARM' | 'OK', low: 'ALARM' | 'OK') {
  const { clock, store, evaluator, stateOf } = setup([compositeAlarm('rule', rule)]);
  store.put(errorsAt(0, high === 'ALARM' ? 1 : 0));
  store.put(errorsAt(0, low === 'ALARM' ? 1 : 0, 'Calls'));
  clock.set(T0 + MINUTE);
  evaluator.evaluate();
  expect([stateOf('high'), stateOf('low'), stateOf('unknown')]).toEqual([high, low, 'INSUFFICIENT_DATA']);
  return stateOf('rule');
}

test.each([
  ['ALARM("high") OR ALARM("low")', [false, true, true, true]],
  ['ALARM("high") AND ALARM("low")', [false, false, false, true]],
  ['ALARM(high) AND NOT ALARM(low)', [false, false, true, false]],
  ['NOT (ALARM("high") OR ALARM("low"))', [true, false, false, false]],
  ['OK("high") AND OK("low")', [true, false, false, false]],
  ['INSUFFICIENT_DATA("unknown") AND ALARM("high")', [false, false, true, true]],
  [`ALARM("${ACCOUNT_ALARM_ARN}high") OR ALARM(${ACCOUNT_ALARM_ARN}low)`, [false, true, true, true]],
  // NOT before AND before OR: (NOT high) OR (low AND high).
  ['NOT ALARM("high") OR ALARM("low") AND ALARM("high")', [true, true, false, true]],
  ['ALARM("high") OR ALARM("low") AND FALSE', [false, false, true, true]],
  ['(ALARM("high") OR ALARM("low")) AND FALSE', [false, false, false, false]],
  ['TRUE', [true, true, true, true]],
  ['FALSE OR ALARM("low")', [false, true, false, true]],
])('%s', (rule, expected) => {
  const cases = [
    ['OK', 'OK'],
    ['OK', 'ALARM'],
    ['ALARM', 'OK'],
    ['ALARM', 'ALARM'],
  ] as const;
  expect(cases.map(([high, low]) => ruleState(rule, high, low))).toEqual(expected.map((holds) => (holds ? 'ALARM' : 'OK')));
});

test('a composite starts in INSUFFICIENT_DATA and follows its children in the same evaluation, after them', () => {
  // `outer` is listed before `inner`, which it names.
  const { clock, store, evaluator } = setup([compositeAlarm('outer', 'ALARM("inner")'), compositeAlarm('inner', 'ALARM("high")')]);
  expect(evaluator.states().map((status) => [status.alarmName, status.state])).toEqual([
    ['high', 'INSUFFICIENT_DATA'],
    ['low', 'INSUFFICIENT_DATA'],
    ['unknown', 'INSUFFICIENT_DATA'],
    ['inner', 'INSUFFICIENT_DATA'],
    ['outer', 'INSUFFICIENT_DATA'],
  ]);
  clock.set(T0 + MINUTE);
  expect(evaluator.evaluate().map((transition) => [transition.alarmName, transition.to])).toEqual([
    ['high', 'OK'],
    ['low', 'OK'],
    ['inner', 'OK'],
    ['outer', 'OK'],
  ]);
  store.put(errorsAt(1, 4));
  clock.set(T0 + 2 * MINUTE);
  const transitions = evaluator.evaluate();
  expect(transitions.map((transition) => [transition.alarmName, transition.from, transition.to])).toEqual([
    ['high', 'OK', 'ALARM'],
    ['inner', 'OK', 'ALARM'],
    ['outer', 'OK', 'ALARM'],
  ]);
  expect(transitions[1].reason).toBe('Alarm rule ALARM("high") is TRUE: high is ALARM');
  expect(evaluator.evaluate()).toEqual([]);
});

describe('rules that cannot be evaluated are refused, naming the composite and the construct', () => {
  test.each([
    [
      'ALARM("missing-alarm")',
      /resource ruleComposite \(AWS::CloudWatch::CompositeAlarm\): alarm rule: AlarmRule names missing-alarm, which is no alarm of the template/,
    ],
    ['AT_LEAST(2, ALARM, ("high", "low"))', /AlarmRule: "AT_LEAST" at position 0 of .* is not supported/],
    ['ALARM("high") and ALARM("low")', /AlarmRule: unexpected "and ALARM\(\\"low\\"\)"/],
    ['ALARM("high"', /AlarmRule: expected "\)" at the end/],
    ['ALARM("high) OR ALARM(low)', /AlarmRule: unterminated alarm name/],
    ['ALARM()', /AlarmRule: ALARM\(\) names no alarm/],
    ['ALARM("high") OR', /AlarmRule: "ALARM\(\\"high\\"\) OR" ends where an alarm state, TRUE, FALSE, NOT or "\(" is expected/],
  ])('%s', (rule, message) => {
    const attempt = () => setup([compositeAlarm('rule', rule)]);
    expect(attempt).toThrow(AlarmDefinitionError);
    expect(attempt).toThrow(message);
  });

  test('composites that name each other in a cycle', () => {
    expect(() => setup([compositeAlarm('a', 'ALARM("b")'), compositeAlarm('b', 'ALARM("a") OR ALARM("high")')])).toThrow(
      /composite alarms name each other in a cycle: a -> b -> a/,
    );
  });

  test('an AlarmRule left unresolved', () => {
    const unresolved = { ...compositeAlarm('rule', ''), properties: { AlarmRule: { 'Fn::Join': ['', ['ALARM("', 'high', '")']] } } };
    expect(() => setup([unresolved])).toThrow(/resource ruleComposite \(AWS::CloudWatch::CompositeAlarm\): alarm rule: AlarmRule must be resolved text/);
  });
});
