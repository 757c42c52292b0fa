/** A settable clock and alarm resources written the way a resolved template states them. */
import type { AlarmResource } from '../../../src/aws/cloudwatch/evaluator';

export const MINUTE = 60_000;
/** A whole hour: every period of the tests starts on it. */
export const T0 = Date.UTC(2025, 0, 1);
export const ACCOUNT_ALARM_ARN = 'arn:aws:cloudwatch:us-east-1:000000000000:alarm:';
/** The stack the alarms are in, unless a test says otherwise. */
export const STACK = 'Checkout';

export class ManualClock {
  private now = T0;
  readonly read = (): number => this.now;

  set(at: number): void {
    this.now = at;
  }
}

export const NAMESPACE = 'Test';
export const DIMENSIONS = { Service: 'checkout' };

/** A single-metric alarm on Test/Errors {Service: checkout}, one-minute Sum, `>= 1`, overridable. */
export function metricAlarm(name: string, properties: Record<string, unknown> = {}): AlarmResource {
  return {
    stackName: STACK,
    logicalId: `${name}Alarm`,
    name,
    arn: `${ACCOUNT_ALARM_ARN}${name}`,
    type: 'AWS::CloudWatch::Alarm',
    properties: {
      Namespace: NAMESPACE,
      MetricName: 'Errors',
      Dimensions: Object.entries(DIMENSIONS).map(([Name, Value]) => ({ Name, Value })),
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      ...properties,
    },
  };
}

export function compositeAlarm(name: string, rule: string): AlarmResource {
  return {
    stackName: STACK,
    logicalId: `${name}Composite`,
    name,
    arn: `${ACCOUNT_ALARM_ARN}${name}`,
    type: 'AWS::CloudWatch::CompositeAlarm',
    properties: { AlarmName: name, AlarmRule: rule },
  };
}

/** A datum of Test/<name> {Service: checkout} in the given minute after T0 (a second into it). */
export function errorsAt(minute: number, value: number, name = 'Errors') {
  return { namespace: NAMESPACE, name, dimensions: DIMENSIONS, timestamp: T0 + minute * MINUTE + 1000, value };
}
