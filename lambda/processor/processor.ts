import { randomBytes } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DeferReason, DeliveryRecordMessage, MetricName, OutboxResult, RowOutcome } from '../../lib/contract';
import { JobObservation, ProviderAdapter } from '../shared/providers/adapter';
import { ResourceReader } from '../shared/providers/authoritative-read';
import { BodyStore, bodyOfRow, responseObjectKey } from '../shared/stores/body-store';
import { logReference, sha256Hex } from '../shared/runtime/digest';
import { DispatchOutcome, EffectSink } from '../shared/effects/sinks';
import { Effect, EffectAssembler, effectContent } from '../shared/effects/assembler';
import { AuthoritativeReadError, ConfigurationError, SafeError, safeErrorFields, safeErrorText } from '../shared/runtime/errors';
import { ClaimedDelivery, InboxStore, isDeliveryKey, StoredDelivery } from '../shared/stores/inbox';
import { refuseKey } from '../shared/refused-key';
import { OfferOutcome, ResultsStore } from '../shared/stores/results-store';
import { LogFields, Telemetry } from '../shared/runtime/telemetry';
import { decodeWorkMessage } from '../shared/stores/work-queue';
import { archiveBatch } from './archive';
import { Admission, FlowGate } from './flow-gate';
import { ClaimedRow, fail, givenBack, providerOf, unclaimed } from './row-settlement';

/** Where effects go, and what they are built with. */
export interface EffectsConfig {
  readonly sink: EffectSink;
  /** Named in every effect's detail. */
  readonly inboxName: string;
  /** The body bucket's name, named in a detail whose content travels by reference. */
  readonly bodyBucket?: string;
  /** Content larger than this travels by reference (default: Defaults.EFFECT_INLINE_BYTES). */
  readonly inlineBytes?: number;
}

export interface ProcessorDependencies {
  readonly adapters: ReadonlyMap<string, ProviderAdapter>;
  readonly inbox: InboxStore;
  readonly results: ResultsStore;
  /** Where bodies too large for a row live; absent when the inbox keeps every body inline. */
  readonly bodies?: BodyStore;
  /** Results larger than this go to the body store too. */
  readonly inlineBodyBytes?: number;
  /** Effects of decided rows; absent: rows are decided and completed, nothing is sent. */
  readonly effects?: EffectsConfig;
  /** The authoritative read of each provider that configures one, by provider name. */
  readonly resourceReaders?: ReadonlyMap<string, ResourceReader>;
  readonly telemetry: Telemetry;
  readonly now: () => number;
  /** How long a claim holds a row: the processor's timeout, so a crashed claim expires with it. */
  readonly leaseMs: number;
  /** The work queue's redrive threshold: the receive that fails at it sends the message to the DLQ. */
  readonly maxReceiveCount: number;
  /** Pause, resume and the circuit breaker (docs/FLOW-CONTROL.md); absent: every batch is processed. */
  readonly flow?: FlowGate;
  /**
   * `processorMaxRowsPerSecond`: the least time an invocation takes per row it processes (its
   * concurrency over the rate), so the invocations at once stay under the rate; absent: no cap.
   */
  readonly pacingMsPerRow?: number;
  /** How the pacing waits (tests give a clock of their own). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where each processed delivery is archived (docs/ARCHIVE.md); absent: no archive. */
  readonly archive?: BodyStore;
}

type Outcome = (typeof RowOutcome)[keyof typeof RowOutcome];

/**
 * A claimed row whose processing failed downstream (the authoritative read): settled after the
 * batch, once the circuit breaker has seen the batch's outcomes (`settleDownstream`).
 */
class DownstreamFailure extends Error {
  constructor(
    readonly claimed: ClaimedRow,
    readonly cause: unknown,
  ) {
    super('downstream failure');
  }
}

const PROCESS: Admission = { kind: 'process' };

/** A row this invocation claimed and decided, waiting for its effect (if any) and its completion. */
interface Decided extends ClaimedRow {
  /** When the claim's lease runs out, by this processor's clock. */
  readonly leaseUntil: number;
  readonly outcome: Outcome;
  readonly offer?: OfferOutcome;
  readonly effect?: Effect;
}

/**
 * The processor. Per row: claim (a lease) → observe → authoritative read (when configured) →
 * decide (the results offer) → dispatch the effect → complete. The row is the outbox: until it
 * is completed, a crash at any step leaves it unprocessed, and the retry (SQS redelivery after
 * the visibility timeout, or the reconciler's sweep) derives the same effect with the same key
 * and sends it. The effects of one SQS batch are dispatched together (PutEvents takes 10).
 * Records are independent: one failure is reported alone (partial batch response).
 */
