import { InvokeCommand } from '@aws-sdk/client-lambda';
import { OpsConfig } from '../../lib/contract';
import { OpsClients } from '../clients';
import { OpsError } from '../errors';

/** What the reconciler answered: its report, as it returned it. */
export type ReconcileReport = Record<string, unknown>;

/**
 * Runs the reconciler now, as its schedule would (Lambda Invoke, RequestResponse), and returns
 * its report. A function error is an OpsError carrying the function's error type and message.
 */
export async function reconcile(clients: OpsClients, config: OpsConfig): Promise<ReconcileReport> {
  const out = await clients.lambda.send(
    new InvokeCommand({
      FunctionName: config.reconcilerFunctionName,
      InvocationType: 'RequestResponse',
      Payload: Buffer.from(JSON.stringify({ source: 'webhook-inbox.cli', 'detail-type': 'Manual reconcile' })),
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
