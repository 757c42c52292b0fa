/**
 * The twin's CloudWatch metrics: datapoints kept by metric identity, and the statistics an alarm or
 * a chart asks for over a time range. As in CloudWatch, a metric is its namespace, its name and its
 * full set of dimensions: a datapoint published with dimensions {Inbox, Provider} is not part of the
 * metric {Inbox}. Points older than the retention (by the store's clock) are dropped, so memory stays
 * bounded however long the twin runs.
 */

/** One published value, as `PutMetricData` or an embedded-metric-format log line carries it. */
export interface MetricDatum {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Readonly<Record<string, string>>;
  /** Milliseconds since the epoch. */
  readonly timestamp: number;
  readonly value: number;
  /** CloudWatch's unit name; a datum without one has the unit `None`. */
  readonly unit?: string;
}

/** A metric as CloudWatch identifies it; with `unit`, only datapoints published in that unit count. */
export interface MetricIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly unit?: string;
}

/** One period of a series: its start and its statistic, undefined when the period has no datapoint. */
export interface SeriesPoint {
  readonly timestamp: number;
  readonly value: number | undefined;
}

export interface MetricStoreOptions {
  /** Milliseconds since the epoch; the twin may compress time, so the store never reads the wall clock. */
  readonly clock: () => number;
  /** How long a datapoint is kept. @default 24 hours */
  readonly retentionMs?: number;
}

/** A statistic CloudWatch does not have, or one this store does not compute. */
export class UnsupportedStatisticError extends Error {
  override readonly name = 'UnsupportedStatisticError';
}

const DEFAULT_RETENTION_MS = 24 * 3600 * 1000;
const NO_UNIT = 'None';
/** `p99`, `p99.9`, `p0.5`: CloudWatch's percentile statistics. */
const PERCENTILE = /^p(\d{1,3}(?:\.\d+)?)$/;

interface Sample {
  readonly timestamp: number;
  readonly value: number;
  readonly unit: string;
}

type Aggregate = (values: readonly number[]) => number;

const AGGREGATES: Readonly<Record<string, Aggregate>> = {
  Sum: (values) => values.reduce((sum, value) => sum + value, 0),
  Average: (values) => values.reduce((sum, value) => sum + value, 0) / values.length,
  Minimum: (values) => Math.min(...values),
  Maximum: (values) => Math.max(...values),
  SampleCount: (values) => values.length,
};

/**
 * The function behind a statistic name: `Sum`, `Average`, `Minimum`, `Maximum`, `SampleCount`, or a
 * percentile `pNN` / `pNN.N` (an extended statistic). Any other name throws.
 */
export function aggregateFor(statistic: string): Aggregate {
  const basic = AGGREGATES[statistic];
  if (basic) return basic;
  const percentile = PERCENTILE.exec(statistic);
  if (percentile && Number(percentile[1]) <= 100) {
    const percent = Number(percentile[1]);
    return (values) => nearestRank(values, percent);
  }
  throw new UnsupportedStatisticError(`statistic ${statistic} is not supported (Sum, Average, Minimum, Maximum, SampleCount or pNN[.N])`);
}

/**
 * The smallest value with at least `percent` % of the values at or below it. CloudWatch computes
 * percentiles approximately; on the twin's small samples the exact nearest rank is the useful answer.
 */
