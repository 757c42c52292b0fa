import { Env, METRIC_NAMESPACE, MetricDimension } from '../../../lib/contract';
import { requiredEnv } from './config';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Values a log line may carry: identifiers, hashes, counts and reason codes, never content. */
export type LogFields = Record<string, string | number | boolean | undefined>;

export type LineWriter = (line: string) => void;

/** Writes straight to stdout: Lambda's patched console would prefix the line and break EMF. */
export const stdoutWriter: LineWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/** CloudWatch keeps at most 100 values of one metric from one EMF document. */
const MAX_EMF_VALUES = 100;

/** The metrics of one EMF document: its provider ('' for the inbox alone) and each metric's name, value(s) and unit. */
interface MetricDocument {
  readonly provider: string;
  readonly members: readonly [string, number | number[], string][];
}

/** The units of the values `Telemetry` keeps one by one (for percentiles and maxima). */
type ValueUnit = 'Milliseconds' | 'Seconds';

/**
 * Structured JSON logs and CloudWatch embedded-metric-format metrics for one handler: counters
 * (unit Count, summed) and values kept one by one for percentiles and maxima (durations in
 * Milliseconds, lags in Seconds).
 * They accumulate until `flush()`, which writes one EMF document per provider (more when a
 * duration has over 100 values), or `logAndFlush()`, which writes a log line as one of them.
 *
 * A line names its inbox and provider under the metric dimensions' names (`Inbox`, `Provider`),
 * so that a line carrying metrics names each once; it does not name its handler: each function
 * writes to a log group of its own, whose log streams are named after the function.
 */
export class Telemetry {
  private readonly counts = new Map<string, Map<string, number>>();
  private readonly values = new Map<string, Map<string, { unit: ValueUnit; values: number[] }>>();

  /** `perProvider`: each provider's metrics also under the `Inbox` and `Provider` dimensions (a custom metric each, billed monthly); otherwise under `Inbox` alone. */
  constructor(
    private readonly inboxName: string,
    private readonly write: LineWriter = stdoutWriter,
    private readonly now: () => number = Date.now,
    private readonly perProvider = false,
  ) {}

  log(level: LogLevel, message: string, fields: LogFields = {}): void {
    this.write(JSON.stringify({ level, time: new Date(this.now()).toISOString(), ...this.line(message, fields) }));
  }

  /**
   * Writes the line and every metric counted so far, the metrics of the line's provider in the
   * line itself: CloudWatch extracts metrics from any JSON log event carrying `_aws`, and its
   * `Timestamp` is then the line's time. A line whose provider counted nothing goes out alone.
   */
  logAndFlush(level: LogLevel, message: string, fields: LogFields = {}): void {
    const documents = this.takeDocuments();
    const own = documents.findIndex((document) => document.provider === (fields.provider ?? ''));
    if (own < 0) this.log(level, message, fields);
    documents.forEach((document, index) => {
      const metrics = this.metricDocument(document);
      this.write(JSON.stringify(index === own ? { level, ...this.line(message, fields), ...metrics } : metrics));
    });
  }

  /** Counts `metric` for the inbox, and for `provider` too when one is given. */
  count(metric: string, provider: string | undefined, value = 1): void {
    const metrics = scopeOf(this.counts, provider);
    metrics.set(metric, (metrics.get(metric) ?? 0) + value);
  }

  /** Records one duration of `metric` in milliseconds, for the inbox and for `provider`. */
  duration(metric: string, provider: string | undefined, milliseconds: number): void {
    this.record(metric, provider, milliseconds, 'Milliseconds');
  }

  /** Records one value of `metric` in seconds (a lag), for the inbox and for `provider`. */
  seconds(metric: string, provider: string | undefined, seconds: number): void {
    this.record(metric, provider, seconds, 'Seconds');
  }

  private record(metric: string, provider: string | undefined, value: number, unit: ValueUnit): void {
    const metrics = scopeOf(this.values, provider);
    metrics.set(metric, { unit, values: [...(metrics.get(metric)?.values ?? []), value] });
  }

  flush(): void {
    for (const document of this.takeDocuments()) this.write(JSON.stringify(this.metricDocument(document)));
  }

  /** A line's members after its level and time. */
  private line(message: string, fields: LogFields): Record<string, unknown> {
    const { provider, ...rest } = fields;
    return { [MetricDimension.INBOX]: this.inboxName, [MetricDimension.PROVIDER]: provider, message, ...rest };
  }

  /** The metrics counted so far, as the documents that carry them; the counters start again. */
  private takeDocuments(): MetricDocument[] {
    const documents: MetricDocument[] = [];
    for (const provider of new Set([...this.counts.keys(), ...this.values.keys()])) {
      const counts = [...(this.counts.get(provider) ?? new Map<string, number>())];
      const values = [...(this.values.get(provider) ?? new Map<string, { unit: ValueUnit; values: number[] }>())];
      const chunks = Math.max(1, ...values.map(([, metric]) => Math.ceil(metric.values.length / MAX_EMF_VALUES)));
      for (let chunk = 0; chunk < chunks; chunk++) {
        // Counters go out with the first document only; each further one carries the values left.
        const members: [string, number | number[], string][] = [
          ...(chunk === 0 ? counts.map(([name, value]): [string, number, string] => [name, value, 'Count']) : []),
          ...values.flatMap(([name, metric]): [string, number[], string][] => {
            const slice = metric.values.slice(chunk * MAX_EMF_VALUES, (chunk + 1) * MAX_EMF_VALUES);
            return slice.length > 0 ? [[name, slice, metric.unit]] : [];
          }),
        ];
        documents.push({ provider, members });
      }
    }
    this.counts.clear();
    this.values.clear();
    return documents;
  }

  private metricDocument({ provider, members }: MetricDocument): Record<string, unknown> {
    const dimensions = provider && this.perProvider ? [[MetricDimension.INBOX], [MetricDimension.INBOX, MetricDimension.PROVIDER]] : [[MetricDimension.INBOX]];
    return {
      _aws: {
        Timestamp: this.now(),
        CloudWatchMetrics: [
          {
            Namespace: METRIC_NAMESPACE,
            Dimensions: dimensions,
            Metrics: members.map(([name, , unit]) => ({ Name: name, Unit: unit })),
          },
        ],
      },
      [MetricDimension.INBOX]: this.inboxName,
      ...(provider ? { [MetricDimension.PROVIDER]: provider } : {}),
      ...Object.fromEntries(members.map(([name, value]) => [name, value])),
    };
  }
}

/** A handler's telemetry from the environment the construct sets: its inbox, and whether metrics go per provider too. */
export function telemetryFromEnv(env: Record<string, string | undefined>, write?: LineWriter, now?: () => number): Telemetry {
  return new Telemetry(requiredEnv(env, Env.INBOX_NAME), write, now, env[Env.METRICS_PER_PROVIDER] === 'true');
}

/** The metrics of one scope (a provider, or '' for the inbox alone), created on first use. */
function scopeOf<T>(scopes: Map<string, Map<string, T>>, provider: string | undefined): Map<string, T> {
  const scope = provider ?? '';
  const metrics = scopes.get(scope) ?? new Map<string, T>();
  scopes.set(scope, metrics);
  return metrics;
}
