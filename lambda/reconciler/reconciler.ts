import { BreakerState, Defaults, MetricName, ReconcileRequest } from '../../lib/contract';
import { ProviderStatus } from '../shared/providers/provider-api';
import { settleEach } from '../shared/runtime/concurrency';
import { BoundedCount, ReadBound } from '../shared/stores/dynamo';
import { FlowState, FlowStore, RUNNING } from '../shared/stores/flow';
import { InboxStore } from '../shared/stores/inbox';
import { Telemetry } from '../shared/runtime/telemetry';
import { EnqueueError, WorkQueue } from '../shared/stores/work-queue';
import { refuseKey } from '../shared/refused-key';
import { LEDGER_ONLY_RECHECK_MS, LedgerDependencies, LedgerReport, reconcileLedger } from './ledger';
import { recoverFromLogs, RecoveryDependencies, RecoveryReport } from './recovery';

export interface ReconcilerDependencies {
  readonly inbox: InboxStore;
  readonly queue: WorkQueue;
  /** The flow-control item: while the inbox is paused the sweep enqueues nothing. Absent: never paused. */
  readonly flow?: FlowStore;
  readonly telemetry: Telemetry;
  readonly now: () => number;
  /** A row pending for longer than this is presumed stranded (its enqueue or its processing failed). */
  readonly sweepAfterMs: number;
  /** How much of the pending index one step of the sweep reads; a run takes steps while it has time. */
  readonly sweepStep: ReadBound;
  /** The submission ledger: due submissions are checked, and polled, beside the sweep. Absent: sweep only. */
  readonly ledger?: LedgerDependencies;
  /** Providers recovered from their own event log (GitHub, Stripe). Absent: none. */
  readonly recovery?: RecoveryDependencies;
}

/** What a settlement run found left: reconciliation is done when both say nothing. */
export interface Settlement {
  /** AWAITING submissions due now or within the lookahead (a pending task's next recheck). */
  readonly unsettled: BoundedCount;
  /** Each polled provider with a status endpoint: its own count of tasks not final yet, or why it could not say. */
  readonly providers: readonly ({ readonly provider: string } & (
    { readonly queuedTasks: number; readonly processingTasks: number } | { readonly error: string }
  ))[];
}

export interface ReconcileReport extends Partial<LedgerReport> {
  readonly swept: number;
  /** Set while the inbox is paused: the sweep enqueued nothing (docs/FLOW-CONTROL.md). */
  readonly paused?: true;
  /** Seconds between the sweep's last cutoff and its watermark when the run ended (0: caught up). */
  readonly sweepLagSeconds?: number;
  /** Only for a settlement run (the ops CLI's `reconcile --until-settled`). */
  readonly settlement?: Settlement;
  /** Each provider recovered from its event log: what this run found. */
  readonly recovery?: readonly RecoveryReport[];
}

/** The part of the Lambda context a run uses: how long it may still take. */
export interface RunContext {
  getRemainingTimeInMillis(): number;
}

/**
 * The reconciler: the sweep and the submission ledger, side by side (neither waits for the other's
 * time, and a failure of one does not keep the other from its work; the run fails if either did).
 *
 * The sweep (`sweep`): rows neither PROCESSED nor DEAD after `sweepAfterMs` are enqueued again,
 * found through the sharded sparse index from a saved watermark (never a scan), a bounded step at
 * a time, for as long as the run has time. Each row's clock restarts once it is enqueued, so a slow
 * backlog is not re-enqueued on every run.
 *
 * The ledger (see `./ledger`): due submissions without a delivery are polled, and final results
 * fed into the inbox, a bounded batch per run, every step a conditional single-item write.
 */
