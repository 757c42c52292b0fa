/**
 * Verifier latency against its floor. The real verifier (createVerifier, real SDK clients,
 * dynalite, fauxqs, the Secrets Manager stand-in, the secret cache warm) handles one delivery at
 * a time; beside it, interleaved in the same loop, the same two clients send the two round trips
 * no verifier can avoid: the conditional PutItem of the row and the SendMessage of its key,
 * copied from the verifier's own first requests (same table, same item size, same expressions).
 * The Powertools receiver's edge runs in the same loop too, for reference.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { PutItemCommand, PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { encodeWorkMessage } from '../lambda/shared/stores/work-queue';
import { RequestCounter } from './counting';
import { BenchEnvironment, deliveryBody, signedDeliveryEvent } from './environment';
import { buildLeanReceiver, buildOurReceiver, buildPowertoolsReceiver, Receiver, Stage } from './receivers';
import { mean, percentile } from './stats';

export interface LatencyOptions {
  readonly iterations: number;
  readonly warmup: number;
  readonly bodyBytes: number;
}

export interface LatencySeries {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly samples: number;
}

export interface LatencyResult {
  readonly verifier: LatencySeries;
  readonly floor: LatencySeries;
  readonly powertoolsEdge: LatencySeries;
  readonly leanEdge: LatencySeries;
  /** verifier ÷ floor. */
  readonly ratioP50: number;
  readonly ratioP99: number;
  readonly conditions: string;
}

function series(values: number[]): LatencySeries {
  return { p50: percentile(values, 50), p99: percentile(values, 99), mean: mean(values), samples: values.length };
}

/** The milliseconds of every timed edge invocation (the cost model bills these). */
export interface EdgeSamples {
  readonly ours: number[];
  readonly powertools: number[];
  readonly lean: number[];
}

export async function measureLatency(env: BenchEnvironment, options: LatencyOptions): Promise<{ result: LatencyResult; samples: EdgeSamples }> {
  const counter = new RequestCounter();
  const ours = await buildOurReceiver(env, { counter }, 'latency');
  const powertools = await buildPowertoolsReceiver(env, { counter: new RequestCounter() }, 'latency-pt');
  const lean = await buildLeanReceiver(env, { counter: new RequestCounter() }, 'latency-lean');
  for (const receiver of [ours, powertools, lean]) await receiver.warm();

  // The verifier's own first requests, to copy.
  await prepare(ours)();
  const put = counter.capturedInput(Stage.EDGE, 'conditional insert') as PutItemCommandInput | undefined;
  const send = counter.capturedInput(Stage.EDGE, 'enqueue') as SendMessageCommandInput | undefined;
  if (!put || !send) throw new Error('the verifier sent no PutItem or SendMessage to copy');
  const floor = () => {
    const key = `answerline#tsk_${randomUUID()}`;
    const putItem = new PutItemCommand({ ...put, Item: { ...put.Item, pk: { S: key } } });
    const sendMessage = new SendMessageCommand({ ...send, MessageBody: encodeWorkMessage(key) });
    return async () => {
      await ours.edgeClients.dynamodb.send(putItem);
      await ours.edgeClients.sqs.send(sendMessage);
    };
  };

  const verifierMs: number[] = [];
  const floorMs: number[] = [];
  const powertoolsMs: number[] = [];
  const leanMs: number[] = [];
  // Each step is prepared (event built and signed, commands built) outside the timer.
  const steps: Array<[() => () => Promise<unknown>, number[]]> = [
    [() => prepare(ours), verifierMs],
    [floor, floorMs],
    [() => prepare(powertools), powertoolsMs],
    [() => prepare(lean), leanMs],
  ];
  for (let i = 0; i < options.warmup + options.iterations; i++) {
    // Rotate the order each iteration: no series always runs first, or right after another.
    for (let k = 0; k < steps.length; k++) {
      const [make, into] = steps[(i + k) % steps.length];
      const run = make();
      const t0 = performance.now();
      await run();
      const ms = performance.now() - t0;
      if (i >= options.warmup) into.push(ms);
    }
  }
  const verifier = series(verifierMs);
  const floorSeries = series(floorMs);
  const result: LatencyResult = {
    verifier,
    floor: floorSeries,
    powertoolsEdge: series(powertoolsMs),
    leanEdge: series(leanMs),
    ratioP50: verifier.p50 / floorSeries.p50,
    ratioP99: verifier.p99 / floorSeries.p99,
    conditions: `one delivery at a time, ${options.iterations} interleaved samples each after ${options.warmup} warm-up rounds, ${options.bodyBytes} B bodies, secret cache warm, against dynalite/fauxqs in their own process on loopback`,
  };
  return { result, samples: { ours: verifierMs, powertools: powertoolsMs, lean: leanMs } };

  /** A signed delivery for `receiver`, built now; the returned function hands it to the edge. */
  function prepare(receiver: Receiver): () => Promise<void> {
    const event = signedDeliveryEvent(deliveryBody(options.bodyBytes), receiver.signingSecret);
    return async () => {
      const answer = await receiver.edge(event);
      if (answer.statusCode !== 202) throw new Error(`the ${receiver.name} edge answered ${answer.statusCode}: ${answer.body}`);
    };
  }
}
