import { Defaults, MetricName, ReconcileRequest } from '../../lib/contract';
import { ProviderStatus } from '../shared/providers/provider-api';
import { BoundedCount, ReadBound } from '../shared/stores/dynamo';
import { InboxStore } from '../shared/stores/inbox';
import { Telemetry } from '../shared/runtime/telemetry';
import { EnqueueError, WorkQueue } from '../shared/stores/work-queue';
import { refuseKey } from '../shared/refused-key';
import { LEDGER_ONLY_RECHECK_MS, LedgerDependencies, LedgerReport, reconcileLedger } from './ledger';

export interface ReconcilerDependencies {
  readonly inbox: InboxStore;
  readonly queue: WorkQueue;
  readonly telemetry: Telemetry;
  readonly now: () => number;
  /** A row pending for longer than this is presumed stranded (its enqueue or its processing failed). */
  readonly sweepAfterMs: number;
  /** The most rows one run re-enqueues. */
  readonly batchSize: number;
  /** How much of the pending index one run reads at most. */
  readonly sweepReadBound: ReadBound;
  /** The submission ledger: due submissions are checked, and polled, after the sweep. Absent: sweep only. */
  readonly ledger?: LedgerDependencies;
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
  /** Only for a settlement run (the ops CLI's `reconcile --until-settled`). */
  readonly settlement?: Settlement;
}

/** The part of the Lambda context a run uses: how long it may still take. */
export interface RunContext {
  getRemainingTimeInMillis(): number;
}

/**
 * The reconciler: first the sweep, then the submission ledger.
 *
 * The sweep (`sweep`): rows neither PROCESSED nor DEAD after `sweepAfterMs` are enqueued again,
 * found through the sharded sparse index from a saved watermark (never a scan), a bounded batch per
 * run. Each row's clock restarts once it is enqueued, so a slow backlog is not re-enqueued on
 * every run.
 *
 * The ledger (see `./ledger`): due submissions without a delivery are polled, and final results
 * fed into the inbox, a bounded batch per run, every step a conditional single-item write.
 */
export function createReconciler(deps: ReconcilerDependencies) {
  return async (event?: unknown, context?: RunContext): Promise<ReconcileReport> => {
    const now = deps.now();
    const settling = isSettlementRequest(event);
    try {
      const swept = await sweep(deps, now);
      if (!deps.ledger) return { swept };

      const lookaheadMs = settling ? longestRecheckMs(deps.ledger) : 0;
      const ledger = await reconcileLedger(deps.ledger, {
        inbox: deps.inbox,
        queue: deps.queue,
        telemetry: deps.telemetry,
        now,
        lookaheadMs,
        ...(context ? { remainingMs: () => context.getRemainingTimeInMillis() } : {}),
      });
      const attention = ledger.overdue > 0 || ledger.unknown > 0 || ledger.unavailable > 0 || ledger.rateLimited > 0 || ledger.pollErrors > 0;
      deps.telemetry.log(attention ? 'WARN' : 'INFO', 'submissions', { ...ledger });
      if (!settling) return { swept, ...ledger };
      const settlement = await settlementOf(deps.ledger, now + lookaheadMs);
      deps.telemetry.log('INFO', 'settlement', { unsettled: settlement.unsettled.count, providers: settlement.providers.length });
      return { swept, ...ledger, settlement };
    } finally {
      // Whatever was counted before a failure is emitted too; the items hold the progress.
      deps.telemetry.flush();
    }
  };
}

/**
 * One sweep: the stranded rows from the watermark up are enqueued and their clocks restarted,
 * then the watermark moves to where everything below was examined and handled. An entry whose
 * key is not a delivery row's is counted and never enqueued. Rows SQS did not take (their entries
 * refused, or the queue down) and rows whose clock restart failed are not handled: the watermark
 * stops at the first of them (the next run enqueues it again, and any row sent twice is made
 * harmless by its claim), and the run fails. Two runs at once may enqueue the same rows; the
 * watermark only moves forward, and not at all when an operator revived a row since it was read
 * (that row's entry may not be in what this run read).
 */
async function sweep(deps: ReconcilerDependencies, now: number): Promise<number> {
  const {
    stranded,
    refused = [],
    watermark,
    revision,
    examinedBefore,
  } = await deps.inbox.findStranded(now - deps.sweepAfterMs, deps.batchSize, deps.sweepReadBound);
  // Counted once: the watermark moves past them with the rest of what was examined.
  for (const entry of refused) refuseKey(deps.telemetry, entry.key, 'sweep');
  let notSent: ReadonlySet<string> = new Set();
  let enqueueError: EnqueueError | undefined;
  if (stranded.length > 0) {
    try {
      await deps.queue.enqueue(stranded.map((entry) => entry.key));
    } catch (error) {
      // Anything else says nothing of what was sent: the watermark stays where it was.
      if (!(error instanceof EnqueueError)) throw error;
      enqueueError = error;
      notSent = new Set(error.notSent);
    }
  }
  const sent = stranded.filter((entry) => !notSent.has(entry.key));
  const touches = await Promise.allSettled(sent.map((entry) => deps.inbox.touchPending(entry.key, now)));
  const failedTouches = new Set(sent.filter((_, index) => touches[index].status === 'rejected').map((entry) => entry.key));
  // `stranded` is oldest first: below the first row not handled, every entry is.
  const unhandled = stranded.find((entry) => notSent.has(entry.key) || failedTouches.has(entry.key));
  const handledBefore = unhandled ? unhandled.sort : examinedBefore;
  if (handledBefore > watermark) await deps.inbox.advanceSweepWatermark(handledBefore, revision);
  if (sent.length > 0) deps.telemetry.count(MetricName.SWEPT, undefined, sent.length);
  deps.telemetry.log(stranded.length > 0 ? 'WARN' : 'INFO', 'sweep', { swept: sent.length, ...(notSent.size > 0 ? { notSent: notSent.size } : {}) });
  if (enqueueError) throw enqueueError;
  const failedTouch = touches.find((touch) => touch.status === 'rejected');
  if (failedTouch) throw (failedTouch as PromiseRejectedResult).reason;
  return sent.length;
}

/** The ops CLI's `reconcile --until-settled` invocation. */
function isSettlementRequest(event: unknown): boolean {
  const fields = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
  return fields.source === ReconcileRequest.SOURCE && fields['detail-type'] === ReconcileRequest.UNTIL_SETTLED;
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
