/**
 * End-to-end throughput of the local twin (packages/webhook-inbox-local/src/twin/inbox-twin.ts: the shipped bundles in their own
 * execution-environment processes behind the API Gateway front door and the SQS event source),
 * beside a bare replay of the same emulator calls without our code.
 *
 * - twin: a bounded sender (`senders` in flight) POSTs signed deliveries to the front door;
 *   a delivery counts once it is accepted (2xx) and processed (its effect is on the bus).
 * - bare: the same requests a delivery costs in our pipeline, copied from the verifier's and the
 *   processor's own requests (same tables, item sizes and expressions: conditional PutItem and
 *   SendMessage with `senders` in flight; then receive a batch of 10, claim and offer each record,
 *   one PutEvents for the batch, complete each record, delete the batch, with as many receive
 *   loops as the twin's event source has), issued directly with the AWS SDK by two client
 *   processes (bench/bare-replay-worker.cjs: edge, processing), as the twin's functions run in
 *   processes of their own, against the twin's own emulators, through the same kind of
 *   pass-through proxy the twin puts between its functions and the emulators. That is the ceiling
 *   the emulators allow for this work here.
 *
 * The two are measured in alternating rounds (bare, twin, twin, bare, bare, twin …), so a change
 * of load on the shared machine during the measurement weighs on both.
 */
