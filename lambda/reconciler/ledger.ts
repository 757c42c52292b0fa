import { EffectEvent, MetricName, PollingDefaults, ResourceUnavailableDetail, SubmissionState, UnavailableReason } from '../../lib/contract';
import { admitDelivery } from '../shared/admission';
import { BusEntry, BusSink } from '../shared/effects/sinks';
import { BodyStore } from '../shared/stores/body-store';
import { logReference, sha256Hex } from '../shared/runtime/digest';
import { deliveryKey, InboxStore } from '../shared/stores/inbox';
import { LEDGER_ONLY_PROVIDER, LedgerProvider } from '../shared/providers/polling';
import { PollResult } from '../shared/providers/provider-api';
import { Submission } from '../shared/stores/submission-record';
import { splitKey, SubmissionStore } from '../shared/stores/submission-store';
import { Telemetry } from '../shared/runtime/telemetry';
import { WorkQueue } from '../shared/stores/work-queue';
import { BATCH_RESULT_PAGING, BatchResultPaging, batchResultsDeadline, checkBatch } from './batches';
import { Outcome, settled } from './outcome';

export interface LedgerDependencies {
  readonly submissions: SubmissionStore;
  /** Every provider of the inbox by name: row keys, adapter, and poller when polled. */
  readonly providers: ReadonlyMap<string, LedgerProvider>;
  /** The most due submissions one run checks. */
  readonly batchSize: number;
  /** How long a recovered row is kept (its TTL), as a delivered row's. */
  readonly retentionSeconds: number;
  readonly bodies?: BodyStore;
  readonly inlineBodyBytes?: number;
  /** How long before its deadline a submission is looked at and, still unread, counted near its deadline. */
  readonly deadlineWarningMs: number;
  /** Where a `ResourceUnavailable` event goes (the inbox's bus); absent: the submission is settled without one. */
  readonly unavailableEvents?: { readonly bus: BusSink; readonly inboxName: string };
  /** How a batch's results are read: results a page, and the most pages one run reads of one batch. @default BATCH_RESULT_PAGING */
  readonly batchResultPaging?: BatchResultPaging;
}

/** What one run did to the ledger. */
export interface LedgerReport {
  /** Due submissions examined. */
  readonly checked: number;
  readonly delivered: number;
  readonly recovered: number;
  readonly unknown: number;
  readonly linked: number;
  /** Settled UNAVAILABLE: the provider answered 404/410, or the deadline passed unread. */
  readonly unavailable: number;
  /**
   * Checked within the deadline warning margin and still unread, or settled unread at the deadline
   * without a check inside the margin before (the SubmissionsNearDeadline metric).
   */
  readonly nearDeadline: number;
  /** Polled and not final yet. */
  readonly stillPending: number;
  readonly pollErrors: number;
  /** Providers that answered 429: polling them stopped for this run. */
  readonly rateLimited: number;
  /** Checked this run and still without a result (the OverdueSubmissions metric). */
  readonly overdue: number;
  /** Listed as due by an earlier horizon than their provider's: moved to it, not checked. */
  readonly rescheduled: number;
  /** Why the run stopped before its batch was done, if it did. */
  readonly stopped?: 'time_budget';
}

interface Shared {
  readonly deps: LedgerDependencies;
  readonly inbox: InboxStore;
  readonly queue: WorkQueue;
  readonly telemetry: Telemetry;
  readonly now: number;
  readonly counts: Counts;
  readonly remainingMs?: () => number;
}

type Counts = { -readonly [K in Exclude<keyof LedgerReport, 'stopped'>]: number };

/** Keeps a run's polls inside the Lambda timeout: one more request must fit, with this to spare. */
const TIME_BUDGET_MARGIN_MS = 5_000;
/** A key-only submission looks at this many job-ref entries (one task per key; a few rows at most). */
const JOB_REF_QUERY_LIMIT = 10;

