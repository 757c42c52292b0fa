/**
 * A synthesized template's CloudWatch alarms read into what the evaluator (evaluator.ts) works
 * with: a metric alarm's statistic or metric math queries, its period, evaluation and datapoint
 * counts, comparison and missing-data treatment; a composite alarm's parsed rule and the alarms
 * it names. Anything CloudWatch would evaluate and this twin cannot reproduce faithfully (anomaly
 * detection, an unsupported statistic or math function, an unknown property) is an
 * AlarmDefinitionError naming the alarm, its stack and its logical id. Alarms are told apart by
 * stack and logical id (`alarmKey`): a logical id is unique within its stack only.
 */
import { TemplateError } from '../cloudformation/template-error';
import { RuleNode, parseAlarmRule, ruleReferences } from './alarm-rule';
import { MathNode, MathValue, Series, evaluateMath, parseMathExpression, referencedIds } from './metric-math';
import { MetricIdentity, aggregateFor } from './metric-store';

/** One alarm resource of a template, its properties resolved, with the name and ARN it has locally. */
export interface AlarmResource {
  readonly stackName: string;
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  readonly type: string;
  readonly properties: Readonly<Record<string, unknown>>;
}

/** An alarm the local evaluator cannot evaluate as CloudWatch would: unsupported, or invalid. */
export class AlarmDefinitionError extends TemplateError {
  override name = 'AlarmDefinitionError';
}

/** What tells an alarm apart from every other of the run: its stack and its logical id. */
export function alarmKey(resource: Pick<AlarmResource, 'stackName' | 'logicalId'>): string {
  return `${resource.stackName}/${resource.logicalId}`;
}

export const METRIC_ALARM_TYPE = 'AWS::CloudWatch::Alarm';
export const COMPOSITE_ALARM_TYPE = 'AWS::CloudWatch::CompositeAlarm';

export type TreatMissingData = 'missing' | 'ignore' | 'breaching' | 'notBreaching';
const TREATMENTS: readonly string[] = ['missing', 'ignore', 'breaching', 'notBreaching'];

export interface Comparison {
  readonly breaches: (value: number, threshold: number) => boolean;
  readonly phrase: string;
}

const COMPARISONS: Readonly<Record<string, Comparison>> = {
  GreaterThanOrEqualToThreshold: { breaches: (value, threshold) => value >= threshold, phrase: 'greater than or equal to' },
  GreaterThanThreshold: { breaches: (value, threshold) => value > threshold, phrase: 'greater than' },
  LessThanThreshold: { breaches: (value, threshold) => value < threshold, phrase: 'less than' },
  LessThanOrEqualToThreshold: { breaches: (value, threshold) => value <= threshold, phrase: 'less than or equal to' },
};
const ANOMALY_DETECTION_COMPARISONS: readonly string[] = ['LessThanLowerOrGreaterThanUpperThreshold', 'LessThanLowerThreshold', 'GreaterThanUpperThreshold'];
const BASIC_STATISTICS: readonly string[] = ['Sum', 'Average', 'Minimum', 'Maximum', 'SampleCount'];

/** Properties that only say who is told, or how an alarm is labelled: they do not change its state. */
const NOTIFICATION_PROPERTIES = ['ActionsEnabled', 'AlarmActions', 'OKActions', 'InsufficientDataActions', 'AlarmName', 'AlarmDescription', 'Tags'];
const METRIC_ALARM_PROPERTIES: ReadonlySet<string> = new Set([
  ...NOTIFICATION_PROPERTIES,
  'ComparisonOperator',
  'DatapointsToAlarm',
  'Dimensions',
  'EvaluateLowSampleCountPercentile',
  'EvaluationPeriods',
  'ExtendedStatistic',
  'MetricName',
  'Metrics',
  'Namespace',
  'Period',
  'Statistic',
  'Threshold',
  'TreatMissingData',
  'Unit',
]);
const COMPOSITE_ALARM_PROPERTIES: ReadonlySet<string> = new Set([
  ...NOTIFICATION_PROPERTIES,
  'AlarmRule',
  'ActionsSuppressor',
  'ActionsSuppressorExtensionPeriod',
  'ActionsSuppressorWaitPeriod',
]);
const QUERY_PROPERTIES: ReadonlySet<string> = new Set(['Id', 'MetricStat', 'Expression', 'ReturnData', 'Label', 'Period']);
const QUERY_ID = /^[a-z][A-Za-z0-9_]*$/;

