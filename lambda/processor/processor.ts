import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { MetricName } from '../../lib/contract';
import { ProviderAdapter } from '../shared/adapters';
import { BodyStore, responseObjectKey } from '../shared/body-store';
import { logReference, sha256Hex } from '../shared/digest';
import { ConfigurationError } from '../shared/errors';
import { BodyLocation, InboxStore } from '../shared/inbox-store';
import { ResultsStore } from '../shared/results-store';
import { Telemetry } from '../shared/telemetry';
import { decodeWorkMessage } from '../shared/work-queue';

export interface ProcessorDependencies {
  readonly adapters: ReadonlyMap<string, ProviderAdapter>;
  readonly inbox: InboxStore;
  readonly results: ResultsStore;
  /** Where bodies too large for a row live; absent when the inbox keeps every body inline. */
  readonly bodies?: BodyStore;
  /** Results larger than this go to the body store too. */
  readonly inlineBodyBytes?: number;
  readonly telemetry: Telemetry;
  readonly now: () => number;
  /** How long a claim holds a row: the processor's timeout, so a crashed claim expires with it. */
  readonly leaseMs: number;
  /** The work queue's redrive threshold: the receive that fails at it sends the message to the DLQ. */
  readonly maxReceiveCount: number;
}

/** Another worker holds the row's lease; the message is retried after its visibility timeout. */
class LeaseHeldError extends Error {
  override readonly name = 'LeaseHeldError';
}

/**
 * The processor: claim each row with a lease, project its result onto its job, mark it
 * processed. Records are independent: one failure is reported alone (partial batch response).
 */
export function createProcessor(deps: ProcessorDependencies) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const outcomes = await Promise.allSettled(event.Records.map((record) => processRecord(record, deps)));
    deps.telemetry.flush();
    return {
      batchItemFailures: outcomes.flatMap((outcome, index) =>
        outcome.status === 'rejected' ? [{ itemIdentifier: event.Records[index].messageId }] : [],
      ),
    };
  };
}

async function processRecord(record: SQSRecord, deps: ProcessorDependencies): Promise<void> {
  const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? 1);
  const key = decodeWorkMessage(record.body);
  const fields = { eventRef: logReference(key), messageId: record.messageId, receiveCount };
  const owner = `${record.messageId}/${receiveCount}`;
  const row = await deps.inbox.claim(key, owner, deps.now(), deps.leaseMs);
  if (!row) {
    const state = await deps.inbox.status(key);
    if (state?.status === 'PROCESSING') {
      // On its last receive a duplicate message must not dead-letter a healthy row: the lease
      // holder finishes it, or the lease expires and the sweep re-enqueues it.
      if (receiveCount >= deps.maxReceiveCount) {
        deps.telemetry.log('INFO', 'lease held by another worker; message dropped on its last receive', fields);
        return;
      }
      deps.telemetry.log('INFO', 'lease held by another worker', fields);
      throw new LeaseHeldError('row is leased');
    }
    // Processed already (a duplicate message), or expired out of the inbox: nothing to do.
    deps.telemetry.log('INFO', 'row already settled', { ...fields, status: state?.status ?? 'absent' });
    return;
  }
  try {
    const adapter = deps.adapters.get(row.provider);
    if (!adapter) throw new ConfigurationError(`provider ${row.provider} is not configured`);
    const observation = adapter.observe(await bodyOf(row, deps.bodies), row.meta);
    let outcome = 'no_final_result';
    if (observation) {
      const responseRef = await storeLargeResponse(row.provider, observation.response, deps);
      const won = await deps.results.offer({ provider: row.provider, eventKey: key, observation, responseRef, now: deps.now() });
      outcome = won ? 'winner' : 'superseded';
      if (won) deps.telemetry.count(MetricName.WINNER_CHANGED, row.provider);
    }
    if (!(await deps.inbox.complete(key, owner, outcome, deps.now()))) {
      deps.telemetry.log('WARN', 'lease lost before completion', fields);
    }
    deps.telemetry.count(MetricName.PROCESSED, row.provider);
    deps.telemetry.log('INFO', 'processed', { ...fields, provider: row.provider, outcome, attempts: row.attempts });
  } catch (error) {
    const dead = receiveCount >= deps.maxReceiveCount;
    const description = describe(error);
    await deps.inbox.release(key, owner, description, dead, deps.now());
    deps.telemetry.count(MetricName.PROCESSING_FAILED, row.provider);
    if (dead) deps.telemetry.count(MetricName.DEAD_LETTERED, row.provider);
    deps.telemetry.log(dead ? 'ERROR' : 'WARN', dead ? 'processing failed; dead-lettered' : 'processing failed', {
      ...fields,
      provider: row.provider,
      error: description,
    });
    throw error;
  }
}

/** The row's body, loaded from the body store when the row only points at it. */
async function bodyOf(row: BodyLocation, bodies: BodyStore | undefined): Promise<Buffer> {
  if (row.bodyRef === undefined) return row.body ?? Buffer.alloc(0);
  if (!bodies) throw new ConfigurationError('a row points at the body store, but none is configured');
  return bodies.get(row.bodyRef);
}

/** Puts a result too large for the results table into the body store; its reference, if so. */
async function storeLargeResponse(provider: string, response: string, deps: ProcessorDependencies): Promise<string | undefined> {
  const bytes = Buffer.from(response, 'utf8');
  if (!deps.bodies || bytes.length <= (deps.inlineBodyBytes ?? Infinity)) return undefined;
  return deps.bodies.put(responseObjectKey(provider, sha256Hex(bytes)), bytes);
}

/** Error class and message: our own errors name fields, never values, so this is safe to store. */
function describe(error: unknown): string {
  const { name = 'Error', message = '' } = (error ?? {}) as { name?: string; message?: string };
  return `${name}: ${message}`.slice(0, 500);
}
