import { MetricName } from '../../lib/contract';
import { InboxStore } from '../shared/stores/inbox-store';
import { Telemetry } from '../shared/runtime/telemetry';
import { WorkQueue } from '../shared/stores/work-queue';
import { LedgerDependencies, LedgerReport, reconcileLedger } from './ledger';

export interface ReconcilerDependencies {
  readonly inbox: InboxStore;
  readonly queue: WorkQueue;
  readonly telemetry: Telemetry;
  readonly now: () => number;
  /** A row pending for longer than this is presumed stranded (its enqueue or its processing failed). */
  readonly sweepAfterMs: number;
  /** The most rows one run re-enqueues. */
  readonly batchSize: number;
  /** The submission ledger: due submissions are checked, and polled, after the sweep. Absent: sweep only. */
  readonly ledger?: LedgerDependencies;
}

export interface ReconcileReport extends Partial<LedgerReport> {
  readonly swept: number;
}

/** The part of the Lambda context a run uses: how long it may still take. */
export interface RunContext {
  getRemainingTimeInMillis(): number;
}

/**
 * The reconciler: first the sweep, then the submission ledger.
 *
 * The sweep: rows still pending after `sweepAfterMs` are enqueued again, found through the
 * sharded sparse index (never a scan), a bounded batch per run. Each row's clock restarts once
 * it is enqueued, so a slow backlog is not re-enqueued on every run.
 *
 * The ledger (see `./ledger`): due submissions without a delivery are polled, and final results
 * fed into the inbox, a bounded batch per run, every step a conditional single-item write.
 */
export function createReconciler(deps: ReconcilerDependencies) {
  return async (_event?: unknown, context?: RunContext): Promise<ReconcileReport> => {
    const now = deps.now();
    try {
      const keys = await deps.inbox.findStranded(now - deps.sweepAfterMs, deps.batchSize);
      if (keys.length > 0) {
        await deps.queue.enqueue(keys);
        await Promise.all(keys.map((key) => deps.inbox.touchPending(key, now)));
        deps.telemetry.count(MetricName.SWEPT, undefined, keys.length);
      }
      deps.telemetry.log(keys.length > 0 ? 'WARN' : 'INFO', 'sweep', { swept: keys.length });
      if (!deps.ledger) return { swept: keys.length };

      const ledger = await reconcileLedger(deps.ledger, {
        inbox: deps.inbox,
        queue: deps.queue,
        telemetry: deps.telemetry,
        now,
        ...(context ? { remainingMs: () => context.getRemainingTimeInMillis() } : {}),
      });
      const attention = ledger.overdue > 0 || ledger.unknown > 0 || ledger.rateLimited > 0 || ledger.pollErrors > 0;
      deps.telemetry.log(attention ? 'WARN' : 'INFO', 'submissions', { ...ledger });
      return { swept: keys.length, ...ledger };
    } finally {
      // Whatever was counted before a failure is emitted too; the items hold the progress.
      deps.telemetry.flush();
    }
  };
}