/** What a metric alarm compares with its threshold: one metric's statistic, or a math expression's result. */
export type Source =
  | { readonly type: 'metric'; readonly metric: MetricIdentity; readonly statistic: string }
  | { readonly type: 'math'; readonly queries: ReadonlyMap<string, Query>; readonly resultId: string };

type Query =
  | { readonly type: 'metric'; readonly metric: MetricIdentity; readonly statistic: string }
  | { readonly type: 'expression'; readonly expression: string; readonly node: MathNode };

export interface MetricAlarm {
  readonly kind: 'metric';
  readonly resource: AlarmResource;
  readonly source: Source;
  readonly periodSeconds: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly threshold: number;
  readonly comparison: Comparison;
  readonly treatMissingData: TreatMissingData;
}

export interface CompositeAlarm {
  readonly kind: 'composite';
  readonly resource: AlarmResource;
  readonly rule: RuleNode;
  readonly ruleText: string;
  /** The key (`alarmKey`) of each alarm the rule names, by the name or ARN it uses. */
  readonly references: ReadonlyMap<string, string>;
}

export type Alarm = MetricAlarm | CompositeAlarm;

/** The alarms of a template's alarm resources: metric alarms first, then composites, each after the composites it names. */
export function alarmsOf(resources: readonly AlarmResource[]): Alarm[] {
  rejectDuplicates(resources);
  const metricAlarms = resources.filter((resource) => resource.type === METRIC_ALARM_TYPE).map(metricAlarmOf);
  const composites = resources.filter((resource) => resource.type === COMPOSITE_ALARM_TYPE).map((resource) => compositeAlarmOf(resource, resources));
  const unknown = resources.find((resource) => resource.type !== METRIC_ALARM_TYPE && resource.type !== COMPOSITE_ALARM_TYPE);
  if (unknown) throw definitionError(unknown, `resource type ${unknown.type} is not an alarm`);
  return [...metricAlarms, ...compositesInDependencyOrder(composites)];
}

function metricAlarmOf(resource: AlarmResource): MetricAlarm {
  const properties = resource.properties;
  rejectUnknownProperties(resource, METRIC_ALARM_PROPERTIES);
  const operator = text(resource, 'ComparisonOperator');
  if (ANOMALY_DETECTION_COMPARISONS.includes(operator)) {
    throw definitionError(resource, `ComparisonOperator ${operator} needs an anomaly detection band, which is not supported locally`);
  }
  const comparison = COMPARISONS[operator];
  if (!comparison) throw definitionError(resource, `ComparisonOperator ${operator} is not a CloudWatch comparison operator`);
  const evaluationPeriods = count(resource, 'EvaluationPeriods', 1);
  const datapointsToAlarm = properties.DatapointsToAlarm === undefined ? evaluationPeriods : count(resource, 'DatapointsToAlarm', 1);
  if (datapointsToAlarm > evaluationPeriods)
    throw definitionError(resource, `DatapointsToAlarm (${datapointsToAlarm}) exceeds EvaluationPeriods (${evaluationPeriods})`);
  const treatment = properties.TreatMissingData === undefined ? 'missing' : text(resource, 'TreatMissingData');
  if (!TREATMENTS.includes(treatment)) throw definitionError(resource, `TreatMissingData ${treatment} is not one of ${TREATMENTS.join(', ')}`);
  const { source, periodSeconds } = properties.Metrics === undefined ? singleMetricSource(resource) : mathSource(resource);
  const namespaces =
    source.type === 'metric'
      ? [source.metric.namespace]
      : [...source.queries.values()].flatMap((query) => (query.type === 'metric' ? [query.metric.namespace] : []));
  return {
    kind: 'metric',
    resource,
    source,
    periodSeconds,
    evaluationPeriods,
    datapointsToAlarm,
    threshold: numberProperty(resource, 'Threshold'),
    comparison,
    // CloudWatch keeps the state of an alarm on a DynamoDB metric whatever the alarm says.
    treatMissingData: namespaces.includes('AWS/DynamoDB') ? 'ignore' : (treatment as TreatMissingData),
  };
}