function nearestRank(values: readonly number[], percent: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  // The tolerance keeps binary rounding (0.999 * 1000 is 999.0000000000001) from reaching the next rank.
  const rank = Math.ceil((percent * sorted.length) / 100 - 1e-9);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The identity of a metric as a map key: dimension order does not matter, every dimension does. */
function metricKey(namespace: string, name: string, dimensions: Readonly<Record<string, string>>): string {
  const sorted = Object.entries(dimensions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([namespace, name, sorted]);
}

/** The index of the first sample at or after `timestamp` (samples sorted by time). */
function firstAtOrAfter(samples: readonly Sample[], timestamp: number): number {
  let low = 0;
  let high = samples.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (samples[middle].timestamp < timestamp) low = middle + 1;
    else high = middle;
  }
  return low;
}

export class MetricStore {
  /** Samples of each metric, sorted by timestamp. */
  private readonly metrics = new Map<string, Sample[]>();
  private readonly clock: () => number;
  private readonly retentionMs: number;
  private lastSweep = Number.NEGATIVE_INFINITY;

  constructor(options: MetricStoreOptions) {
    this.clock = options.clock;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    if (!(this.retentionMs > 0)) throw new RangeError(`retentionMs must be positive, got ${this.retentionMs}`);
  }

  put(datum: MetricDatum): void {
    if (!Number.isFinite(datum.value)) throw new RangeError(`${datum.namespace}/${datum.name}: a datapoint value must be a finite number, got ${datum.value}`);
    if (!Number.isFinite(datum.timestamp)) throw new RangeError(`${datum.namespace}/${datum.name}: invalid timestamp ${datum.timestamp}`);
    const cutoff = this.cutoff();
    this.sweepIfDue(cutoff);
    if (datum.timestamp < cutoff) return;
    const key = metricKey(datum.namespace, datum.name, datum.dimensions);
    const samples = this.metrics.get(key) ?? [];
    this.metrics.set(key, samples);
    const sample = { timestamp: datum.timestamp, value: datum.value, unit: datum.unit ?? NO_UNIT };
    // Datapoints mostly arrive in time order: appending is the common case.
    if (samples.length === 0 || samples[samples.length - 1].timestamp <= sample.timestamp) samples.push(sample);
    else samples.splice(firstAtOrAfter(samples, sample.timestamp + 1), 0, sample);
  }

  putAll(data: Iterable<MetricDatum>): void {
    for (const datum of data) this.put(datum);
  }

  /** The statistic over datapoints with `startMs <= timestamp < endMs`; undefined when there are none. */
  statistic(metric: MetricIdentity, statistic: string, startMs: number, endMs: number): number | undefined {
    const aggregate = aggregateFor(statistic);
    const values = this.valuesBetween(metric, startMs, endMs);
    return values.length === 0 ? undefined : aggregate(values);
  }

  /** One point per whole period from `fromMs` up to `toMs`, for a chart or an alarm's evaluation range. */
  series(metric: MetricIdentity, statistic: string, periodSeconds: number, fromMs: number, toMs: number): SeriesPoint[] {
    if (!(periodSeconds > 0)) throw new RangeError(`periodSeconds must be positive, got ${periodSeconds}`);
    const aggregate = aggregateFor(statistic);
    const periodMs = periodSeconds * 1000;
    const points: SeriesPoint[] = [];
    for (let start = fromMs; start + periodMs <= toMs; start += periodMs) {
      const values = this.valuesBetween(metric, start, start + periodMs);
      points.push({ timestamp: start, value: values.length === 0 ? undefined : aggregate(values) });
    }
    return points;
  }

  /** Datapoints held, expired ones not yet swept included: what the store costs in memory. */
  datapointCount(): number {
    let count = 0;
    for (const samples of this.metrics.values()) count += samples.length;
    return count;
  }

  private valuesBetween(metric: MetricIdentity, startMs: number, endMs: number): number[] {
    const samples = this.metrics.get(metricKey(metric.namespace, metric.name, metric.dimensions));
    if (!samples) return [];
    const values: number[] = [];
    const from = Math.max(startMs, this.cutoff());
    for (let index = firstAtOrAfter(samples, from); index < samples.length && samples[index].timestamp < endMs; index++) {
      const sample = samples[index];
      if (metric.unit === undefined || sample.unit === metric.unit) values.push(sample.value);
    }
    return values;
  }

  private cutoff(): number {
    return this.clock() - this.retentionMs;
  }

  /** Drops expired samples at most once per hundredth of the retention, so a put stays cheap. */
  private sweepIfDue(cutoff: number): void {
    if (cutoff - this.lastSweep < this.retentionMs / 100) return;
    this.lastSweep = cutoff;
    for (const [key, samples] of this.metrics) {
      const expired = firstAtOrAfter(samples, cutoff);
      if (expired === samples.length) this.metrics.delete(key);
      else if (expired > 0) samples.splice(0, expired);
    }
  }
}