export function createReconciler(deps: ReconcilerDependencies) {
  return async (event?: unknown, context?: RunContext): Promise<ReconcileReport> => {
    const now = deps.now();
    const settling = isRequest(event, ReconcileRequest.UNTIL_SETTLED);
    const remainingMs = context ? () => context.getRemainingTimeInMillis() : undefined;
    try {
      const flow = await flowState(deps);
      const paused = flow.pausedAt !== undefined;
      // A resume's sweep takes every waiting row at once, not only those waiting longer than `sweepAfter`.
      const sweepAfterMs = isRequest(event, ReconcileRequest.RESUME) ? 0 : deps.sweepAfterMs;
      const lookaheadMs = settling && deps.ledger ? longestRecheckMs(deps.ledger) : 0;
      const [swept, ledger, recovery] = await Promise.allSettled([
        paused ? Promise.resolve(undefined) : sweep(deps, sweepAfterMs, remainingMs),
        deps.ledger
          ? reconcileLedger(deps.ledger, {
              inbox: deps.inbox,
              queue: deps.queue,
              telemetry: deps.telemetry,
              now,
              lookaheadMs,
              ...(remainingMs ? { remainingMs } : {}),
            })
          : undefined,
        deps.recovery ? recover(deps, deps.recovery, now, remainingMs) : undefined,
      ]);
      if (ledger.status === 'fulfilled' && ledger.value) {
        const report = ledger.value;
        const attention = report.overdue > 0 || report.unknown > 0 || report.unavailable > 0 || report.rateLimited > 0 || report.pollErrors > 0;
        deps.telemetry.log(attention ? 'WARN' : 'INFO', 'submissions', { ...report });
      }
      if (swept.status === 'rejected') throw swept.reason;
      if (ledger.status === 'rejected') throw ledger.reason;
      if (recovery.status === 'rejected') throw recovery.reason;
      const sweepReport = {
        ...(swept.value ? { swept: swept.value.swept, sweepLagSeconds: swept.value.lagSeconds } : { swept: 0, paused: true as const }),
        ...(recovery.value ? { recovery: recovery.value } : {}),
      };
      if (!deps.ledger || !ledger.value) return sweepReport;
      if (!settling) return { ...sweepReport, ...ledger.value };
      const settlement = await settlementOf(deps.ledger, now + lookaheadMs);
      deps.telemetry.log('INFO', 'settlement', { unsettled: settlement.unsettled.count, providers: settlement.providers.length });
      return { ...sweepReport, ...ledger.value, settlement };
    } finally {
      // Whatever was counted before a failure is emitted too; the items hold the progress.
      deps.telemetry.flush();
    }
  };
}

/**
 * The flow-control item, and its state as metrics (one value per run, so the breaker alarm sees it
 * open however little the processor runs); a paused run's sweep is logged here.
 */
async function flowState(deps: ReconcilerDependencies): Promise<FlowState> {
  const flow = deps.flow ? await deps.flow.read() : RUNNING;
  const paused = flow.pausedAt !== undefined;
  deps.telemetry.count(MetricName.PAUSED, undefined, paused ? 1 : 0);
  deps.telemetry.count(MetricName.BREAKER_OPEN, undefined, flow.breaker === BreakerState.CLOSED ? 0 : 1);
  if (paused) deps.telemetry.log('INFO', 'sweep', { swept: 0, paused: true, pausedSince: new Date(flow.pausedAt!).toISOString() });
  return flow;
}

/**
 * How much time the sweep leaves unused at the end of a run: for the run's last writes and its
 * metrics, beside the longest step it took (a step is not started unless one as long still fits).
 */
const SWEEP_TIME_MARGIN_MS = 5_000;

/** What a run's sweep did. */
interface SweepReport {
  readonly swept: number;
  readonly lagSeconds: number;
}

/**
 * The sweep: steps (`sweepStep`), one after the other, each from where the last one left the
 * watermark to a cutoff of its own (its start less `sweepAfter`), until one reaches its cutoff,
 * one makes no progress (the next run takes it up), one fails (the run fails), or the run has no
 * time left for another as long as its longest. The run's work therefore follows the backlog, not
 * a fixed count, and what it could not do waits for the next run, saved in the watermark; how much
 * that is, as time, goes out as `SweepLag`, which the sweep-lag alarm watches.
 */
