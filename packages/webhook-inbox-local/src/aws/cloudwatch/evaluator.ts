/**
 * Evaluates a synthesized template's CloudWatch alarms against the twin's metrics, as CloudWatch
 * documents it. Each alarm starts in INSUFFICIENT_DATA. A metric alarm reads its statistic (or its
 * metric math result) for the completed periods of its evaluation range, which is longer than its
 * EvaluationPeriods (M) so that missing datapoints can be looked past:
 *
 * - with at least M real datapoints in the range, the latest M decide and TreatMissingData plays
 *   no part: ALARM when DatapointsToAlarm (N) of them breach, OK otherwise;
 * - with none, `missing` gives INSUFFICIENT_DATA, `ignore` keeps the state, `breaching` ALARM and
 *   `notBreaching` OK;
 * - with fewer than M, every real datapoint counts and only as many missing ones as needed are
 *   filled in: as breaching or not for those two treatments; for `missing` and `ignore` they count
 *   for nothing, so a non-breaching datapoint gives OK, and datapoints that all breach but are fewer
 *   than N give INSUFFICIENT_DATA (`missing`) or keep the state (`ignore`), except that an alarm
 *   treating missing data as `missing` goes to ALARM when its oldest breaching datapoint is at least
 *   N periods old (CloudWatch's rule against premature transitions).
 *
 * Alarms on `AWS/DynamoDB` metrics always ignore missing data, as CloudWatch's do. Composite
 * alarms are evaluated after the alarms their rule names. The properties must be resolved already
 * (no intrinsic functions left); anything this evaluator cannot reproduce faithfully (anomaly
 * detection, an unsupported statistic or math function, an unknown property) is an
 * AlarmDefinitionError naming the alarm and the construct.
 */
import {
  Alarm,
  alarmKey,
  AlarmResource,
  alarmsOf,
  CompositeAlarm,
  descriptionOf,
  MetricAlarm,
  queryEvaluator,
  Source,
  TreatMissingData,
} from './alarm-definition';
import { AlarmStateValue, evaluateRule, ruleReferences } from './alarm-rule';
import { MathValue, Series } from './metric-math';
import { MetricIdentity, MetricStore } from './metric-store';

export type { AlarmStateValue } from './alarm-rule';
export { AlarmDefinitionError, type AlarmResource, COMPOSITE_ALARM_TYPE, METRIC_ALARM_TYPE } from './alarm-definition';

export interface AlarmEvaluatorOptions {
  readonly store: MetricStore;
  /** Milliseconds since the epoch; the twin may compress time, so the evaluator never reads the wall clock. */
  readonly clock: () => number;
}

export interface AlarmTransition {
  readonly alarmName: string;
  readonly stackName: string;
  readonly logicalId: string;
  readonly from: AlarmStateValue;
  readonly to: AlarmStateValue;
  readonly reason: string;
  readonly description?: string;
  readonly at: number;
}

export interface AlarmStatus {
  readonly alarmName: string;
  readonly stackName: string;
  readonly logicalId: string;
  readonly arn: string;
  readonly kind: 'metric' | 'composite';
  readonly state: AlarmStateValue;
  readonly reason: string;
  /** When the alarm entered its state (its creation, for the initial state). */
  readonly lastChange: number;
  readonly description?: string;
}

/**
 * Periods retrieved beyond EvaluationPeriods. CloudWatch varies the evaluation range with the period
 * and the resolution; its documented examples look back 5 periods for 3 evaluation periods.
 */
const EXTRA_PERIODS = 2;
const INITIAL_REASON = 'Unchecked: Initial alarm creation';

interface AlarmState {
  readonly state: AlarmStateValue;
  readonly reason: string;
  readonly lastChange: number;
}

interface EvaluationRange {
  readonly from: number;
  readonly to: number;
  /** Periods in the range. */
  readonly length: number;
}

interface Datapoint {
  readonly timestamp: number;
  readonly value: number | undefined;
}

/** A datapoint that took part in a decision: a real value, or a missing one filled in. */
interface Counted {
  readonly timestamp: number;
  readonly value: number | undefined;
  readonly breaching: boolean;
}

/** A new state and why; undefined keeps the current state. */
type Decision = { readonly state: AlarmStateValue; readonly reason: string } | undefined;