export function createProcessor(deps: ProcessorDependencies) {
  const assembler = deps.effects && new EffectAssembler({ ...deps.effects, bodies: deps.bodies });
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const startedAt = deps.now();
    // The batch is read before any request: an invocation without one costs no read of the flow item.
    const batch = event.Records;
    const admission = deps.flow ? await deps.flow.admit() : PROCESS;
    if (admission.kind === 'defer') {
      defer(batch, admission.reason, deps);
      deps.telemetry.flush();
      return { batchItemFailures: [] };
    }
    // A probe is one row: the first; the others wait like any deferred row.
    const records = admission.kind === 'probe' ? batch.slice(0, 1) : batch;
    if (admission.kind === 'probe') defer(batch.slice(1), DeferReason.NOT_THE_PROBE, deps);
    const failed = await processRecords(records, admission, deps, assembler);
    deps.telemetry.flush();
    await pace(records.length, startedAt, deps);
    return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.messageId })) };
  };
}

/** Processes the records; the ones that failed, whose messages are retried. */
async function processRecords(
  records: readonly SQSRecord[],
  admission: Admission,
  deps: ProcessorDependencies,
  assembler: EffectAssembler | undefined,
): Promise<SQSRecord[]> {
  const decided = await Promise.allSettled(records.map((record) => decide(record, deps, assembler)));
  const rows = decided.map((settled) => (settled.status === 'fulfilled' ? settled.value : undefined));
  const effects = await dispatchEffects(rows, deps.effects?.sink);
  const dispatched = await archiveBatch(rows, effects, deps);
  // What the breaker counts: the rows that reached the downstream, and those it failed (the
  // archive is the inbox's own bucket, not the consumer's downstream).
  const downstreamRejected = decided.filter((settled) => settled.status === 'rejected' && settled.reason instanceof DownstreamFailure).length;
  const downstreamFailures = downstreamRejected + [...effects.values()].filter((outcome) => !outcome.ok).length;
  const reached = rows.filter((row) => row !== undefined).length + downstreamRejected;
  // A probe's downstream failure is always given back; otherwise only while the breaker is open.
  const giveBack = admission.kind === 'probe' ? true : deps.flow ? await deps.flow.record(reached, downstreamFailures) : false;
  const settled = await Promise.allSettled(
    decided.map((outcome) =>
      outcome.status === 'rejected' && outcome.reason instanceof DownstreamFailure ? settleDownstream(outcome.reason, giveBack, deps) : undefined,
    ),
  );
  const completed = await completeBatch(
    rows.filter((row, index): row is Decided => row !== undefined && dispatched.get(index)?.ok !== false),
    deps,
  );
  const finished = await Promise.allSettled(
    rows.map((row, index) => (row ? finish(row, dispatched.get(index), completed, giveBack, deps) : Promise.resolve())),
  );
  const failed = records.filter(
    (_, index) =>
      (decided[index].status === 'rejected' && !(decided[index].reason instanceof DownstreamFailure)) ||
      settled[index].status === 'rejected' ||
      finished[index].status === 'rejected',
  );
  if (admission.kind === 'probe') {
    const outcome = downstreamFailures > 0 ? 'failed' : failed.length === 0 && probeReached(rows[0], effects.get(0), deps) ? 'succeeded' : 'inconclusive';
    await deps.flow!.endProbe(admission.owner, outcome, outcome === 'failed' ? 'a probe failed downstream' : undefined);
  }
  return failed;
}

/**
 * Whether a probe's row heard from the downstream: its effect was dispatched, or, with none, its
 * authoritative read was answered. A row that needs neither (a result that ranks lower, a job's
 * delivery with no final result) says nothing of the downstream: such a probe is inconclusive, or
 * a downstream still down would be taken for one that is back.
 */
function probeReached(row: Decided | undefined, dispatched: DispatchOutcome | undefined, deps: ProcessorDependencies): boolean {
  if (!row) return false;
  if (row.effect) return dispatched?.ok === true;
  return row.outcome !== RowOutcome.NO_FINAL_RESULT && deps.resourceReaders?.has(row.row.provider) === true;
}