async function sweep(deps: ReconcilerDependencies, sweepAfterMs: number, remainingMs?: () => number): Promise<SweepReport> {
  let swept = 0;
  let notSent = 0;
  let steps = 0;
  let lagMs: number | undefined;
  let stopped: 'time_budget' | 'no_progress' | undefined;
  let longestStepMs = 0;
  try {
    for (;;) {
      const startedWith = remainingMs?.();
      const step = await sweepStep(deps, deps.now(), sweepAfterMs);
      steps += 1;
      swept += step.sent;
      notSent += step.notSent;
      lagMs = Math.max(0, step.cutoff - step.examinedTo);
      if (step.failure !== undefined) throw step.failure;
      if (steps === 1) await deps.inbox.notePendingShards(step.recordedShards);
      if (lagMs === 0) break;
      if (!step.progressed) {
        stopped = 'no_progress';
        break;
      }
      if (remainingMs && startedWith !== undefined) {
        longestStepMs = Math.max(longestStepMs, startedWith - remainingMs());
        if (remainingMs() < SWEEP_TIME_MARGIN_MS + longestStepMs) {
          stopped = 'time_budget';
          break;
        }
      }
    }
  } finally {
    if (swept > 0) deps.telemetry.count(MetricName.SWEPT, undefined, swept);
    const lagSeconds = lagMs === undefined ? undefined : Math.ceil(lagMs / 1000);
    if (lagSeconds !== undefined) deps.telemetry.seconds(MetricName.SWEEP_LAG, undefined, lagSeconds);
    deps.telemetry.log(swept > 0 || notSent > 0 || stopped === 'time_budget' ? 'WARN' : 'INFO', 'sweep', {
      swept,
      steps,
      ...(lagSeconds !== undefined ? { lagSeconds } : {}),
      ...(notSent > 0 ? { notSent } : {}),
      ...(stopped ? { stopped } : {}),
    });
  }
  return { swept, lagSeconds: Math.ceil(lagMs / 1000) };
}

/** What one step of the sweep did. */
interface SweepStep {
  /** The step's cutoff: its start less `sweepAfter`. */
  readonly cutoff: number;
  /** How far the index is examined and handled after the step: where the watermark is, or moved to. */
  readonly examinedTo: number;
  /** Whether the watermark could move, or rows were sent: another step may get further. */
  readonly progressed: boolean;
  readonly sent: number;
  readonly notSent: number;
  /** The shard count the watermark item held, for `notePendingShards`. */
  readonly recordedShards?: number;
  /** What made the step fail after it moved the watermark as far as it could (a refused enqueue, a failed clock restart). */
  readonly failure?: unknown;
}

/** Clock restarts in flight at once. */
const TOUCHES_IN_FLIGHT = 32;

/**
 * One step: the stranded rows from the watermark up, within one read bound, are enqueued and their
 * clocks restarted at `now`, then the watermark moves to where everything below was examined and
 * handled. An entry whose key is not a delivery row's is counted and never enqueued. Rows SQS did
 * not take (their entries refused, or the queue down) and rows whose clock restart failed are not
 * handled: the watermark stops at the first of them (the next run enqueues it again, and any row
 * sent twice is made harmless by its claim), and the step reports the failure. Two runs at once may
 * enqueue the same rows; the watermark only moves forward, and not at all when an operator revived
 * a row since it was read (that row's entry may not be in what this step read).
 */