export class AlarmEvaluator {
  /** Metric alarms first, then composites, each after the composites it names. */
  private readonly ordered: readonly Alarm[];
  private readonly current = new Map<string, AlarmState>();
  private readonly store: MetricStore;
  private readonly clock: () => number;

  constructor(resources: readonly AlarmResource[], options: AlarmEvaluatorOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.ordered = alarmsOf(resources);
    const created = this.clock();
    for (const alarm of this.ordered) this.current.set(alarmKey(alarm.resource), { state: 'INSUFFICIENT_DATA', reason: INITIAL_REASON, lastChange: created });
  }

  /** Evaluates every alarm at the clock's time; returns the state changes, composites after their children. */
  evaluate(): AlarmTransition[] {
    const now = this.clock();
    const transitions: AlarmTransition[] = [];
    for (const alarm of this.ordered) {
      const before = this.stateOf(alarmKey(alarm.resource));
      const decision = alarm.kind === 'metric' ? this.decideMetricAlarm(alarm, now, before.state) : this.decideComposite(alarm);
      if (!decision || decision.state === before.state) continue;
      this.current.set(alarmKey(alarm.resource), { state: decision.state, reason: decision.reason, lastChange: now });
      transitions.push({
        alarmName: alarm.resource.name,
        stackName: alarm.resource.stackName,
        logicalId: alarm.resource.logicalId,
        from: before.state,
        to: decision.state,
        reason: decision.reason,
        ...descriptionOf(alarm.resource),
        at: now,
      });
    }
    return transitions;
  }

  states(): AlarmStatus[] {
    return this.ordered.map((alarm) => {
      const { state, reason, lastChange } = this.stateOf(alarmKey(alarm.resource));
      const { stackName, logicalId, name, arn } = alarm.resource;
      return { alarmName: name, stackName, logicalId, arn, kind: alarm.kind, state, reason, lastChange, ...descriptionOf(alarm.resource) };
    });
  }

  private stateOf(key: string): AlarmState {
    return this.current.get(key)!;
  }

  private decideMetricAlarm(alarm: MetricAlarm, now: number, current: AlarmStateValue): Decision {
    const range = evaluationRange(alarm, now);
    const values = this.valuesOf(alarm.source, alarm.periodSeconds, range);
    const datapoints = values.map((value, index) => ({ timestamp: range.from + index * alarm.periodSeconds * 1000, value }));
    return decide(alarm, datapoints, current);
  }

  private valuesOf(source: Source, periodSeconds: number, range: EvaluationRange): Series {
    const read = (metric: MetricIdentity, statistic: string) =>
      this.store.series(metric, statistic, periodSeconds, range.from, range.to).map((point) => point.value);
    if (source.type === 'metric') return read(source.metric, source.statistic);
    // The result's kind was checked when the alarm was built.
    const result = queryEvaluator(source, range.length, read)(source.resultId);
    return (result as Extract<MathValue, { kind: 'series' }>).values;
  }

  private decideComposite(alarm: CompositeAlarm): Decision {
    const stateOfReference = (reference: string) => this.stateOf(alarm.references.get(reference)!).state;
    const holds = evaluateRule(alarm.rule, stateOfReference);
    const children = ruleReferences(alarm.rule).map((reference) => `${reference} is ${stateOfReference(reference)}`);
    const because = children.length > 0 ? `: ${children.join(', ')}` : '';
    return { state: holds ? 'ALARM' : 'OK', reason: `Alarm rule ${alarm.ruleText} is ${holds ? 'TRUE' : 'FALSE'}${because}` };
  }
}

/**
 * The completed periods an evaluation looks at, oldest first: they end at the latest whole minute
 * (the latest whole period for a 10- or 30-second alarm), M + EXTRA_PERIODS of them.
 */
function evaluationRange(alarm: MetricAlarm, now: number): EvaluationRange {
  const periodMs = alarm.periodSeconds * 1000;
  const stepMs = Math.min(periodMs, 60_000);
  const to = Math.floor(now / stepMs) * stepMs;
  const length = alarm.evaluationPeriods + EXTRA_PERIODS;
  return { from: to - length * periodMs, to, length };
}