function singleMetricSource(resource: AlarmResource): { source: Source; periodSeconds: number } {
  const properties = resource.properties;
  const statistic = properties.Statistic;
  const extended = properties.ExtendedStatistic;
  if ((statistic === undefined) === (extended === undefined)) throw definitionError(resource, 'exactly one of Statistic and ExtendedStatistic is needed');
  if (statistic !== undefined && !BASIC_STATISTICS.includes(String(statistic)))
    throw definitionError(resource, `Statistic ${String(statistic)} is not one of ${BASIC_STATISTICS.join(', ')}`);
  const chosen = statistic === undefined ? text(resource, 'ExtendedStatistic') : String(statistic);
  checkStatistic(resource, chosen);
  if (/^p/.test(chosen) && properties.EvaluateLowSampleCountPercentile === 'ignore') {
    throw definitionError(resource, 'EvaluateLowSampleCountPercentile "ignore" is not supported locally');
  }
  const metric = metricIdentityOf(
    resource,
    { Namespace: properties.Namespace, MetricName: properties.MetricName, Dimensions: properties.Dimensions },
    properties.Unit,
  );
  return { source: { type: 'metric', metric, statistic: chosen }, periodSeconds: period(resource, properties.Period, 'Period') };
}

function mathSource(resource: AlarmResource): { source: Source; periodSeconds: number } {
  const properties = resource.properties;
  const conflicting = ['MetricName', 'Namespace', 'Dimensions', 'Statistic', 'ExtendedStatistic', 'Period', 'Unit'].filter(
    (key) => properties[key] !== undefined,
  );
  if (conflicting.length > 0) throw definitionError(resource, `Metrics cannot be combined with ${conflicting.join(', ')}`);
  if (!Array.isArray(properties.Metrics) || properties.Metrics.length === 0) throw definitionError(resource, 'Metrics must be a non-empty list');
  const queries = new Map<string, Query>();
  const periods = new Set<number>();
  const results: string[] = [];
  for (const entry of properties.Metrics as unknown[]) {
    const { id, query, periodSeconds } = queryOf(resource, entry);
    if (queries.has(id)) throw definitionError(resource, `query id ${id} is used twice`);
    queries.set(id, query);
    if (periodSeconds !== undefined) periods.add(periodSeconds);
    if ((entry as Record<string, unknown>).ReturnData !== false) results.push(id);
  }
  if (results.length !== 1) throw definitionError(resource, `exactly one query must return data (ReturnData), got ${results.length}`);
  if (periods.size !== 1) throw definitionError(resource, `every metric of a math alarm must use the same period, got ${[...periods].join(', ') || 'none'}`);
  const source: Source = { type: 'math', queries, resultId: results[0] };
  checkQueries(resource, source);
  return { source, periodSeconds: [...periods][0] };
}

function queryOf(resource: AlarmResource, entry: unknown): { id: string; query: Query; periodSeconds?: number } {
  if (typeof entry !== 'object' || entry === null) throw definitionError(resource, `Metrics entry ${JSON.stringify(entry)} is not an object`);
  const fields = entry as Record<string, unknown>;
  const id = String(fields.Id);
  if (!QUERY_ID.test(id))
    throw definitionError(resource, `query id ${JSON.stringify(fields.Id)} must start with a lowercase letter and hold only letters, digits and _`);
  const unknown = Object.keys(fields).filter((key) => !QUERY_PROPERTIES.has(key));
  if (unknown.length > 0) throw definitionError(resource, `query ${id}: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not supported locally`);
  const ownPeriod = fields.Period === undefined ? undefined : period(resource, fields.Period, `query ${id} Period`);
  if ((fields.MetricStat === undefined) === (fields.Expression === undefined))
    throw definitionError(resource, `query ${id} needs exactly one of MetricStat and Expression`);
  if (fields.Expression !== undefined) {
    if (typeof fields.Expression !== 'string') throw definitionError(resource, `query ${id}: Expression is not text`);
    try {
      return { id, query: { type: 'expression', expression: fields.Expression, node: parseMathExpression(fields.Expression) }, periodSeconds: ownPeriod };
    } catch (error) {
      throw definitionError(resource, `query ${id} expression ${JSON.stringify(fields.Expression)}: ${(error as Error).message}`);
    }
  }
  const stat = fields.MetricStat as Record<string, unknown>;
  const statistic = String(stat.Stat);
  checkStatistic(resource, statistic);
  const metric = metricIdentityOf(resource, (stat.Metric ?? {}) as Record<string, unknown>, stat.Unit);
  return { id, query: { type: 'metric', metric, statistic }, periodSeconds: period(resource, stat.Period, `query ${id} Period`) };
}