/**
 * The ledger step of a reconciler run: each due submission (a bounded batch, earliest due
 * first, from the sharded awaiting index) is settled, or checked again later. All progress
 * lives in the items: every step is one conditional single-item write, so a run that stops
 * anywhere is continued by the next without losing or repeating anything.
 *
 * - a delivery row exists → DELIVERED (RECOVERED when an earlier run fed it by polling);
 * - key-only → resolved through the job-ref index (task id filled in): DELIVERED when a row
 *   exists, LINKED when only a submission by id with the same key exists; else overdue;
 * - else poll the provider: final → the same conditional insert as the verifier (row marked
 *   recovered), enqueued → RECOVERED; 404 → UNKNOWN; not final → checked again after
 *   `recheck`; 429 → that provider is not polled again this run; other errors → counted,
 *   checked again next run.
 */
export async function reconcileLedger(
  deps: LedgerDependencies,
  context: {
    inbox: InboxStore;
    queue: WorkQueue;
    telemetry: Telemetry;
    now: number;
    remainingMs?: () => number;
    /** Also take submissions due within this long (a settlement run: a pending task is asked again now). */
    lookaheadMs?: number;
  },
): Promise<LedgerReport> {
  const counts: Counts = {
    checked: 0,
    delivered: 0,
    recovered: 0,
    unknown: 0,
    linked: 0,
    unavailable: 0,
    nearDeadline: 0,
    stillPending: 0,
    pollErrors: 0,
    rateLimited: 0,
    overdue: 0,
    rescheduled: 0,
  };
  const shared: Shared = { deps, ...context, counts };
  const throttled = new Set<string>();
  let stopped: LedgerReport['stopped'];
  // The alarms need a data point every run, zero included.
  context.telemetry.count(MetricName.OVERDUE, undefined, 0);
  context.telemetry.count(MetricName.NEAR_DEADLINE, undefined, 0);

  const dueBy = context.now + (context.lookaheadMs ?? 0);
  for (const due of await deps.submissions.findDue(dueBy, deps.batchSize)) {
    const { provider } = splitKey(due.key);
    if (throttled.has(provider)) continue;
    const ledger = deps.providers.get(provider) ?? LEDGER_ONLY_PROVIDER;
    const budget = (ledger.poller?.timeoutMs ?? 0) + TIME_BUDGET_MARGIN_MS;
    if (context.remainingMs && context.remainingMs() < budget) {
      stopped = 'time_budget';
      break;
    }
    const submission = await deps.submissions.get(due.key);
    // The index lags the table a little: a submission settled, or checked and given a later due
    // time, a moment ago may still be listed at its old one. The item says.
    if (!submission || submission.state !== SubmissionState.AWAITING || (submission.dueAt ?? 0) > dueBy) continue;

    // Recorded with a shorter horizon than its provider's: not due yet, and not overdue either
    // (unless its deadline is near: then it is looked at now).
    const horizonDue = Math.min(ledger.poller ? submission.submittedAt + ledger.poller.horizonMs : 0, warningAt(submission, deps.deadlineWarningMs));
    if (horizonDue > context.now) {
      if (due.dueAt !== horizonDue && (await deps.submissions.reschedule(submission.key, horizonDue))) counts.rescheduled += 1;
      continue;
    }

    counts.checked += 1;
    const outcome = againstDeadline(await check(submission, ledger, shared), submission, context.now, deps.deadlineWarningMs);
    await apply(submission, outcome, ledger, shared);
    if (outcome.kind === 'rate_limited') throttled.add(provider);
  }
  return { ...counts, ...(stopped ? { stopped } : {}) };
}

async function check(submission: Submission, ledger: LedgerProvider, shared: Shared): Promise<Outcome> {
  const { now } = shared;
  const recheckMs = ledger.poller?.recheckMs ?? LEDGER_ONLY_RECHECK_MS;
  if (submission.expiresAt * 1000 <= now) return settled(SubmissionState.UNKNOWN, 'expired');

  if (submission.taskId === undefined) return resolveByKey(submission, ledger, shared, recheckMs);
  if (submission.batch) return batchOutcome(submission, ledger, shared, recheckMs);

  const row = await existingRow(submission.provider, submission.taskId, ledger, shared.inbox);
  if (row) return settled(row.recovered ? SubmissionState.RECOVERED : SubmissionState.DELIVERED, row.recovered ? 'recovered' : 'delivered');
  if (!ledger.poller?.api || !ledger.adapter) return { kind: 'recheck', dueAt: now + recheckMs, lastCheck: 'no_delivery' };

  const result = await ledger.poller.api.fetchTask(submission.taskId).catch((): PollResult => ({ kind: 'error', detail: 'client_error' }));
  switch (result.kind) {
    case 'final':
      return feed(submission, result, ledger, shared);
    case 'pending':
      return { kind: 'recheck', dueAt: now + recheckMs, lastCheck: `pending:${result.status}` };
    case 'not_found':
      return settled(SubmissionState.UNAVAILABLE, UnavailableReason.NOT_FOUND);
    case 'rate_limited':
      return { kind: 'rate_limited' };
    case 'error':
      // Due again at once, behind everything already due: a failing task never holds up the rest.
      return { kind: 'recheck', dueAt: now, lastCheck: `error:${result.detail}` };
  }
}

