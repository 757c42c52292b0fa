/** Plain-text rendering of the command reports: aligned columns, no colours, nothing secret. */
import { BreakerState } from '../lib/contract';
import { EventsReport } from './commands/events';
import { FlowReport, ResumeReport } from './commands/flow';
import { HashReport } from './commands/hash';
import { InspectReport } from './commands/inspect';
import { QuarantineReport, RejectedReport } from './commands/quarantine';
import { ReconcileReport } from './commands/reconcile';
import { RedriveReport } from './commands/redrive';
import { ReplayReport } from './commands/replay';
import { BoundedCount, StatusReport } from './commands/status';

/** Rows of cells as aligned columns (two spaces apart, trailing space trimmed). */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, i) => cell.padEnd(widths[i]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

const bounded = (value: BoundedCount): string => `${value.atLeast ? '≥' : ''}${value.count}`;
const items = (count: number): string => `${count} item${count === 1 ? '' : 's'}`;

export function formatStatus(report: StatusReport): string {
  const rows: string[][] = [
    ['inbox', report.inboxName, ''],
    ['work queue', `${report.workQueue.visible} visible, ${report.workQueue.inFlight} in flight`, 'approximate (SQS)'],
    [
      'dead-letter queue',
      report.deadLetterQueue ? `${report.deadLetterQueue.visible} visible, ${report.deadLetterQueue.inFlight} in flight` : 'none configured',
      report.deadLetterQueue && report.deadLetterQueue.visible + report.deadLetterQueue.inFlight > 0 ? 'remedy: webhook-inbox redrive' : '',
    ],
    [
      'stranded rows',
      bounded(report.stranded),
      `pending > ${Math.round(report.stranded.olderThanSeconds / 60)} min (16 bounded index queries); the reconciler sweeps them`,
    ],
    [
      'quarantined copies',
      report.quarantined ? String(report.quarantined.count) : 'not counted (--skip-scan)',
      report.quarantined ? `Scan read ${items(report.quarantined.itemsRead)}; list: webhook-inbox quarantine` : '',
    ],
    [
      'overdue submissions',
      report.submissions ? bounded(report.submissions.overdue) : 'n/a',
      report.submissions
        ? `due for a check now (past their horizon, no result) of ${bounded(report.submissions.awaiting)} awaiting`
        : 'the inbox table has no awaiting index (no submission ledger)',
    ],
    ...flowRows(report.flow),
  ];
  return table(rows);
}

/** The flow-control lines of `status`, `pause` and `resume`. */
function flowRows(flow: FlowReport): string[][] {
  const { paused, breaker, waiting } = flow;
  const breakerNote =
    breaker.state === BreakerState.CLOSED
      ? `opened ${breaker.openings} time${breaker.openings === 1 ? '' : 's'}`
      : `since ${breaker.openedAt}: ${breaker.reason ?? ''}${breaker.probeSuccesses !== undefined ? `; ${breaker.probeSuccesses} probe(s) succeeded` : ''}`;
  return [
    ['processing', paused ? `PAUSED since ${paused.since}` : 'running', paused ? `by ${paused.by ?? 'unknown'}; remedy: webhook-inbox resume` : ''],
    ['circuit breaker', breaker.state, breakerNote],
    ['waiting rows', bounded(waiting), 'neither processed nor dead, in the pending index (what a resume enqueues)'],
  ];
}

export function formatFlow(flow: FlowReport): string {
  return table(flowRows(flow));
}

export function formatResume(report: ResumeReport): string {
  const swept = typeof report.reconciler.swept === 'number' ? report.reconciler.swept : 0;
  return `${formatFlow(report)}resumed: the reconciler enqueued ${swept} waiting row${swept === 1 ? '' : 's'}\n`;
}

export function formatRedrive(report: RedriveReport): string {
  return (
    `moved ${report.moved} message${report.moved === 1 ? '' : 's'} from the dead-letter queue to the work queue\n` +
    `revived ${report.revived} DEAD row${report.revived === 1 ? '' : 's'} (RECEIVED again, with a fresh budget of attempts)\n` +
    (report.failed > 0 ? `${report.failed} could not be sent; they return to the dead-letter queue after its visibility timeout\n` : '') +
    (report.refused
      ? `${report.refused} left in the dead-letter queue: their key is not a delivery row's (docs/RUNBOOK.md#metrics-without-an-alarm-worth-a-look)\n`
      : '')
  );
}

export function formatReplay(report: ReplayReport): string {
  const lines: string[] = [];
  if (report.itemsRead !== undefined) lines.push(`Scan read ${items(report.itemsRead)}; ${report.rows.length} delivery rows in the range`);
  if (report.rows.length > 0) {
    lines.push(table([['KEY', 'STATUS', 'ACTION'], ...report.rows.map((row) => [row.key, row.status ?? '-', describeAction(row.action)])]).trimEnd());
  }
  lines.push(
    `enqueued ${report.enqueued} (${report.reset} reset to RECEIVED), skipped ${report.skipped}` +
      (report.notFound > 0 ? `, not found ${report.notFound}` : '') +
      (report.refused ? `, refused ${report.refused} (not a delivery row's key)` : ''),
  );
  if (report.skipped > 0) lines.push('PROCESSED rows are skipped; --force processes them again (same job and effect keys)');
  return lines.join('\n') + '\n';
}

function describeAction(action: string): string {
  switch (action) {
    case 'reset':
      return 'reset to RECEIVED, enqueued';
    case 'skipped':
      return 'skipped (PROCESSED; use --force)';
    case 'not_found':
      return 'not found';
    case 'refused':
      return "refused (not a delivery row's key)";
    default:
      return action;
  }
}

/** How an inspected row's body is placed, in words (a body in S3 names its key). */
const BODY_PLACES: Partial<Record<string, string>> = { inline: 'inline in the row', item: 'in an item of its own beside the row' };

export function formatInspect(report: InspectReport): string {
  const { row } = report;
  const body = `${row.body.bytes === undefined ? 'size unknown' : `${row.body.bytes} bytes`}, ${BODY_PLACES[row.body.where] ?? `in S3 (${row.body.reference})`}`;
  const rows: string[][] = [
    ['key', row.key],
    ['provider', row.provider],
    ['eventId', row.eventId],
    ['status', row.status],
    ['attempts', String(row.attempts)],
    ['outcome', row.outcome ?? '-'],
    ['digest', row.digest],
    ['receivedAt', row.receivedAt ?? '-'],
    ['processedAt', row.processedAt ?? '-'],
    ...(row.pendingSince ? [['pendingSince', row.pendingSince]] : []),
    ...(row.leaseUntil ? [['leaseUntil', row.leaseUntil]] : []),
    ['lastError', row.lastError ?? '-'],
    ['body', body],
    [
      'meta',
      Object.keys(row.meta).length === 0
        ? '-'
        : Object.entries(row.meta)
            .map(([name, value]) => `${name}=${value}`)
            .join(', '),
    ],
    ['job', jobLine(report)],
  ];
  let text = table(rows);
  if (report.quarantined.length === 0) return text + 'quarantined copies: none\n';
  text += `quarantined copies: ${report.quarantined.length}\n`;
  text += table([
    ['  DIGEST', 'COUNT', 'FIRST SEEN', 'LAST SEEN'],
    ...report.quarantined.map((copy) => [`  ${copy.digest}`, String(copy.count), copy.firstSeen ?? '-', copy.lastSeen ?? '-']),
  ]);
  return text;
}

function jobLine(report: InspectReport): string {
  if (report.jobNote) return report.jobNote;
  const job = report.job;
  if (!job) return '- (this delivery reports no final result of a job)';
  if (job.status === undefined) return `${job.jobKey}: no result stored yet`;
  return `${job.jobKey}: ${job.status}, task ${job.taskId ?? '-'} (${job.decidedByThisDelivery ? 'decided by this delivery' : 'decided by another delivery'})`;
}

export function formatReconcile(report: ReconcileReport): string {
  return table(Object.entries(report).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]));
}

