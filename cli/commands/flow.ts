import { BreakerState, FLOW_STATE_CACHE_MS, OpsConfig, ReconcileRequest } from '../../lib/contract';
import { BoundedCount } from '../../lambda/shared/stores/dynamo';
import { DynamoDbFlowStore, FlowState } from '../../lambda/shared/stores/flow';
import { inboxStoreOf, OpsClients } from '../clients';
import { countStranded } from './common';
import { reconcile, ReconcileReport } from './reconcile';

/** Who a pause names when the CLI writes it. */
export const PAUSED_BY_CLI = 'webhook-inbox pause';

/** The flow-control part of `status`, and what `pause` and `resume` report (docs/FLOW-CONTROL.md). */
export interface FlowReport {
  /** When the inbox was paused (ISO-8601), and by what; null while it runs. */
  readonly paused: { readonly since: string; readonly by?: string } | null;
  readonly breaker: {
    readonly state: string;
    /** When it last opened (ISO-8601), and why; absent when it never opened. */
    readonly openedAt?: string;
    readonly reason?: string;
    readonly openings: number;
    /** Probes that succeeded since it last opened (half-open). */
    readonly probeSuccesses?: number;
  };
  /** Rows neither PROCESSED nor DEAD in the pending index, however recent: what a resume enqueues (bounded read). */
  readonly waiting: BoundedCount;
}

export interface ResumeReport extends FlowReport {
  /** What the resume's run of the reconciler reported (its sweep enqueued every waiting row it reached). */
  readonly reconciler: ReconcileReport;
}

/** The flow-control state of the inbox and the rows waiting, reading at most `perShardLimit` entries of each pending-index shard. */
export async function flowReport(clients: OpsClients, config: OpsConfig, now: number, perShardLimit: number): Promise<FlowReport> {
  const [state, waiting] = await Promise.all([flowStore(clients, config).read(), countWaiting(clients, config, now, perShardLimit)]);
  return reportOf(state, waiting);
}

/** Pauses the inbox: deliveries are still admitted; the processor defers every row, the sweep enqueues none. */
export async function pause(clients: OpsClients, config: OpsConfig, now: number, perShardLimit: number): Promise<FlowReport> {
  const state = await flowStore(clients, config).pause(now, PAUSED_BY_CLI);
  return reportOf(state, await countWaiting(clients, config, now, perShardLimit));
}

export interface ResumeOptions {
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly perShardLimit: number;
}

/**
 * Resumes the inbox and closes its breaker, waits until every processor has seen it (their cache of
 * the state), then runs the reconciler with a resume request: one sweep that enqueues every waiting
 * row once, processed at the configured concurrency.
 */
export async function resume(clients: OpsClients, config: OpsConfig, options: ResumeOptions): Promise<ResumeReport> {
  await flowStore(clients, config).resume(options.now());
  await options.sleep(FLOW_STATE_CACHE_MS);
  const reconciler = await reconcile(clients, config, ReconcileRequest.RESUME);
  return { ...(await flowReport(clients, config, options.now(), options.perShardLimit)), reconciler };
}

function flowStore(clients: OpsClients, config: OpsConfig): DynamoDbFlowStore {
  return new DynamoDbFlowStore(clients.dynamodb, config.inboxTable);
}

/** Every row pending now, whatever its age. */
async function countWaiting(clients: OpsClients, config: OpsConfig, now: number, perShardLimit: number): Promise<BoundedCount> {
  return countStranded(inboxStoreOf(clients, config), now + 1, perShardLimit);
}

function reportOf(state: FlowState, waiting: BoundedCount): FlowReport {
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return {
    paused: state.pausedAt === undefined ? null : { since: iso(state.pausedAt)!, ...(state.pausedBy ? { by: state.pausedBy } : {}) },
    breaker: {
      state: state.breaker,
      ...(state.openedAt !== undefined ? { openedAt: iso(state.openedAt), reason: state.openReason } : {}),
      openings: state.openings,
      ...(state.breaker === BreakerState.HALF_OPEN ? { probeSuccesses: state.probeSuccesses } : {}),
    },
    waiting,
  };
}