/** A provider without polling is checked for a delivery this often. */
export const LEDGER_ONLY_RECHECK_MS = PollingDefaults.ledgerOnly.recheckSeconds * 1000;

/** When a submission's provider resource is gone, epoch ms: a batch's results deadline, or the recorded one; undefined without. */
function deadlineOf(submission: Submission): number | undefined {
  return submission.batch ? batchResultsDeadline(submission) : submission.deadlineAt;
}

/** When a submission enters its deadline's warning margin, epoch ms; Infinity without a deadline. */
function warningAt(submission: Submission, warningMs: number): number {
  const deadline = deadlineOf(submission);
  return deadline === undefined ? Infinity : deadline - warningMs;
}

/**
 * A check without a result, held against the submission's deadline: past it, the resource is
 * taken as gone (UNAVAILABLE, `deadline_passed`); before it, the next check comes no later than
 * the warning margin's start, and then no later than the deadline itself, so that the last look
 * happens before the resource disappears. Inside the margin it is counted near its deadline.
 * Runs can miss the margin (a deadline shorter than the schedule's rate, runs that failed, ran
 * late or stopped at their time budget): a deadline that passes unread with no check inside the
 * margin is counted near its deadline when it is settled, so the alarm never misses one.
 * A check in progress (a batch whose results are being read, page after page) is never cut short
 * by the deadline: the provider still serves them, and its 404 is the answer that they are gone.
 */
function againstDeadline(outcome: Outcome, submission: Submission, now: number, warningMs: number): Outcome {
  const deadline = deadlineOf(submission);
  if (deadline === undefined || outcome.kind === 'settled') return outcome;
  const inProgress = outcome.kind === 'recheck' && outcome.inProgress === true;
  const warning = deadline - warningMs;
  if (now >= deadline && !inProgress) {
    const counted = submission.checkedAt !== undefined && submission.checkedAt >= warning;
    return { ...settled(SubmissionState.UNAVAILABLE, UnavailableReason.DEADLINE_PASSED), nearDeadline: !counted };
  }
  const nearDeadline = now >= warning;
  if (outcome.kind === 'rate_limited') return { ...outcome, nearDeadline };
  return { ...outcome, dueAt: Math.min(outcome.dueAt, nearDeadline ? deadline : warning), nearDeadline };
}

/** A batch: polled through its provider's batch API, its results fed a page at a time (`./batches`). */
function batchOutcome(submission: Submission, ledger: LedgerProvider, shared: Shared, recheckMs: number): Promise<Outcome> | Outcome {
  const { deps, now, inbox, queue, telemetry, remainingMs } = shared;
  const api = ledger.poller?.batches;
  if (!api || !ledger.adapter) return { kind: 'recheck', dueAt: now + recheckMs, lastCheck: 'error:not_a_batch_provider' };
  const budget = ledger.poller!.timeoutMs + TIME_BUDGET_MARGIN_MS;
  return checkBatch(submission, {
    submissions: deps.submissions,
    stores: { ...deps, inbox, queue },
    telemetry,
    adapter: ledger.adapter,
    api,
    now,
    recheckMs,
    paging: deps.batchResultPaging ?? BATCH_RESULT_PAGING,
    hasTime: () => !remainingMs || remainingMs() >= budget,
  });
}

