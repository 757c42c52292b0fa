import { METRIC_NAMESPACE, MetricDimension } from '../../../lib/contract';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Values a log line may carry: identifiers, hashes, counts and reason codes, never content. */
export type LogFields = Record<string, string | number | boolean | undefined>;

export type LineWriter = (line: string) => void;

/** Writes straight to stdout: Lambda's patched console would prefix the line and break EMF. */
export const stdoutWriter: LineWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/**
 * Structured JSON logs and CloudWatch embedded-metric-format counters for one handler.
 * Counters accumulate until `flush()`, which writes one EMF document per provider.
 */
export class Telemetry {
  private readonly counts = new Map<string, Map<string, number>>();

  constructor(
    private readonly inboxName: string,
    private readonly handlerName: string,
    private readonly write: LineWriter = stdoutWriter,
    private readonly now: () => number = Date.now,
  ) {}

  log(level: LogLevel, message: string, fields: LogFields = {}): void {
    this.write(
      JSON.stringify({
        level,
        time: new Date(this.now()).toISOString(),
        handler: this.handlerName,
        inbox: this.inboxName,
        message,
        ...fields,
      }),
    );
  }

  /** Counts `metric` for the inbox, and for `provider` too when one is given. */
  count(metric: string, provider: string | undefined, value = 1): void {
    const scope = provider ?? '';
    const metrics = this.counts.get(scope) ?? new Map<string, number>();
    metrics.set(metric, (metrics.get(metric) ?? 0) + value);
    this.counts.set(scope, metrics);
  }

  flush(): void {
    for (const [provider, metrics] of this.counts) {
      const dimensions = provider ? [[MetricDimension.INBOX], [MetricDimension.INBOX, MetricDimension.PROVIDER]] : [[MetricDimension.INBOX]];
      const document: Record<string, unknown> = {
        _aws: {
          Timestamp: this.now(),
          CloudWatchMetrics: [
            {
              Namespace: METRIC_NAMESPACE,
              Dimensions: dimensions,
              Metrics: [...metrics.keys()].map((name) => ({ Name: name, Unit: 'Count' })),
            },
          ],
        },
        [MetricDimension.INBOX]: this.inboxName,
        ...(provider ? { [MetricDimension.PROVIDER]: provider } : {}),
        ...Object.fromEntries(metrics),
      };
      this.write(JSON.stringify(document));
    }
    this.counts.clear();
  }
}