export function formatHash(report: HashReport): string {
  return `${report.field} ${report.reference}\n\nCloudWatch Logs Insights, over the verifier's and the processor's log groups:\n${report.query}\n`;
}

export function formatQuarantine(report: QuarantineReport): string {
  const header = `Scan read ${items(report.itemsRead)}; ${report.copies.length} quarantined cop${report.copies.length === 1 ? 'y' : 'ies'}\n`;
  if (report.copies.length === 0) return header;
  return (
    header +
    table([
      ['KEY', 'DIGEST', 'COUNT', 'FIRST SEEN', 'LAST SEEN'],
      ...report.copies.map((copy) => [copy.key, copy.digest, String(copy.count), copy.firstSeen ?? '-', copy.lastSeen ?? '-']),
    ])
  );
}

export function formatRejected(report: RejectedReport): string {
  const header = `${report.records.length} rejection record${report.records.length === 1 ? '' : 's'} of ${report.providers.join(', ')} since ${report.since}${report.truncated ? ' (limit reached: there are more, use --since or --limit)' : ''}\n`;
  if (report.records.length === 0) return header;
  return (
    header +
    table([
      // eslint-disable-next-line no-restricted-syntax -- a column heading (when it was received), not a status
      ['RECEIVED', 'PROVIDER', 'REASON', 'STATUS', 'SOURCE', 'BODY BYTES', 'DIGEST', 'HEADER NAMES'],
      ...report.records.map((record) => [
        record.receivedAt,
        record.provider,
        record.reason,
        String(record.httpStatus),
        record.sourceHash ?? '-',
        String(record.bodyBytes),
        record.digest,
        record.headerNames.join(',') + (record.headerNamesTruncated ? ',…' : ''),
      ]),
    ])
  );
}

/** A detail field for a column: strings only, control characters replaced so that an event stays on its line. */
function detailCell(detail: Readonly<Record<string, unknown>>, field: string): string {
  const value = detail[field];
  return typeof value === 'string' && value !== '' ? value.replace(/[\u0000-\u001f\u007f]/g, '?') : '-';
}

/** The events report's first line: how many, of which inbox and bus, from which log. */
function describeEventsSource(report: EventsReport): string {
  const filters = [report.bus === undefined ? 'any bus' : `bus ${report.bus}`, ...(report.detailType === undefined ? [] : [report.detailType])].join(', ');
  return `${report.events.length} of ${report.matched} effect event${report.matched === 1 ? '' : 's'} of inbox ${report.inboxName} (${filters}), newest last, from ${report.eventsLog}`;
}

export function malformedLinesNote(report: EventsReport): string | undefined {
  if (report.malformedLines === 0) return undefined;
  return `skipped ${report.malformedLines} malformed line${report.malformedLines === 1 ? '' : 's'} of ${report.eventsLog}`;
}

export function formatEvents(report: EventsReport): string {
  const note = malformedLinesNote(report);
  const rows =
    report.events.length === 0
      ? ''
      : table([
          ['TIME', 'DETAIL TYPE', 'EVENT KEY', 'JOB KEY', 'STATUS'],
          ...report.events.map((event) => [
            event.time,
            event.detailType,
            detailCell(event.detail, 'eventKey'),
            detailCell(event.detail, 'jobKey'),
            detailCell(event.detail, 'status'),
          ]),
        ]);
  return `${describeEventsSource(report)}\n${rows}${note === undefined ? '' : `${note}\n`}`;
}