/**
 * Answers records as done without claiming their rows (docs/FLOW-CONTROL.md#no-attempt-is-spent):
 * SQS deletes the messages, no receive and no attempt is spent, and each row waits in the inbox,
 * in the pending index, for the sweep (or a resume) to enqueue it again.
 */
function defer(records: readonly SQSRecord[], reason: (typeof DeferReason)[keyof typeof DeferReason], deps: ProcessorDependencies): void {
  if (records.length === 0) return;
  for (const record of records) deps.telemetry.count(MetricName.DEFERRED, providerOfMessage(record.body, deps));
  deps.telemetry.log('INFO', 'deferred', { reason, messages: records.length });
}

/** The provider a work message names, when the processor serves it; undefined for a message that names none (it has no row to wait). */
function providerOfMessage(body: string, deps: ProcessorDependencies): string | undefined {
  try {
    const key = decodeWorkMessage(body);
    return isDeliveryKey(key) ? providerOf(key, deps) : undefined;
  } catch {
    return undefined;
  }
}

/** With a rate (`pacingMsPerRow`), waits until the invocation has taken its share of time for `rows` rows. */
async function pace(rows: number, startedAt: number, deps: ProcessorDependencies): Promise<void> {
  if (!deps.pacingMsPerRow || rows === 0) return;
  const leftMs = startedAt + rows * deps.pacingMsPerRow - deps.now();
  if (leftMs > 0) await (deps.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms))))(leftMs);
}

/**
 * A row that failed downstream: given back without spending its attempt when the breaker is open
 * (its message is then deleted: the row waits for the sweep), failed as usual otherwise (throws).
 */
async function settleDownstream(failure: DownstreamFailure, giveBack: boolean, deps: ProcessorDependencies): Promise<void> {
  if (giveBack) return givenBack(failure.claimed, failure.cause, deps);
  await fail(failure.claimed, failure.cause, deps);
  throw failure.cause;
}

/** Claims the row and decides it; undefined when there is nothing to do. */
async function decide(record: SQSRecord, deps: ProcessorDependencies, assembler: EffectAssembler | undefined): Promise<Decided | undefined> {
  const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? 1);
  const key = decodeWorkMessage(record.body);
  const fields: LogFields = { eventRef: logReference(key), messageId: record.messageId, receiveCount };
  // Only a delivery row is ever claimed: any other key (a submission's, one no row holds) is refused, its message dropped.
  if (!isDeliveryKey(key)) {
    refuseKey(deps.telemetry, key, 'work_queue');
    return undefined;
  }
  // Only this attempt's own writes must match it: 96 random bits tell it from any other holder,
  // in 16 characters (the lease attributes decide whether a claimed row fits one write unit).
  const owner = randomBytes(12).toString('base64url');
  const startedAt = deps.now();
  let row: ClaimedDelivery | undefined;
  try {
    row = await deps.inbox.claim(key, owner, startedAt, deps.leaseMs, deps.maxReceiveCount);
    if (!row) return await unclaimed(key, receiveCount, fields, deps);
  } catch (error) {
    // The store refused the claim or a read of the row (throttled, unavailable): nothing was
    // taken, and the message is retried after its visibility timeout. Ours are logged where thrown.
    if (!(error instanceof SafeError)) {
      deps.telemetry.count(MetricName.PROCESSING_FAILED, providerOf(key, deps));
      deps.telemetry.log('WARN', 'claim failed', { ...fields, ...safeErrorFields(error) });
    }
    throw error;
  }
  const claimed = { key, owner, receiveCount, fields: { ...fields, ...queueDelays(row, startedAt, deps) }, row, leaseUntil: startedAt + deps.leaseMs };
  try {
    const adapter = deps.adapters.get(row.provider);
    if (!adapter) throw new ConfigurationError(`provider ${row.provider} is not configured`);
    const body = await bodyOfRow(row, deps.bodies);
    const observation = adapter.observe(body, row.meta);
    // A job's delivery with no final result exposes nothing: no read, no effect.
    if (!observation && adapter.reportsJob(row.meta)) return { ...claimed, outcome: RowOutcome.NO_FINAL_RESULT };

    // The authoritative read comes before anything is exposed. A missing or expired resource
    // settles the row: no result, no effect, no retry, and never a new generation.
    const reader = deps.resourceReaders?.get(row.provider);
    const read = reader && (await reader.read(body));
    if (read?.kind === 'unavailable') {
      deps.telemetry.count(MetricName.RESOURCE_UNAVAILABLE, row.provider);
      deps.telemetry.log('WARN', 'resource unavailable', { ...fields, provider: row.provider, httpStatus: read.status });
      // An earlier attempt read the resource and decided this job's winner, then stopped before
      // completing (a crash, a failed dispatch): that decision stands (the results table holds
      // it; no new offer), so its effect goes out without the resource rather than never.
      const winner = observation && (await deps.results.winnerOf(row.provider, observation.jobKey));
      if (observation && winner && winner.eventKey === key) {
        const responseRef = await storeLargeResponse(row.provider, observation.response, deps);
        const effect = await winnerEffect(row, body, observation, responseRef, { resourceUnavailable: true, resultVersion: winner.version }, assembler);
        return { ...claimed, outcome: RowOutcome.WINNER, offer: 'already_won', effect };
      }
      return { ...claimed, outcome: RowOutcome.UNAVAILABLE };
    }
    const resource = read?.kind === 'found' ? read.text : undefined;

    if (!observation) {
      const effect =
        assembler && (await assembler.assemble({ row, event: adapter.effectOf(body), content: effectContent(row, body, undefined, undefined, resource) }));
      return { ...claimed, outcome: RowOutcome.EVENT, effect };
    }
    return { ...claimed, ...(await decideJob(row, body, observation, resource, key, deps, assembler)) };
  } catch (error) {
    // The provider's API failing is the downstream's: the breaker decides, after the batch, how the row is given back.
    if (error instanceof AuthoritativeReadError) throw new DownstreamFailure(claimed, error);
    await fail(claimed, error, deps);
    throw error;
  }
}