/** Every id an expression names exists, no expression depends on itself, and a dry run yields a series. */
function checkQueries(resource: AlarmResource, source: Extract<Source, { type: 'math' }>): void {
  const visiting = new Set<string>();
  /** Ids with the queries each depends on before it. */
  const ordered: string[] = [];
  const visit = (id: string, path: readonly string[]): void => {
    if (ordered.includes(id)) return;
    if (visiting.has(id)) throw definitionError(resource, `queries depend on each other in a cycle: ${[...path, id].join(' -> ')}`);
    const query = source.queries.get(id);
    if (!query) throw definitionError(resource, `query ${path[path.length - 1]} names ${id}, which no query has as its Id`);
    visiting.add(id);
    if (query.type === 'expression') for (const referenced of referencedIds(query.node)) visit(referenced, [...path, id]);
    visiting.delete(id);
    ordered.push(id);
  };
  for (const id of source.queries.keys()) visit(id, []);
  // A value's shape does not depend on the data, so one run on empty series finds every type error.
  const valueOf = queryEvaluator(source, 1, () => [undefined]);
  for (const id of ordered) {
    const query = source.queries.get(id)!;
    try {
      valueOf(id);
    } catch (error) {
      const expression = query.type === 'expression' ? ` expression ${JSON.stringify(query.expression)}` : '';
      throw definitionError(resource, `query ${id}${expression}: ${(error as Error).message}`);
    }
  }
  const result = valueOf(source.resultId);
  if (result.kind !== 'series')
    throw definitionError(resource, `query ${source.resultId} yields ${result.kind === 'scalar' ? 'a number' : 'a list'}, not one time series`);
}

/** Reads the value of any query of a math alarm; every query is computed once, when first named. */
export function queryEvaluator(source: Extract<Source, { type: 'math' }>, length: number, read: (metric: MetricIdentity, statistic: string) => Series) {
  const values = new Map<string, MathValue>();
  const valueOf = (id: string): MathValue => {
    const known = values.get(id);
    if (known) return known;
    const query = source.queries.get(id)!;
    const value: MathValue =
      query.type === 'metric' ? { kind: 'series', values: read(query.metric, query.statistic) } : evaluateMath(query.node, { length, valueOf });
    values.set(id, value);
    return value;
  };
  return valueOf;
}

function metricIdentityOf(resource: AlarmResource, metric: Record<string, unknown>, unit: unknown): MetricIdentity {
  const namespace = metric.Namespace;
  const name = metric.MetricName;
  if (typeof namespace !== 'string' || typeof name !== 'string')
    throw definitionError(resource, 'a metric needs a Namespace and a MetricName (resolved to text)');
  const dimensions: Record<string, string> = {};
  for (const dimension of (metric.Dimensions ?? []) as unknown[]) {
    const { Name: key, Value: value } = (dimension ?? {}) as Record<string, unknown>;
    if (typeof key !== 'string' || typeof value !== 'string')
      throw definitionError(resource, `dimension ${JSON.stringify(dimension)} of ${namespace}/${name} is not a resolved Name and Value`);
    dimensions[key] = value;
  }
  if (unit !== undefined && typeof unit !== 'string') throw definitionError(resource, `Unit ${JSON.stringify(unit)} is not text`);
  return { namespace, name, dimensions, ...(unit === undefined ? {} : { unit }) };
}

function checkStatistic(resource: AlarmResource, statistic: string): void {
  try {
    aggregateFor(statistic);
  } catch (error) {
    throw definitionError(resource, (error as Error).message);
  }
}

