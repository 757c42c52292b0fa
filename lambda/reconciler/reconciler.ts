import { MetricName } from '../../lib/contract';
import { InboxStore } from '../shared/inbox-store';
import { Telemetry } from '../shared/telemetry';
import { WorkQueue } from '../shared/work-queue';

export interface ReconcilerDependencies {
  readonly inbox: InboxStore;
  readonly queue: WorkQueue;
  readonly telemetry: Telemetry;
  readonly now: () => number;
  /** A row pending for longer than this is presumed stranded (its enqueue or its processing failed). */
  readonly sweepAfterMs: number;
  /** The most rows one run re-enqueues. */
  readonly batchSize: number;
}

export interface ReconcileReport {
  readonly swept: number;
}

/**
 * The reconciler's sweep: rows still pending after `sweepAfterMs` are enqueued again, found
 * through the sharded sparse index (never a scan), a bounded batch per run. Each row's clock
 * restarts once it is enqueued, so a slow backlog is not re-enqueued on every run.
 */
export function createReconciler(deps: ReconcilerDependencies) {
  return async (): Promise<ReconcileReport> => {
    const now = deps.now();
    const keys = await deps.inbox.findStranded(now - deps.sweepAfterMs, deps.batchSize);
    if (keys.length > 0) {
      await deps.queue.enqueue(keys);
      await Promise.all(keys.map((key) => deps.inbox.touchPending(key, now)));
      deps.telemetry.count(MetricName.SWEPT, undefined, keys.length);
    }
    deps.telemetry.log(keys.length > 0 ? 'WARN' : 'INFO', 'sweep', { swept: keys.length });
    deps.telemetry.flush();
    return { swept: keys.length };
  };
}