/** The delivery row of a task, if one exists: Answerline has one event id per task, Echonova one per final event. */
async function existingRow(provider: string, taskId: string, ledger: LedgerProvider, inbox: InboxStore): Promise<{ recovered: boolean } | undefined> {
  for (const eventId of ledger.profile.eventIdsOf(taskId)) {
    const original = await inbox.originalOf(deliveryKey(provider, eventId));
    if (original) return original;
  }
  return undefined;
}

/** A key-only submission: one query of the job-ref index finds its delivery, or a submission by id. */
async function resolveByKey(submission: Submission, ledger: LedgerProvider, shared: Shared, recheckMs: number): Promise<Outcome> {
  const entries = await shared.deps.submissions.findByJobRef(submission.provider, submission.idempotencyKey!, JOB_REF_QUERY_LIMIT);
  const delivery = entries.find((entry) => entry.kind === 'delivery');
  if (delivery) return settled(SubmissionState.DELIVERED, 'delivered_by_key', ledger.profile.taskIdOf(splitKey(delivery.key).rest));
  const byId = entries.find((entry) => entry.kind === 'submission' && entry.key !== submission.key);
  if (byId) return settled(SubmissionState.LINKED, 'linked_by_key', splitKey(byId.key).rest);
  return { kind: 'recheck', dueAt: shared.now + recheckMs, lastCheck: 'awaiting_key' };
}

/**
 * A final result goes through the same conditional insert as a delivery, marked recovered, then
 * to the work queue. When the insert finds a row, a delivery (or an earlier run) won: fine.
 */
async function feed(submission: Submission, result: Extract<PollResult, { kind: 'final' }>, ledger: LedgerProvider, shared: Shared): Promise<Outcome> {
  const { deps, now, inbox, queue, telemetry } = shared;
  const adapter = ledger.adapter!;
  const admission = adapter.admit(result.headers, result.body);
  if (admission.kind !== 'event') return { kind: 'recheck', dueAt: now, lastCheck: 'error:unadmissible' };
  const admitted = await admitDelivery(
    { ...deps, inbox, queue },
    {
      provider: submission.provider,
      eventId: admission.eventId,
      body: result.body,
      digest: sha256Hex(result.body),
      meta: adapter.metadata(result.headers),
      now,
      jobRef: admission.jobRef,
      recovered: true,
    },
  );
  if (admitted.kind === 'exists') {
    return admitted.original?.recovered ? settled(SubmissionState.RECOVERED, 'recovered') : settled(SubmissionState.DELIVERED, 'delivered_during_poll');
  }
  // The row is pending: the sweep enqueues it again.
  if (admitted.enqueueError !== undefined) telemetry.count(MetricName.ENQUEUE_FAILED, submission.provider);
  return settled(SubmissionState.RECOVERED, 'recovered');
}

