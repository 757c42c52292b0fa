/**
 * What every audit of a run reads, indexed once (the inbox rows by key, the results the providers
 * completed by inbox key, the twin's logs and the metrics in them), and where each audit writes
 * what it finds: figures, violations and notes, in the order the audits run.
 */
import type { DeliveryRecord } from '../../providers/sender';
import type { Provider } from '../plan';
import type { Evidence, InboxRow } from './evidence';
import { countLinesByEvent, emfTotals, LogFile, readLogs } from './logs';
import { Figures, Source } from './report';

/** Examples a violation names at most. */
export const EXAMPLES = 5;

export class RunAudit {
  /** Inbox rows by key. */
  readonly rows: ReadonlyMap<string, InboxRow>;
  /** What the providers completed (results and poison results), by inbox key: what must be stored. */
  readonly originals = new Map<string, DeliveryRecord>();
  /** Inbox keys of the messages found in the DLQ. */
  readonly deadLettered: ReadonlySet<string>;
  /** The twin's log files, read once: the effects, metrics and leak checks all scan them. */
  readonly logs: readonly LogFile[];
  /** The processor's `processed` lines by event reference: a row completed twice logs it twice. */
  readonly processedLines: ReadonlyMap<string, number>;
  /** The handlers' own metrics (their EMF lines), summed over the run: what an operator's dashboard would show. */
  readonly metrics: Readonly<Record<string, number>>;
  readonly figures = new Figures();
  readonly violations: string[] = [];
  readonly notes: string[] = [];

  constructor(readonly evidence: Evidence) {
    this.rows = new Map(evidence.rows.map((row) => [row.key, row]));
    for (const delivery of evidence.deliveries) {
      if (delivery.kind === 'result' || delivery.kind === 'poison') this.originals.set(delivery.eventKey, delivery);
    }
    this.deadLettered = new Set(evidence.deadLettered);
    this.logs = readLogs(evidence.logDir);
    this.processedLines = countLinesByEvent(this.logs, 'processed');
    this.metrics = emfTotals(this.logs);
  }

  /** A rule broken, with its first few examples. */
  readonly violation = (what: string, examples: readonly string[] = []): void => {
    this.violations.push(examples.length ? `${what} (e.g. ${examples.slice(0, EXAMPLES).join(', ')})` : what);
  };

  /** What the handlers counted of a metric over the run. */
  readonly counted = (name: string): number => this.metrics[name] ?? 0;
}

/** The provider (or the batch API) an inbox key belongs to: its prefix before `#`. */
export function providerOf(key: string): Provider {
  return key.slice(0, key.indexOf('#')) as Provider;
}

export function sourceOf(key: string): Source {
  return key.slice(0, key.indexOf('#')) as Source;
}

/** The task id behind an inbox key of a polled provider. */
export function taskIdOf(provider: Provider, key: string): string {
  const eventId = key.slice(provider.length + 1);
  // Echonova keys a job's final event by `<escaped jobId>:job` (echonovaJobEventKey).
  return provider === 'echonova' ? decodeURIComponent(eventId.replace(/:job$/, '')) : eventId;
}

export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
