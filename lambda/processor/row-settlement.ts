/**
 * How the processor settles a row it could not process: a claim that took nothing (a held
 * lease, a dead or settled row), a row out of attempts, a failure that spends the attempt, and a
 * downstream failure given back while the circuit breaker is open.
 */
import { DeliveryRecordMessage, DeliveryStatus, MetricName, OutboxResult, ReconcileResult } from '../../lib/contract';
import { SafeError, safeErrorText } from '../shared/runtime/errors';
import { LogFields } from '../shared/runtime/telemetry';
import { ClaimedDelivery, splitKey } from '../shared/stores/inbox';
import type { ProcessorDependencies } from './processor';

/** A row this invocation claimed: what settling it needs. */
export interface ClaimedRow {
  readonly key: string;
  readonly owner: string;
  readonly receiveCount: number;
  readonly fields: LogFields;
  readonly row: ClaimedDelivery;
}

/** The log line of a row that became DEAD (its count, `DeadLettered`, goes out with it). */
const DEAD_LETTERED_MESSAGE = DeliveryRecordMessage.DEAD_LETTERED;

/** Another worker holds the row's lease; the message is retried after its visibility timeout. */
class LeaseHeldError extends SafeError {
  override readonly name = 'LeaseHeldError';
}

/**
 * The message's row is DEAD: the message fails on every receive until SQS moves it to the
 * dead-letter queue, so that every dead row has a message there for `redrive`, even when its
 * attempts ran out on another message's receives (a sweep's copy).
 */
class DeadRowError extends SafeError {
  override readonly name = 'DeadRowError';
}

/**
 * A row the claim did not take: one out of attempts is DEAD (and its message goes on to the DLQ),
 * a held lease makes the message wait, a row gone or settled needs nothing; undefined, or throws.
 */
export async function unclaimed(key: string, receiveCount: number, fields: LogFields, deps: ProcessorDependencies): Promise<undefined> {
  const state = await deps.inbox.status(key);
  if (
    state &&
    state.status !== DeliveryStatus.PROCESSED &&
    state.status !== DeliveryStatus.DEAD &&
    state.attempts >= deps.maxReceiveCount &&
    (state.leaseUntil ?? 0) <= deps.now()
  ) {
    await exhausted(key, state.attempts, fields, deps);
    throw new DeadRowError('the row ran out of attempts');
  }
  if (state?.status === DeliveryStatus.PROCESSING) {
    // On its last receive a duplicate message must not dead-letter a healthy row: the lease
    // holder finishes it, or the lease expires and the sweep re-enqueues it.
    if (receiveCount >= deps.maxReceiveCount) {
      deps.telemetry.log('INFO', 'lease held by another worker; message dropped on its last receive', fields);
      return undefined;
    }
    deps.telemetry.log('INFO', 'lease held by another worker', fields);
    throw new LeaseHeldError('row is leased');
  }
  if (!state) {
    // Its row expired before the message was processed (a late redrive, a retention shorter than the queue's): nothing is left to process.
    deps.telemetry.count(MetricName.MESSAGE_WITHOUT_ROW, splitKey(key).provider);
    deps.telemetry.log('WARN', 'message without a row', fields);
    return undefined;
  }
  if (state.status === DeliveryStatus.DEAD) {
    // Only an operator revives it; its message goes on to the dead-letter queue, where redrive finds it.
    deps.telemetry.log('INFO', 'row is dead; its message goes on to the dead-letter queue', fields);
    throw new DeadRowError('the row is DEAD');
  }
  // Processed already (a duplicate message): nothing to do.
  deps.telemetry.log('INFO', 'row already settled', { ...fields, status: state.status });
  return undefined;
}

/** The provider a work message's key names, when the processor serves it (a metric dimension is never the sender's to choose). */
export function providerOf(key: string, deps: ProcessorDependencies): string | undefined {
  const { provider } = splitKey(key);
  return deps.adapters.has(provider) ? provider : undefined;
}

/**
 * A row whose every attempt ended without a release: each invocation that claimed it died (a
 * timeout, out of memory, a kill). It is DEAD, counted and logged like any dead row, so the sweep
 * stops bringing it back and its effect is not repeated; an operator's replay or redrive revives it.
 */
export async function exhausted(key: string, attempts: number, fields: LogFields, deps: ProcessorDependencies): Promise<void> {
  const description = `AttemptsExhausted: ${attempts} attempts ended without a result (their invocations died)`;
  if (!(await deps.inbox.markExhausted(key, description, deps.now(), deps.maxReceiveCount))) return;
  const { provider } = splitKey(key);
  deps.telemetry.count(MetricName.DEAD_LETTERED, provider);
  deps.telemetry.log('ERROR', DEAD_LETTERED_MESSAGE, { ...fields, provider, attempts, reconcileResult: ReconcileResult.DEAD, error: description });
  deps.telemetry.flush();
}

/** Gives a claimed row back with its error; on the last receive, or the row's last attempt, the row is DEAD. */
export async function fail(
  claimed: ClaimedRow,
  error: unknown,
  deps: ProcessorDependencies,
  outbox?: (typeof OutboxResult)[keyof typeof OutboxResult],
): Promise<void> {
  const { key, owner, receiveCount, fields, row } = claimed;
  // `attempts` counts this claim: every message that carries the row shares the cap.
  const dead = receiveCount >= deps.maxReceiveCount || row.attempts >= deps.maxReceiveCount;
  const description = safeErrorText(error);
  await deps.inbox.release(key, owner, description, dead, deps.now());
  deps.telemetry.count(MetricName.PROCESSING_FAILED, row.provider);
  if (dead) deps.telemetry.count(MetricName.DEAD_LETTERED, row.provider);
  deps.telemetry.log(dead ? 'ERROR' : 'WARN', dead ? DEAD_LETTERED_MESSAGE : 'processing failed', {
    ...fields,
    provider: row.provider,
    reconcileResult: dead ? ReconcileResult.DEAD : ReconcileResult.FAILED,
    ...(outbox ? { outboxResult: outbox } : {}),
    error: description,
  });
  // The row is DEAD now: its count goes out with its log line, not at the end of the batch,
  // which a timeout or a crash on a later row would never reach.
  if (dead) deps.telemetry.flush();
}

/** Gives a row that failed downstream back while the breaker is open: its attempt returned, never DEAD. */
export async function givenBack(
  claimed: Omit<ClaimedRow, 'receiveCount'>,
  error: unknown,
  deps: ProcessorDependencies,
  outbox?: (typeof OutboxResult)[keyof typeof OutboxResult],
): Promise<void> {
  const { key, owner, fields, row } = claimed;
  const description = safeErrorText(error);
  await deps.inbox.giveBack(key, owner, description, deps.now());
  deps.telemetry.count(MetricName.PROCESSING_FAILED, row.provider);
  deps.telemetry.log('WARN', 'processing failed downstream; attempt given back (circuit breaker open)', {
    ...fields,
    provider: row.provider,
    reconcileResult: ReconcileResult.FAILED,
    ...(outbox ? { outboxResult: outbox } : {}),
    error: description,
  });
}