/** Writes the outcome (one conditional update) and counts it once, when the write took effect. */
async function apply(submission: Submission, outcome: Outcome, ledger: LedgerProvider, shared: Shared): Promise<void> {
  const { deps, now, telemetry, counts } = shared;
  const { provider, key } = submission;
  const fields = { provider, submissionRef: logReference(key), checks: submission.checks + 1 };
  if (outcome.kind === 'rate_limited') {
    // Left as it is: first in line next run.
    counts.rateLimited += 1;
    counts.overdue += 1;
    telemetry.count(MetricName.POLL_RATE_LIMITED, provider);
    telemetry.count(MetricName.OVERDUE, provider);
    countNearDeadline(outcome, provider, shared);
    telemetry.log('WARN', 'submission', { ...fields, lastCheck: 'rate_limited' });
    return;
  }
  if (outcome.kind === 'recheck') {
    if (!(await deps.submissions.recheck(key, outcome.dueAt, outcome.lastCheck, now))) return;
    if (!outcome.inProgress) {
      counts.overdue += 1;
      telemetry.count(MetricName.OVERDUE, provider);
    }
    countNearDeadline(outcome, provider, shared);
    if (outcome.lastCheck.startsWith('pending:')) {
      counts.stillPending += 1;
      telemetry.count(MetricName.STILL_PENDING, provider);
    } else if (outcome.lastCheck.startsWith('error:')) {
      counts.pollErrors += 1;
      telemetry.count(MetricName.POLL_ERRORS, provider);
    }
    telemetry.log(outcome.lastCheck.startsWith('error:') ? 'WARN' : 'INFO', 'submission', {
      ...fields,
      lastCheck: outcome.lastCheck,
      polled: Boolean(ledger.poller),
    });
    return;
  }
  // The operator's decision is asked for before the submission leaves AWAITING: a run that dies
  // in between asks again (the same effect key), never not at all.
  if (outcome.state === SubmissionState.UNAVAILABLE && !(await announceUnavailable(submission, outcome.lastCheck, shared))) return;
  if (!(await deps.submissions.settle(key, outcome.state, outcome.lastCheck, now, outcome.taskId))) return;
  switch (outcome.state) {
    case SubmissionState.DELIVERED:
      counts.delivered += 1;
      break;
    case SubmissionState.RECOVERED:
      counts.recovered += 1;
      // A batch's rows are its children and its summary: counted as such, not as one recovered result.
      telemetry.count(submission.batch ? MetricName.BATCHES_SETTLED : MetricName.RECOVERED, provider);
      break;
    case SubmissionState.UNKNOWN:
      counts.unknown += 1;
      telemetry.count(MetricName.UNKNOWN_SUBMISSIONS, provider);
      break;
    case SubmissionState.LINKED:
      counts.linked += 1;
      break;
    case SubmissionState.UNAVAILABLE:
      counts.unavailable += 1;
      telemetry.count(MetricName.RESOURCE_UNAVAILABLE, provider);
      countNearDeadline(outcome, provider, shared);
      break;
  }
  const warn = outcome.state === SubmissionState.UNKNOWN || outcome.state === SubmissionState.UNAVAILABLE;
  telemetry.log(warn ? 'WARN' : 'INFO', 'submission', { ...fields, state: outcome.state, lastCheck: outcome.lastCheck });
}

function countNearDeadline(outcome: { readonly nearDeadline?: boolean }, provider: string, shared: Shared): void {
  if (!outcome.nearDeadline) return;
  shared.counts.nearDeadline += 1;
  shared.telemetry.count(MetricName.NEAR_DEADLINE, provider);
}

/** The ResourceUnavailable event of a submission; its key is the same on every run. */
function unavailableEntry(inboxName: string, submission: Submission, reason: string, now: number): BusEntry {
  const deadline = deadlineOf(submission);
  const detail: ResourceUnavailableDetail = {
    schemaVersion: EffectEvent.SCHEMA_VERSION,
    inbox: inboxName,
    provider: submission.provider,
    effectKey: `${inboxName}|${submission.key}|unavailable`,
    submissionKey: submission.key,
    reason,
    submittedAt: new Date(submission.submittedAt).toISOString(),
    detectedAt: new Date(now).toISOString(),
    ...(submission.taskId !== undefined ? { taskId: submission.taskId } : {}),
    ...(submission.idempotencyKey !== undefined ? { idempotencyKey: submission.idempotencyKey } : {}),
    ...(deadline !== undefined ? { deadline: new Date(deadline).toISOString() } : {}),
    ...(submission.batch ? { childCount: submission.batch.childCount, childrenRead: submission.batch.read } : {}),
  };
  return { detailType: EffectEvent.RESOURCE_UNAVAILABLE, detailJson: JSON.stringify(detail) };
}

/** Puts the ResourceUnavailable event on the bus; false (counted, left AWAITING for the next run) when the bus refused it. */
async function announceUnavailable(submission: Submission, reason: string, shared: Shared): Promise<boolean> {
  const events = shared.deps.unavailableEvents;
  if (!events) return true;
  // A batch's tally may have moved during this check: the event names the children stored by now.
  const current = submission.batch ? ((await shared.deps.submissions.get(submission.key)) ?? submission) : submission;
  const [outcome] = await events.bus.dispatch([unavailableEntry(events.inboxName, current, reason, shared.now)]);
  if (outcome.ok) return true;
  shared.telemetry.count(MetricName.EFFECT_FAILURES, submission.provider);
  shared.telemetry.log('WARN', 'resource unavailable event failed', {
    provider: submission.provider,
    submissionRef: logReference(submission.key),
    error: outcome.error.name,
  });
  return false;
}