/** The state the datapoints of the evaluation range (oldest first) call for. */
function decide(alarm: MetricAlarm, datapoints: readonly Datapoint[], current: AlarmStateValue): Decision {
  const { evaluationPeriods: m, datapointsToAlarm: n, treatMissingData: treatment } = alarm;
  const breaches = (value: number) => alarm.comparison.breaches(value, alarm.threshold);
  const real = datapoints.filter((point) => point.value !== undefined).map((point) => ({ ...point, breaching: breaches(point.value!) }));
  const breachingCount = (counted: readonly Counted[]) => counted.filter((point) => point.breaching).length;

  if (real.length >= m) {
    const latest = real.slice(-m);
    return thresholdDecision(alarm, latest, breachingCount(latest) >= n ? 'ALARM' : 'OK', current);
  }
  if (real.length === 0) return allMissingDecision(alarm, datapoints.length, treatment);

  if (treatment === 'breaching' || treatment === 'notBreaching') {
    // Only as many missing datapoints as M needs are filled in: the latest ones.
    const filled = datapoints
      .filter((point) => point.value === undefined)
      .slice(-(m - real.length))
      .map((point) => ({ ...point, breaching: treatment === 'breaching' }));
    const counted = [...real, ...filled].sort((a, b) => a.timestamp - b.timestamp);
    return thresholdDecision(alarm, counted, breachingCount(counted) >= n ? 'ALARM' : 'OK', current);
  }
  if (breachingCount(real) >= n) return thresholdDecision(alarm, real, 'ALARM', current);
  if (real.some((point) => !point.breaching)) return thresholdDecision(alarm, real, 'OK', current);
  const periodsSinceOldest = datapoints.length - datapoints.findIndex((point) => point.value !== undefined);
  if (treatment === 'missing' && periodsSinceOldest >= n) {
    return {
      state: 'ALARM',
      reason:
        `Threshold Crossed: ${describe(real)} ${real.length === 1 ? 'was' : 'were'} ${alarm.comparison.phrase} the threshold (${alarm.threshold}), ` +
        `the oldest ${periodsSinceOldest} periods ago and none since within the threshold (missing data treated as missing).`,
    };
  }
  if (treatment === 'ignore') return undefined;
  return {
    state: 'INSUFFICIENT_DATA',
    reason: `Insufficient Data: ${real.length} of ${m} datapoints received ${describe(real)}, fewer than the ${n} breaching datapoints needed to alarm.`,
  };
}

function thresholdDecision(alarm: MetricAlarm, counted: readonly Counted[], state: AlarmStateValue, current: AlarmStateValue): Decision {
  const breaching = counted.filter((point) => point.breaching).length;
  const shown = state === 'ALARM' ? breaching : counted.length - breaching;
  const verb = shown === 1 ? 'was' : 'were';
  const relation = state === 'ALARM' ? alarm.comparison.phrase : `not ${alarm.comparison.phrase}`;
  const minimum = state === 'ALARM' ? alarm.datapointsToAlarm : 1;
  return {
    state,
    reason:
      `Threshold Crossed: ${shown} out of the last ${counted.length} datapoints ${describe(counted)} ${verb} ${relation} the threshold (${alarm.threshold}) ` +
      `(minimum ${minimum} datapoint${minimum === 1 ? '' : 's'} for ${current} -> ${state} transition).`,
  };
}

function allMissingDecision(alarm: MetricAlarm, periods: number, treatment: TreatMissingData): Decision {
  const received = `no datapoints were received for ${periods} periods`;
  const m = alarm.evaluationPeriods;
  switch (treatment) {
    case 'missing':
      return { state: 'INSUFFICIENT_DATA', reason: `Insufficient Data: ${received}.` };
    case 'ignore':
      return undefined;
    case 'breaching':
      return { state: 'ALARM', reason: `Threshold Crossed: ${received} and ${m} missing datapoint${m === 1 ? ' was' : 's were'} treated as [Breaching].` };
    case 'notBreaching':
      return { state: 'OK', reason: `Threshold Crossed: ${received} and ${m} missing datapoint${m === 1 ? ' was' : 's were'} treated as [NonBreaching].` };
  }
}

function describe(points: readonly Counted[]): string {
  const label = (point: Counted) => `${point.value === undefined ? `missing, treated as ${point.breaching ? 'breaching' : 'not breaching'}` : point.value}`;
  return `[${points.map((point) => `${label(point)} (${new Date(point.timestamp).toISOString()})`).join(', ')}]`;
}
