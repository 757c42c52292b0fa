/**
 * One receiver, the whole pipeline, `n` deliveries: each delivery is signed and handed to the
 * edge as API Gateway would hand it (an HTTP API payload 2.0 event), then the work queue is
 * drained the way Lambda's SQS event source does it (receive a batch of up to 10, run the
 * processor, delete what succeeded; packages/webhook-inbox-local/src/aws/lambda/sqs-event-source.ts), by one or more concurrent loops
 * that each stop at an empty receive, then the reconciler runs once, then the sweep examines the
 * load's pending-index entries as the runs after `sweepAfter` will.
 * Every AWS request is counted by the clients' middleware; every invocation is timed.
 */
import { performance } from 'node:perf_hooks';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { encodeWorkMessage } from '../lambda/shared/stores/work-queue';
import { drain } from '#twin/testing';
import { BenchEnvironment, deliveryBody, signedDeliveryEvent } from './environment';
import { Receiver } from './receivers';

export interface PipelineOptions {
  /** Bytes of each delivery body. */
  readonly bodyBytes: number;
  /** Deliveries in flight at the edge at once (1: one after the other, each timed alone). */
  readonly edgeConcurrency: number;
  /** Batches processed at once (the event source's concurrency); each loop ends on an empty receive. */
  readonly processorConcurrency?: number;
}

export interface PipelineRun {
  readonly receiver: string;
  readonly deliveries: number;
  /** Answered 2xx by the edge. */
  readonly accepted: number;
  /** Effects published on the receiver's bus: one per decided job. */
  readonly processed: number;
  /** Messages left in the dead-letter queue (must be 0). */
  readonly deadLettered: number;
  /** Milliseconds of each edge invocation. */
  readonly edgeMs: number[];
  /** Each processor invocation: its duration and its batch size. */
  readonly batches: { readonly ms: number; readonly size: number }[];
  /** The reconciler run after the load, if the receiver has one. */
  readonly reconcilerMs?: number;
  /** The sweep's examination of the load's entries (`Receiver.sweep`), if the receiver has one. */
  readonly sweepMs?: number;
  /** Bytes of the SQS message of one delivery, and of its effect entry. */
  readonly messageBytes: number;
  readonly effectBytes: number;
  /** Log bytes written per function. */
  readonly logBytes: { readonly edge: number; readonly processor: number; readonly reconciler: number };
  readonly elapsedMs: number;
}

/** Runs `worker` over 0..n-1 with at most `concurrency` in flight. */
export async function pool(n: number, concurrency: number, worker: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) await worker(next++);
  });
  await Promise.all(lanes);
}

export async function runPipeline(env: BenchEnvironment, receiver: Receiver, n: number, options: PipelineOptions): Promise<PipelineRun> {
  const started = performance.now();
  const bodies = Array.from({ length: n }, () => deliveryBody(options.bodyBytes));
  const secret = receiver.signingSecret;
  await receiver.warm();

  const edgeMs: number[] = new Array<number>(n);
  let accepted = 0;
  await pool(n, options.edgeConcurrency, async (index) => {
    const event = signedDeliveryEvent(bodies[index], secret);
    const t0 = performance.now();
    const answer = await receiver.edge(event);
    edgeMs[index] = performance.now() - t0;
    if (answer.statusCode! >= 200 && answer.statusCode! < 300) accepted++;
  });

  const batches: { ms: number; size: number }[] = [];
  const timed = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const t0 = performance.now();
    const response = await receiver.processor(event);
    batches.push({ ms: performance.now() - t0, size: event.Records.length });
    return response;
  };
  await Promise.all(
    Array.from({ length: options.processorConcurrency ?? 1 }, () => drain(receiver.eventSourceSqs, receiver.queueUrl, timed, { batchSize: 10 })),
  );

  let reconcilerMs: number | undefined;
  if (receiver.reconciler) {
    const t0 = performance.now();
    await receiver.reconciler();
    reconcilerMs = performance.now() - t0;
  }
  let sweepMs: number | undefined;
  if (receiver.sweep) {
    const t0 = performance.now();
    await receiver.sweep();
    sweepMs = performance.now() - t0;
  }

  const events = env.eventBridge.eventsOn(receiver.bus);
  const dlq = await env.sqs().send(new GetQueueAttributesCommand({ QueueUrl: receiver.deadLetterQueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
  const effect = events[0];
  return {
    receiver: receiver.name,
    deliveries: n,
    accepted,
    processed: events.length,
    deadLettered: Number(dlq.Attributes?.ApproximateNumberOfMessages ?? 0),
    edgeMs,
    batches,
    reconcilerMs,
    sweepMs,
    // Ours carries the inbox key; the Powertools receiver the delivery itself.
    messageBytes: receiver.name === 'ours' ? Buffer.byteLength(encodeWorkMessage(`answerline#tsk_${'0'.repeat(36)}`)) : options.bodyBytes,
    effectBytes: effect ? Buffer.byteLength(effect.source) + Buffer.byteLength(effect.detailType) + Buffer.byteLength(effect.detailText) : 0,
    logBytes: { edge: receiver.logs.edge.bytes, processor: receiver.logs.processor.bytes, reconciler: receiver.logs.reconciler.bytes },
    elapsedMs: performance.now() - started,
  };
}
