/**
 * The report of a fault-injection run: its figures by provider (the batch API apart) and in
 * total, the faults injected, the handlers' own metrics, and what the auditor found.
 */
import { MetricName } from '../../../../../lib/contract';
import type { Provider } from '../plan';

const PROVIDERS: readonly Provider[] = ['answerline', 'echonova', 'standard-webhooks'];
/** The batch API's column: its rows are keyed `batches#…`. */
export const BATCHES = 'batches';
export type Source = Provider | typeof BATCHES;
const SOURCES: readonly Source[] = [...PROVIDERS, BATCHES];
export type Column = Source | 'total';

export interface ChaosReport {
  readonly seed: number;
  readonly deliveries: number;
  readonly elapsedMs: number;
  readonly faults: Readonly<Record<string, number>>;
  /** Figures by provider and in total, in display order. */
  readonly figures: ReadonlyArray<{ readonly name: string; readonly values: Readonly<Record<Column, number>> }>;
  /** The handlers' own metrics (their EMF log lines), summed over the run. */
  readonly metrics: Readonly<Record<string, number>>;
  readonly violations: readonly string[];
  /** Fault kinds that could not be injected: no function made the calls they change. */
  readonly uncalled: readonly string[];
  readonly notes: readonly string[];
}

/** Figures by provider, with a total, in the order first seen. */
export class Figures {
  private readonly table = new Map<string, Record<Column, number>>();

  add(name: string, provider: Source, n = 1): void {
    const row = this.row(name);
    row[provider] += n;
    row.total += n;
  }

  set(name: string, column: Column, value: number): void {
    const row = this.row(name);
    if (column !== 'total') row.total += value - row[column];
    row[column] = value;
  }

  ensure(name: string): void {
    this.row(name);
  }

  rows(): Array<{ name: string; values: Record<Column, number> }> {
    return [...this.table].map(([name, values]) => ({ name, values }));
  }

  private row(name: string): Record<Column, number> {
    let row = this.table.get(name);
    if (!row) {
      row = { answerline: 0, echonova: 0, 'standard-webhooks': 0, batches: 0, total: 0 };
      this.table.set(name, row);
    }
    return row;
  }
}

/** The metrics the report shows, in order. */
const REPORTED_METRICS = [
  MetricName.ACCEPTED,
  MetricName.DUPLICATE,
  MetricName.QUARANTINED,
  MetricName.TEST_DELIVERY,
  MetricName.BAD_SIGNATURE,
  MetricName.STALE_TIMESTAMP,
  MetricName.STORE_ERROR,
  MetricName.ENQUEUE_FAILED,
  MetricName.SWEPT,
  MetricName.PROCESSED,
  MetricName.PROCESSING_FAILED,
  MetricName.DEAD_LETTERED,
  MetricName.WINNER_CHANGED,
  MetricName.EFFECTS_DISPATCHED,
  MetricName.EFFECT_FAILURES,
  MetricName.BREAKER_OPENED,
  MetricName.DEFERRED,
  MetricName.RESOURCE_UNAVAILABLE,
  MetricName.RECOVERED,
  MetricName.POLL_RATE_LIMITED,
  MetricName.POLL_ERRORS,
  MetricName.BATCH_CHILDREN_RECORDED,
  MetricName.BATCHES_SETTLED,
  MetricName.NEAR_DEADLINE,
];

/** The report as a text table. */
export function formatReport(report: ChaosReport): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const width = Math.max(...report.figures.map((f) => f.name.length), 40) + 2;
  const header = `${'figure'.padEnd(width)}${['answerline', 'echonova', 'std-webhooks', 'batches', 'total'].map((c) => c.padStart(13)).join('')}`;
  const lines = [
    `chaos run: seed ${report.seed}, ${n(report.deliveries)} result deliveries planned, ${(report.elapsedMs / 1000).toFixed(1)} s`,
    '',
    header,
    '-'.repeat(header.length),
    ...report.figures.map(
      (f) =>
        `${f.name.padEnd(width)}${([...SOURCES, 'total'] as Column[]).map((c) => (f.values[c] === 0 && c !== 'total' ? '·' : n(f.values[c])).padStart(13)).join('')}`,
    ),
    '',
    'faults injected',
    '---------------',
    ...Object.entries(report.faults).map(([kind, count]) => `${kind.replace(/_/g, ' ').padEnd(width)}${n(count).padStart(13)}`),
    '',
    'metrics the handlers emitted',
    '----------------------------',
    ...REPORTED_METRICS.map((name) => `${name.padEnd(width)}${n(report.metrics[name] ?? 0).padStart(13)}`),
    '',
    `elapsed ${(report.elapsedMs / 1000).toFixed(1)} s`,
    ...(report.notes.length ? ['', 'notes', ...report.notes.map((note) => `  - ${note}`)] : []),
    '',
    report.violations.length ? `VIOLATIONS (${report.violations.length})` : 'violations: none',
    ...report.violations.map((v) => `  ✗ ${v}`),
  ];
  return lines.join('\n');
}