/**
 * Offers the row's result to its job. A new winner, or this row's own earlier win that never
 * reached completion, gets the winner's effect; a result that ranks lower gets none.
 */
async function decideJob(
  row: StoredDelivery,
  body: Buffer,
  observation: JobObservation,
  resource: string | undefined,
  key: string,
  deps: ProcessorDependencies,
  assembler: EffectAssembler | undefined,
): Promise<Pick<Decided, 'outcome' | 'offer' | 'effect'>> {
  const responseRef = await storeLargeResponse(row.provider, observation.response, deps);
  const offer = await deps.results.offer({ provider: row.provider, eventKey: key, observation, responseRef, now: deps.now() });
  // Counted once per change, not again when a retry finds its own earlier win.
  if (offer.outcome === 'won') deps.telemetry.count(MetricName.WINNER_CHANGED, row.provider);
  if (offer.outcome === 'lost') return { outcome: RowOutcome.SUPERSEDED, offer: offer.outcome };
  return {
    outcome: RowOutcome.WINNER,
    offer: offer.outcome,
    effect: await winnerEffect(row, body, observation, responseRef, { resource, resultVersion: offer.version }, assembler),
  };
}

/**
 * The effect of a job's winner, with the result version the decision holds (what a consumer
 * orders a job's effects by); `resourceUnavailable` when the read found the resource gone after
 * the decision.
 */
async function winnerEffect(
  row: StoredDelivery,
  body: Buffer,
  observation: JobObservation,
  responseRef: string | undefined,
  decision: { readonly resultVersion: number; readonly resource?: string; readonly resourceUnavailable?: boolean },
  assembler: EffectAssembler | undefined,
): Promise<Effect | undefined> {
  return (
    assembler &&
    assembler.assemble({
      row,
      observation,
      resultVersion: decision.resultVersion,
      content: effectContent(row, body, observation, responseRef, decision.resource),
      resourceUnavailable: decision.resourceUnavailable,
    })
  );
}

/** Sends the effects of the batch's decided rows in one go; the outcome of each, by record index. */
async function dispatchEffects(rows: readonly (Decided | undefined)[], sink: EffectSink | undefined): Promise<Map<number, DispatchOutcome>> {
  const indexes = rows.flatMap((row, index) => (row?.effect ? [index] : []));
  if (!sink || indexes.length === 0) return new Map();
  let outcomes: DispatchOutcome[];
  try {
    outcomes = await sink.dispatch(indexes.map((index) => rows[index]!.effect!));
  } catch (error) {
    outcomes = indexes.map(() => ({ ok: false, error: error as Error }));
  }
  return new Map(indexes.map((index, position) => [index, outcomes[position]]));
}

/**
 * Completes the batch's rows in one request while every lease has a third of its time left (no
 * other worker can take a row before its lease runs out: `InboxStore.completeLeased`); the keys
 * it completed. The request is abandoned at that margin, and then, or when it fails, each row is
 * completed on its own with the conditional UpdateItem.
 */