async function sweepStep(deps: ReconcilerDependencies, now: number, sweepAfterMs: number): Promise<SweepStep> {
  const cutoff = now - sweepAfterMs;
  const { stranded, refused = [], watermark, revision, recordedShards, examinedBefore } = await deps.inbox.findStranded(cutoff, deps.sweepStep);
  // Counted once: the watermark moves past them with the rest of what was examined.
  for (const entry of refused) refuseKey(deps.telemetry, entry.key, 'sweep');
  let notSent: ReadonlySet<string> = new Set();
  let failure: unknown;
  if (stranded.length > 0) {
    try {
      await deps.queue.enqueue(stranded.map((entry) => entry.key));
    } catch (error) {
      // Anything else says nothing of what was sent: the watermark stays where it was.
      if (!(error instanceof EnqueueError)) throw error;
      failure = error;
      notSent = new Set(error.notSent);
    }
  }
  const sent = stranded.filter((entry) => !notSent.has(entry.key));
  const touches = await settleEach(sent, TOUCHES_IN_FLIGHT, (entry) => deps.inbox.touchPending(entry.key, now));
  const failedTouches = new Set(sent.filter((_, index) => touches[index].status === 'rejected').map((entry) => entry.key));
  // `stranded` is oldest first: below the first row not handled, every entry is; but never past
  // where the examination got (a row found beyond it may be the first not handled).
  const unhandled = stranded.find((entry) => notSent.has(entry.key) || failedTouches.has(entry.key));
  const handledBefore = Math.min(examinedBefore, unhandled?.sort ?? Infinity);
  if (handledBefore > watermark) await deps.inbox.advanceSweepWatermark(handledBefore, revision);
  failure ??= (touches.find((touch) => touch.status === 'rejected') as PromiseRejectedResult | undefined)?.reason;
  return {
    cutoff,
    examinedTo: Math.max(watermark, handledBefore),
    progressed: handledBefore > watermark || sent.length > 0,
    sent: sent.length,
    notSent: notSent.size,
    ...(recordedShards !== undefined ? { recordedShards } : {}),
    ...(failure !== undefined ? { failure } : {}),
  };
}

/** Time a recovery request may take, beside the run's last writes and metrics. */
const RECOVERY_TIME_MARGIN_MS = 5_000;

/** The recovery from providers' event logs, with the run's stores; a request is started only while one as long as its timeout still fits. */
function recover(deps: ReconcilerDependencies, recovery: RecoveryDependencies, now: number, remainingMs?: () => number): Promise<RecoveryReport[]> {
  return recoverFromLogs(recovery, {
    stores: { ...recovery.storage, inbox: deps.inbox, queue: deps.queue },
    telemetry: deps.telemetry,
    now,
    hasTime: () => !remainingMs || remainingMs() >= recovery.requestTimeoutMs + RECOVERY_TIME_MARGIN_MS,
  });
}

/** An invocation by the ops CLI of this kind (`reconcile --until-settled`, `resume`). */
function isRequest(event: unknown, detailType: string): boolean {
  const fields = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
  return fields.source === ReconcileRequest.SOURCE && fields['detail-type'] === detailType;
}

/** A settlement run looks this far ahead: a task still pending is asked again now, not at its next recheck. */
function longestRecheckMs(ledger: LedgerDependencies): number {
  return Math.max(LEDGER_ONLY_RECHECK_MS, ...[...ledger.providers.values()].map((provider) => provider.poller?.recheckMs ?? 0));
}

/** The ledger's unsettled submissions, and each polled provider's own status, asked concurrently. */
async function settlementOf(ledger: LedgerDependencies, dueBy: number): Promise<Settlement> {
  const statuses = [...ledger.providers.entries()].flatMap(([provider, { poller }]) => {
    const api = poller?.api;
    return api?.fetchStatus ? [{ provider, status: api.fetchStatus() }] : [];
  });
  const [unsettled, ...answers] = await Promise.all([
    ledger.submissions.countDue(dueBy, Defaults.LEDGER_COUNT_PER_SHARD),
    ...statuses.map(({ status }) => status.catch((): ProviderStatus => ({ kind: 'error', detail: 'client_error' }))),
  ]);
  return {
    unsettled,
    providers: statuses.map(({ provider }, index) => {
      const answer = answers[index];
      return answer.kind === 'status'
        ? { provider, queuedTasks: answer.queuedTasks, processingTasks: answer.processingTasks }
        : { provider, error: answer.detail };
    }),
  };
}
