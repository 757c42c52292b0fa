import { InvokeCommand } from '@aws-sdk/client-lambda';
import { OpsConfig, ReconcileRequest } from '../../lib/contract';
import { OpsClients } from '../clients';
import { OpsError } from '../errors';

/** What the reconciler answered: its report, as it returned it. */
export type ReconcileReport = Record<string, unknown>;

/**
 * Runs the reconciler now, as its schedule would (Lambda Invoke, RequestResponse), and returns
 * its report. A function error is an OpsError carrying the function's error type and message.
 */
export async function reconcile(
  clients: OpsClients,
  config: OpsConfig,
  detailType: (typeof ReconcileRequest)['MANUAL' | 'UNTIL_SETTLED' | 'RESUME'] = ReconcileRequest.MANUAL,
): Promise<ReconcileReport> {
  const out = await clients.lambda.send(
    new InvokeCommand({
      FunctionName: config.reconcilerFunctionName,
      InvocationType: 'RequestResponse',
      Payload: Buffer.from(JSON.stringify({ source: ReconcileRequest.SOURCE, 'detail-type': detailType })),
    }),
  );
  const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
  let payload: unknown;
  try {
    payload = text === '' ? null : JSON.parse(text);
  } catch {
    throw new OpsError(`the reconciler ${config.reconcilerFunctionName} answered with something that is not JSON`);
  }
  if (out.FunctionError) {
    const { errorType, errorMessage } = (payload ?? {}) as { errorType?: string; errorMessage?: string };
    throw new OpsError(`the reconciler ${config.reconcilerFunctionName} failed (${out.FunctionError}): ${errorType ?? 'Error'}: ${errorMessage ?? ''}`);
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { result: payload };
  return payload as ReconcileReport;
}

/** What a settlement run reports is left (the reconciler's `settlement`). */
export interface SettlementState {
  readonly unsettled: { readonly count: number; readonly atLeast: boolean };
  readonly providers: readonly { readonly provider: string; readonly queuedTasks?: number; readonly processingTasks?: number; readonly error?: string }[];
}

export interface UntilSettledReport {
  readonly settled: boolean;
  readonly runs: number;
  readonly elapsedSeconds: number;
  /** What the last run found left. */
  readonly left: SettlementState;
  readonly lastReport: ReconcileReport;
}

export interface UntilSettledOptions {
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** One line per run. */
  readonly progress: (line: string) => void;
}

/**
 * Reconciliation is done when the ledger has nothing due (within the longest recheck: a task
 * still pending counts) and every polled provider with a status endpoint reports no task queued
 * or processing. Runs the reconciler (settlement runs) until then, or until the timeout.
 */
export function isSettled(state: SettlementState): boolean {
  return state.unsettled.count === 0 && state.providers.every((p) => p.error === undefined && p.queuedTasks === 0 && p.processingTasks === 0);
}

export async function reconcileUntilSettled(clients: OpsClients, config: OpsConfig, options: UntilSettledOptions): Promise<UntilSettledReport> {
  const started = options.now();
  for (let runs = 1; ; runs++) {
    const lastReport = await reconcile(clients, config, ReconcileRequest.UNTIL_SETTLED);
    const left = lastReport.settlement as SettlementState | undefined;
    if (!left)
      throw new OpsError(`the reconciler ${config.reconcilerFunctionName} reported no settlement: it predates reconcile --until-settled (deploy this version)`);
    const settled = isSettled(left);
    const elapsedMs = options.now() - started;
    options.progress(`run ${runs} (${Math.round(elapsedMs / 1000)} s): ${describeLeft(left)}`);
    if (settled || elapsedMs + options.intervalMs > options.timeoutMs) {
      return { settled, runs, elapsedSeconds: Math.round(elapsedMs / 1000), left, lastReport };
    }
    await options.sleep(options.intervalMs);
  }
}

/** `3 submissions unsettled; answerline: 2 queued, 0 processing`. */
export function describeLeft(left: SettlementState): string {
  const ledger = `${left.unsettled.atLeast ? '≥ ' : ''}${left.unsettled.count} submission${left.unsettled.count === 1 ? '' : 's'} unsettled`;
  const providers = left.providers.map((p) =>
    p.error !== undefined ? `${p.provider}: status unknown (${p.error})` : `${p.provider}: ${p.queuedTasks} queued, ${p.processingTasks} processing`,
  );
  return [ledger, ...providers].join('; ');
}
