/**
 * After the work queue was down, the rows it stranded are enqueued again at the queue's pace, not
 * a few a run. Stated here: a row the verifier admitted while the queue was down has no message;
 * it is owed from `sweepAfter` after its admission on, and the reconciler must enqueue it again
 * (restarting its pending clock then) before more than two reconciler runs have ended since: the
 * run under way when it came due, or the next one, or (when AWS throttled that run's sends) the one
 * after. However many rows the outage stranded, no count per run may hold them back longer.
 */
import { DeliveryStatus } from '../../../../../lib/contract';
import { RunAudit, sourceOf } from './context';

/** Reconciler runs that may end between a stranded row coming due and its new message. */
export const RUNS_TO_RECOVER = 2;

/** When each reconciler run's sweep ended (epoch ms, in order): the times of its `sweep` lines. */
function sweepEnds(run: RunAudit): number[] {
  return run.logs
    .filter((file) => /reconciler\.log$/i.test(file.name))
    .flatMap((file) => file.lines.filter((line) => line.includes('"message":"sweep"')))
    .map((line) => Date.parse((JSON.parse(line) as { time: string }).time))
    .sort((a, b) => a - b);
}

export function auditQueueOutageDrained(run: RunAudit): void {
  const { evidence, figures, violation, notes } = run;
  const outage = evidence.queueOutage;
  if (!outage) return;
  const sweepAfterMs = evidence.plan.profile.sweepAfterSeconds * 1000;
  const ends = sweepEnds(run);
  // Admitted while the queue was down, and enqueued again by the sweep: its clock restarted after
  // its admission. A row processed at its first attempt kept that clock since (a failed attempt
  // would restart it again, later); a row fed by polling was never owed by the sweep.
  const stranded = evidence.rows.filter(
    (row) =>
      !row.recovered &&
      row.status === DeliveryStatus.PROCESSED &&
      row.attempts === 1 &&
      row.receivedAt !== undefined &&
      row.pendingSince !== undefined &&
      row.receivedAt >= outage.downAt &&
      row.receivedAt <= outage.upAt &&
      row.pendingSince > row.receivedAt,
  );
  const late: string[] = [];
  let worstRuns = 0;
  let lastSent = outage.upAt;
  for (const row of stranded) {
    const due = row.receivedAt! + sweepAfterMs;
    const runs = ends.filter((end) => end > due && end < row.pendingSince!).length;
    worstRuns = Math.max(worstRuns, runs);
    lastSent = Math.max(lastSent, row.pendingSince!);
    figures.add('stranded by the queue outage, enqueued again', sourceOf(row.key));
    if (runs > RUNS_TO_RECOVER) late.push(`${row.key}: ${runs} reconciler runs ended between its coming due and its new message`);
  }
  figures.ensure('stranded by the queue outage, enqueued again');
  if (late.length)
    violation(
      `${late.length} of the ${stranded.length} rows the queue outage stranded were enqueued again only after more than ${RUNS_TO_RECOVER} reconciler runs had ended since they came due`,
      late,
    );
  notes.push(
    `queue outage of ${((outage.upAt - outage.downAt) / 1000).toFixed(1)} s: ${stranded.length} rows stranded, the last enqueued again ` +
      `${((lastSent - outage.upAt) / 1000).toFixed(1)} s after the queue came back (sweepAfter ${sweepAfterMs / 1000} s), ` +
      `each within ${worstRuns} reconciler runs of coming due`,
  );
}