async function completeBatch(rows: readonly Decided[], deps: ProcessorDependencies): Promise<ReadonlySet<string>> {
  const now = deps.now();
  const margin = deps.leaseMs / 3;
  // Whole milliseconds: AbortSignal.timeout refuses a fraction (a 10 s lease has a third of 3,333.3 ms).
  const leftMs = Math.floor(Math.min(...rows.map((row) => row.leaseUntil)) - now - margin);
  if (rows.length < 2 || !(leftMs > 0)) return new Set();
  try {
    const unprocessed = new Set(await deps.inbox.completeLeased(rows, now, AbortSignal.timeout(leftMs)));
    return new Set(rows.map((row) => row.key).filter((key) => !unprocessed.has(key)));
  } catch (error) {
    deps.telemetry.log('WARN', 'batched completion failed; completing one by one', { rows: rows.length, error: safeErrorText(error) });
    return new Set();
  }
}

/** Completes a decided row whose effect (if any) was accepted, unless the batch did; releases it otherwise. */
async function finish(
  decided: Decided,
  dispatched: DispatchOutcome | undefined,
  completed: ReadonlySet<string>,
  giveBack: boolean,
  deps: ProcessorDependencies,
): Promise<void> {
  const { key, owner, fields, row, outcome, effect } = decided;
  if (dispatched && !dispatched.ok) {
    deps.telemetry.count(MetricName.EFFECT_FAILURES, row.provider);
    if (giveBack) return givenBack(decided, dispatched.error, deps, OutboxResult.FAILED);
    await fail(decided, dispatched.error, deps, OutboxResult.FAILED);
    throw dispatched.error;
  }
  try {
    if (dispatched) deps.telemetry.count(MetricName.EFFECTS_DISPATCHED, row.provider);
    if (!completed.has(key) && !(await deps.inbox.complete(key, owner, outcome, deps.now()))) {
      deps.telemetry.log('WARN', 'lease lost before completion', fields);
    }
    deps.telemetry.count(MetricName.PROCESSED, row.provider);
    deps.telemetry.log('INFO', DeliveryRecordMessage.PROCESSED, {
      ...fields,
      // The message is deleted once its row is processed: only a failed attempt's line names it.
      messageId: undefined,
      provider: row.provider,
      reconcileResult: outcome,
      outboxResult: dispatched ? OutboxResult.DISPATCHED : OutboxResult.NONE,
      attempts: row.attempts,
      ...(decided.offer ? { offer: decided.offer } : {}),
      ...(effect ? { effect: effect.detailType, effectKey: effect.key } : {}),
    });
  } catch (error) {
    await fail(decided, error, deps);
    throw error;
  }
}

/**
 * The delivery record's times of a claimed row: when it was received and signed, and how long
 * each was before this attempt started. The first attempt of a row (never processed nor
 * dead before: an operator's replay or redrive starts its count again) also emits them as the
 * `QueueDelay` and `QueueDelayFromEvent` metrics.
 */
function queueDelays(row: StoredDelivery, startedAt: number, deps: ProcessorDependencies): LogFields {
  const fromReceipt = startedAt - row.receivedAt;
  const fromEvent = row.eventAt === undefined ? undefined : startedAt - row.eventAt;
  if (row.attempts === 1 && row.processedAt === undefined && row.lastError === undefined) {
    // A provider's clock ahead of ours (within the future tolerance) is no negative wait.
    deps.telemetry.duration(MetricName.QUEUE_DELAY, row.provider, Math.max(0, fromReceipt));
    if (fromEvent !== undefined) deps.telemetry.duration(MetricName.QUEUE_DELAY_FROM_EVENT, row.provider, Math.max(0, fromEvent));
  }
  return {
    receivedAt: new Date(row.receivedAt).toISOString(),
    eventTimestamp: row.eventAt === undefined ? undefined : new Date(row.eventAt).toISOString(),
    queueDelayMs: fromReceipt,
    queueDelayFromEventMs: fromEvent,
  };
}

/** Puts a result too large for the results table into the body store; its reference, if so. */
async function storeLargeResponse(provider: string, response: string, deps: ProcessorDependencies): Promise<string | undefined> {
  const bytes = Buffer.from(response, 'utf8');
  if (!deps.bodies || bytes.length <= (deps.inlineBodyBytes ?? Infinity)) return undefined;
  return deps.bodies.put(responseObjectKey(provider, sha256Hex(bytes)), bytes);
}
