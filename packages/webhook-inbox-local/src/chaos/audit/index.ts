/**
 * The auditor of a fault-injection run. It trusts only the providers' own records (what each
 * completed, every attempt, final states, the task stores the APIs served) and checks the inbox
 * against them, one audit per invariant, in this order:
 *
 * - every completed result stored exactly once: one inbox row per event id, none missing (lost),
 *   none that no provider completed (a test delivery, a forgery, a stale or replayed request);
 * - processed exactly once: every result row PROCESSED, at most one `processed` log line per row,
 *   each effect key dispatched once, except the documented same-key repeat after a worker died
 *   after sending (counted apart);
 * - the right winner per job, recomputed from the provider's record: the most recently created
 *   COMPLETED task wins, a FAILED task never replaces a COMPLETED one;
 * - no altered body accepted: each row's digest is the provider's original (or, for a row fed by
 *   polling, a body the provider's API served), every altered copy quarantined;
 * - poison rows DEAD with their message in the DLQ (dead-lettered, not lost);
 * - missing resources settled as unavailable, with no effect;
 * - every request of every batch (the batch API's own record) stored as exactly one row with one
 *   `BatchChildSettled` effect naming its terminal state, and each batch one `BatchSettled`;
 * - a submission whose deadline passed unread settled unavailable, with its `ResourceUnavailable`
 *   event, and the near-deadline alarm raised;
 * - a downstream outage longer than a row's retry budget dead-letters nothing but the poison rows:
 *   every row it touched is processed once, and the breaker opened and closed again;
 * - the rows the work queue's outage stranded enqueued again within two reconciler runs of coming
 *   due, however many there were;
 * - every event GitHub (one attempt) and Stripe (gives up) made stored as one row and processed
 *   once, those lost at the endpoint recovered from the providers' APIs;
 * - no secret, body or signature in any line of the twin's logs.
 */
import { auditAdversaryAnswers, auditTestDeliveries } from './answers';
import { auditRouteFlood } from './throttling';
import { auditBatches } from './batches';
import { RunAudit } from './context';
import { auditHandlerCounts } from './counts';
import { auditDeadlines } from './deadlines';
import { auditDownstreamOutage } from './downstream-outage';
import { auditEffectsDispatched, auditEffectsOnce } from './effects';
import { Evidence, FAULT_KINDS, FaultKind } from './evidence';
import { auditAlarmsPaged, auditIamAllowed, auditLogsClean } from './operations';
import { auditQuarantine } from './quarantine';
import { auditProviderLogs } from './provider-logs';
import { auditQueueOutageDrained } from './recovery';
import type { ChaosReport } from './report';
import { auditBodiesSettled, auditCompleted, auditGivenUp, auditStoredOnce } from './stored';
import { auditWinners } from './winners';

export { FAULT_KINDS, type AdversaryRecord, type Evidence, type FaultKind } from './evidence';
export { formatReport, type ChaosReport } from './report';
export { scanLogs } from './logs';
export { outranks } from './winners';

export function audit(evidence: Evidence): ChaosReport {
  const run = new RunAudit(evidence);
  auditCompleted(run);
  auditStoredOnce(run);
  auditBodiesSettled(run);
  auditGivenUp(run);
  auditQuarantine(run);
  auditTestDeliveries(run);
  auditAdversaryAnswers(run);
  auditRouteFlood(run);
  const { winners, reversed } = auditWinners(run);
  auditEffectsOnce(run);
  auditEffectsDispatched(run, winners);
  auditHandlerCounts(run);
  auditBatches(run);
  auditDeadlines(run);
  auditQueueOutageDrained(run);
  auditDownstreamOutage(run);
  auditProviderLogs(run);
  auditLogsClean(run);
  auditIamAllowed(run);
  auditAlarmsPaged(run);
  const faults = auditRun(run, reversed);
  return {
    seed: evidence.plan.seed,
    deliveries: evidence.plan.deliveries,
    elapsedMs: evidence.elapsedMs,
    faults,
    figures: run.figures.rows(),
    metrics: run.metrics,
    violations: run.violations,
    uncalled: evidence.uncalled,
    notes: run.notes,
  };
}

/**
 * The run itself: its own actions raised no error; the faults it injected, counted from the records
 * where they show there (realized reverse arrivals, disables, 429s served); and what it saw.
 */
function auditRun({ evidence, violation, notes }: RunAudit, reversed: number): Record<string, number> {
  if (evidence.errors.length) violation(`${evidence.errors.length} errors in the run's own actions`, evidence.errors);
  const derived: Partial<Record<FaultKind, number>> = {
    reverse_order: reversed,
    webhook_disabled: evidence.echonovaWebhook.disabledAt.length,
    rate_limited_poll: evidence.rateLimitedPolls,
  };
  const faults: Record<string, number> = {};
  for (const kind of [...FAULT_KINDS, 'worker_timeout', 'webhook_reenabled'] as const) faults[kind] = derived[kind] ?? evidence.faults[kind] ?? 0;
  const notInjected = FAULT_KINDS.filter((kind) => faults[kind] === 0);
  if (notInjected.length) notes.push(`fault kinds not injected this run: ${notInjected.join(', ')}`);
  if (evidence.uncalled.length) notes.push(`no function made the calls these fault kinds change: ${evidence.uncalled.join(', ')}`);
  const listed = (counts: Readonly<Record<string, number>>) =>
    Object.entries(counts)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ');
  if (Object.keys(evidence.awsCalls.changed).length) notes.push(`AWS calls the fault proxies changed: ${listed(evidence.awsCalls.changed)}`);
  if (Object.keys(evidence.awsCalls.made).length) notes.push(`AWS calls the functions made through them: ${listed(evidence.awsCalls.made)}`);
  if (evidence.alteredSkipped) notes.push(`${evidence.alteredSkipped} altered copies not sent: their original was never delivered`);
  const states = new Map<string, number>();
  for (const submission of evidence.submissions) states.set(submission.state, (states.get(submission.state) ?? 0) + 1);
  notes.push(`submissions: ${[...states].map(([name, count]) => `${name} ${count}`).join(', ') || 'none'}; app: ${JSON.stringify(evidence.appStats)}`);
  notes.push(
    `hosts: ${Object.entries(evidence.hostStats)
      .map(([name, stats]) => `${name} ${JSON.stringify(stats)}`)
      .join('; ')}`,
  );
  return faults;
}