import { ChildProcess, fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { PutItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { PutEventsCommandInput } from '@aws-sdk/client-eventbridge';
import type { SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { Defaults } from '../lib/contract';
import { createQueues, createTables, endpointTarget, FaultProxy, resourceNames } from '#twin/testing';
import { startTwin, type Twin } from '#twin/testing/twin';
import { RequestCounter } from './counting';
import { BenchEnvironment, deliveryBody, runPrefix, signedHeaders } from './environment';
import { pool } from './pipeline';
import { Stage } from './receivers';

/** The requests one delivery costs in our pipeline, as the counter captured them. */
export interface ReplayShapes {
  readonly insert: PutItemCommandInput;
  readonly enqueue: SendMessageCommandInput;
  readonly claim: UpdateItemCommandInput;
  readonly offer: UpdateItemCommandInput;
  readonly effects: PutEventsCommandInput;
}

export function replayShapes(counter: RequestCounter): ReplayShapes {
  const take = <T>(stage: string, purpose: string): T => {
    const input = counter.capturedInput(stage, purpose);
    if (!input) throw new Error(`no ${purpose} request was captured at the ${stage}`);
    return input as T;
  };
  return {
    insert: take(Stage.EDGE, 'conditional insert'),
    enqueue: take(Stage.EDGE, 'enqueue'),
    claim: take(Stage.PROCESSOR, 'claim'),
    offer: take(Stage.PROCESSOR, 'result offer'),
    effects: take(Stage.PROCESSOR, 'effects'),
  };
}

export interface ThroughputOptions {
  readonly deliveries: number;
  /** Deliveries in flight at the front door (and edge requests in flight in the bare replay). */
  readonly senders: number;
  readonly verifierConcurrency: number;
  /** The event source's concurrent batches (and the processor's environments). */
  readonly processorConcurrency: number;
  readonly bodyBytes: number;
  /** Deliveries sent (and processed) before timing, so that no cold start is timed. */
  readonly warmup: number;
}

export interface Rate {
  readonly deliveries: number;
  readonly ms: number;
  /** Deliveries accepted and processed per second. */
  readonly perSecond: number;
}

interface TwinRate extends Rate {
  readonly accepted: number;
  /** Milliseconds until the last delivery was accepted. */
  readonly acceptedMs: number;
}

export interface ThroughputResult {
  readonly twin: Rate & { readonly accepted: number; readonly acceptedPerSecond: number; readonly coldStarts: number };
  readonly bare: Rate;
  /** twin ÷ bare, over all rounds. */
  readonly ratio: number;
  /** twin ÷ bare of each round, to show how much the machine's load moved it. */
  readonly roundRatios: number[];
  /** Requests per delivery the bare replay sent, by operation (to check it replays the same calls). */
  readonly bareRequests: Record<string, number>;
  readonly conditions: string;
}

const TWIN_TIMING = {
  // The construct's defaults, not the twin's compressed ones: no sweep re-enqueues rows mid-run.
  processorTimeoutSeconds: Defaults.PROCESSOR_TIMEOUT_SECONDS,
  reconcilerTimeoutSeconds: Defaults.RECONCILER_TIMEOUT_SECONDS,
  sweepAfterSeconds: Defaults.SWEEP_AFTER_SECONDS,
  reconcileEverySeconds: Defaults.SWEEP_EVERY_MINUTES * 60,
};

export async function measureThroughput(env: BenchEnvironment, shapes: ReplayShapes, options: ThroughputOptions): Promise<ThroughputResult> {
  const stateDir = mkdtempSync(join(tmpdir(), 'webhook-inbox-bench-'));
  const twin = await startTwin({
    port: 0,
    providers: ['answerline'],
    stateDir,
    timing: TWIN_TIMING,
    verifierConcurrency: options.verifierConcurrency,
    processorConcurrency: options.processorConcurrency,
    // The bare replay it is compared with makes the same emulator calls directly: the local IAM check would be ours alone.
    enforceIam: false,
  });
  const bare = await BareReplay.start(env, twin, shapes, options);
  try {
    await sendThroughTwin(twin, options.warmup, options);
    await bare.run(Math.min(options.warmup, 50));
    bare.clearCounts();
    const coldStarts = () => twin.hosts.verifier.stats.coldStarts + twin.hosts.processor.stats.coldStarts;
    const warmupColdStarts = coldStarts();
    // Rounds of the two, in the order bare-twin, twin-bare, bare-twin …: a change of load on the
    // machine during the measurement weighs on both alike.
    const rounds = throughputRounds(options.deliveries);
    const twinRuns: TwinRate[] = [];
    const bareRuns: Rate[] = [];
    for (let round = 0; round < rounds; round++) {
      const size = Math.floor(options.deliveries / rounds) + (round < options.deliveries % rounds ? 1 : 0);
      if (round % 2 === 0) bareRuns.push(await bare.run(size));
      twinRuns.push(await sendThroughTwin(twin, size, options));
      if (round % 2 === 1) bareRuns.push(await bare.run(size));
    }
    const twinRate = total(twinRuns);
    const bareRate = total(bareRuns);
    const bareRequests = Object.fromEntries(Object.entries(bare.counts).map(([name, count]) => [name, count / options.deliveries]));
    const ratios = twinRuns.map((run, index) => run.perSecond / bareRuns[index].perSecond);
    const accepted = twinRuns.reduce((sum, run) => sum + run.accepted, 0);
    return {
      twin: {
        ...twinRate,
        accepted,
        acceptedPerSecond: (accepted / twinRuns.reduce((sum, run) => sum + run.acceptedMs, 0)) * 1000,
        coldStarts: coldStarts() - warmupColdStarts,
      },
      bare: bareRate,
      ratio: twinRate.perSecond / bareRate.perSecond,
      roundRatios: ratios,
      bareRequests,
      conditions:
        `${options.deliveries} deliveries of ${options.bodyBytes} B, ${options.senders} in flight; twin: ${options.verifierConcurrency} verifier and ` +
        `${options.processorConcurrency} processor environments, ${options.processorConcurrency} concurrent batches of up to ${Defaults.PROCESSOR_BATCH_SIZE}; ` +
        `bare: the same ${options.senders} edge lanes and ${options.processorConcurrency} receive loops; ${options.warmup} warm-up deliveries first (no cold start timed); ` +
        `${rounds} alternating rounds of each`,
    };
  } finally {
    await bare.stop();
    await twin.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Rounds of twin and bare: enough to alternate, each of at least about 400 deliveries, at most 8. */
export function throughputRounds(deliveries: number): number {
  return Math.max(2, Math.min(8, Math.floor(deliveries / 400)));
}

function total(runs: readonly Rate[]): Rate {
  const deliveries = runs.reduce((sum, run) => sum + run.deliveries, 0);
  const ms = runs.reduce((sum, run) => sum + run.ms, 0);
  return { deliveries, ms, perSecond: (deliveries / ms) * 1000 };
}

/** Sends `n` signed deliveries through the twin's front door; resolves once all are processed. */
async function sendThroughTwin(twin: Twin, n: number, options: ThroughputOptions): Promise<TwinRate> {
  const url = new URL(twin.urls.answerline);
  const secret = twin.secrets.answerline;
  const agent = new Agent({ keepAlive: true, maxSockets: options.senders });
  const bodies = Array.from({ length: n }, () => deliveryBody(options.bodyBytes));
  const processedBefore = twin.eventBridge.events.length;
  let accepted = 0;
  let lastAccepted = 0;
  const t0 = performance.now();
  try {
    await pool(n, options.senders, async (index) => {
      for (let attempt = 0; ; attempt++) {
        const status = await post(url, agent, bodies[index], signedHeaders(bodies[index], secret));
        if (status >= 200 && status < 300) {
          accepted++;
          lastAccepted = performance.now();
          return;
        }
        // A provider retries a 5xx; so does the bench, a bounded number of times.
        if (attempt >= 5) throw new Error(`the twin answered ${status} to a delivery, ${attempt + 1} times`);
      }
    });
    const deadline = Date.now() + 600_000;
    while (twin.eventBridge.events.length - processedBefore < n) {
      if (Date.now() > deadline) throw new Error(`only ${twin.eventBridge.events.length - processedBefore} of ${n} deliveries were processed in 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    agent.destroy();
  }
  const ms = performance.now() - t0;
  return { deliveries: n, ms, perSecond: (n / ms) * 1000, accepted, acceptedMs: lastAccepted - t0 };
}

function post(url: URL, agent: Agent, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The same emulator calls, issued directly by two client processes; its own tables and queue on the twin's emulators. */
class BareReplay {
  /** Requests per operation of the last timed runs, added up. */
  readonly counts: Record<string, number> = {};

  private constructor(
    private readonly workers: { readonly edge: ChildProcess; readonly processing: ChildProcess },
    private readonly proxies: FaultProxy[],
  ) {}

  static async start(env: BenchEnvironment, twin: Twin, shapes: ReplayShapes, options: ThroughputOptions): Promise<BareReplay> {
    const dynamodbProxy = new FaultProxy(endpointTarget(twin.endpoints.dynamodb));
    const sqsProxy = new FaultProxy(endpointTarget(twin.endpoints.sqs));
    const endpoints = { dynamodb: await dynamodbProxy.start(), sqs: await sqsProxy.start(), events: env.eventBridgeEndpoint };
    const names = resourceNames(runPrefix('bare'));
    await createTables(env.dynamodb(twin.endpoints.dynamodb), names);
    const queues = await createQueues(env.sqs(twin.endpoints.sqs), names);
    const common = {
      endpoints,
      shapes,
      tables: { inbox: names.inboxTable, results: names.resultsTable },
      queueUrl: queues.workQueueUrl,
      bus: env.bus('bare'),
      senders: options.senders,
      loops: options.processorConcurrency,
      batchSize: Defaults.PROCESSOR_BATCH_SIZE,
    };
    const spawn = async (role: 'edge' | 'processing') => {
      const child = fork(WORKER, [], { serialization: 'advanced', env: { ...process.env, NODE_NO_WARNINGS: '1' } });
      child.send({ type: 'setup', setup: { ...common, role } });
      await next(child, 'ready');
      return child;
    };
    return new BareReplay({ edge: await spawn('edge'), processing: await spawn('processing') }, [dynamodbProxy, sqsProxy]);
  }

  async stop(): Promise<void> {
    for (const child of Object.values(this.workers)) child.kill('SIGKILL');
    for (const proxy of this.proxies) await proxy.stop();
  }

  clearCounts(): void {
    for (const name of Object.keys(this.counts)) delete this.counts[name];
  }

  /** `n` deliveries through both workers; timed until the last one is processed. */
  async run(n: number): Promise<Rate> {
    const t0 = performance.now();
    const processed = next(this.workers.processing, 'processed');
    const done = [next(this.workers.edge, 'done'), next(this.workers.processing, 'done')];
    this.workers.edge.send({ type: 'run', n });
    this.workers.processing.send({ type: 'run', n });
    await processed;
    const ms = performance.now() - t0;
    for (const message of await Promise.all(done)) {
      for (const [name, count] of Object.entries((message as { counts: Record<string, number> }).counts)) this.counts[name] = (this.counts[name] ?? 0) + count;
    }
    return { deliveries: n, ms, perSecond: (n / ms) * 1000 };
  }
}

const WORKER = join(__dirname, 'bare-replay-worker.cjs');

/** The next message of `type` from a worker; an error message or an exit rejects. */
function next(child: ChildProcess, type: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string; message?: string }) => {
      if (message.type === type) {
        cleanup();
        resolve(message);
      } else if (message.type === 'error') {
        cleanup();
        reject(new Error(`bare replay worker: ${message.message}`));
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error('a bare replay worker exited'));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