/** A period CloudWatch accepts for an alarm: 10 or 30 seconds (high resolution), or whole minutes. */
function period(resource: AlarmResource, value: unknown, what: string): number {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || !(seconds === 10 || seconds === 30 || (seconds > 0 && seconds % 60 === 0))) {
    throw definitionError(resource, `${what} ${JSON.stringify(value)} must be 10, 30 or a multiple of 60 seconds`);
  }
  return seconds;
}

function compositeAlarmOf(resource: AlarmResource, all: readonly AlarmResource[]): CompositeAlarm {
  rejectUnknownProperties(resource, COMPOSITE_ALARM_PROPERTIES);
  const ruleText = text(resource, 'AlarmRule');
  let rule: RuleNode;
  try {
    rule = parseAlarmRule(ruleText);
  } catch (error) {
    throw definitionError(resource, `AlarmRule: ${(error as Error).message}`);
  }
  const references = new Map<string, string>();
  for (const reference of ruleReferences(rule)) {
    const target = all.find((candidate) => candidate.name === reference || candidate.arn === reference);
    if (!target) throw definitionError(resource, `AlarmRule names ${reference}, which is no alarm of the template (by name or ARN)`);
    references.set(reference, alarmKey(target));
  }
  return { kind: 'composite', resource, rule, ruleText, references };
}

function compositesInDependencyOrder(composites: readonly CompositeAlarm[]): CompositeAlarm[] {
  const byKey = new Map(composites.map((composite) => [alarmKey(composite.resource), composite]));
  const ordered: CompositeAlarm[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (composite: CompositeAlarm, path: readonly string[]): void => {
    const id = alarmKey(composite.resource);
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting')
      throw definitionError(composite.resource, `composite alarms name each other in a cycle: ${[...path, composite.resource.name].join(' -> ')}`);
    state.set(id, 'visiting');
    for (const child of composite.references.values()) {
      const childComposite = byKey.get(child);
      if (childComposite) visit(childComposite, [...path, composite.resource.name]);
    }
    state.set(id, 'done');
    ordered.push(composite);
  };
  for (const composite of composites) visit(composite, []);
  return ordered;
}

function rejectDuplicates(resources: readonly AlarmResource[]): void {
  const seen = new Map<string, AlarmResource>();
  for (const resource of resources) {
    for (const [what, value] of [
      ['stack and logical id', alarmKey(resource)],
      ['name', resource.name],
      ['ARN', resource.arn],
    ]) {
      const other = seen.get(`${what} ${value}`);
      if (other) throw definitionError(resource, `its ${what} ${value} is also the ${what} of ${alarmKey(other)}`);
      seen.set(`${what} ${value}`, resource);
    }
  }
}

function rejectUnknownProperties(resource: AlarmResource, known: ReadonlySet<string>): void {
  const unknown = Object.keys(resource.properties).filter((key) => !known.has(key));
  if (unknown.length > 0) throw definitionError(resource, `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not supported locally`);
}

function text(resource: AlarmResource, key: string): string {
  const value = resource.properties[key];
  if (typeof value !== 'string') throw definitionError(resource, `${key} must be resolved text, got ${JSON.stringify(value)}`);
  return value;
}

/** A number property; CloudFormation also accepts numbers written as text. */
function numberProperty(resource: AlarmResource, key: string): number {
  const value = resource.properties[key];
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) throw definitionError(resource, `${key} must be a number, got ${JSON.stringify(value)}`);
  return number;
}

function count(resource: AlarmResource, key: string, min: number): number {
  const value = numberProperty(resource, key);
  if (!Number.isInteger(value) || value < min) throw definitionError(resource, `${key} must be a whole number of at least ${min}, got ${value}`);
  return value;
}

export function descriptionOf(resource: AlarmResource): { description?: string } {
  const description = resource.properties.AlarmDescription;
  return typeof description === 'string' ? { description } : {};
}

function definitionError(resource: AlarmResource, problem: string): AlarmDefinitionError {
  return new AlarmDefinitionError(`alarm ${resource.name}: ${problem}`, { stackName: resource.stackName, logicalId: resource.logicalId, type: resource.type });
}
