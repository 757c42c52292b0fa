/**
 * `npm run bench`: every figure of the benchmark side by side, measured in one run, each beside
 * what it is compared with, as a ratio (the machine is shared and noisy: absolute figures move
 * from run to run, ratios of interleaved measurements much less). `runBench` measures and
 * returns the results; `renderMarkdown` turns them into the tables docs/PROOF.md carries.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Defaults } from '../lib/contract';
import { Bill, BILL_VOLUMES, billAt, defaultTemplateFacts, StoredBytes, storedBytesPerDelivery, TemplateFacts } from './bill';
import { CapacityMeter, MeteredUnits } from './capacity';
import { ColdStartResult, measureColdStart } from './cold-start';
import { batchMs, CostBreakdown, costOf, MEMORY_MB, MONTHLY_DELIVERIES, RECONCILER_RUNS_PER_MONTH, requestsByStage, StageRequests } from './cost';
import { OperationCount, perDelivery, PerDelivery, RequestCounter } from './counting';
import { BenchEnvironment, deliveryBody, signedDeliveryEvent } from './environment';
import { LatencyResult, measureLatency } from './latency';
import { PipelineRun, runPipeline } from './pipeline';
import { PRICES } from './prices';
import { RECEIVER_NAMES, ReceiverName, RECEIVERS, Stage } from './receivers';
import { measureSignatures, SignatureResult } from './signature';
import { mean } from './stats';
import { measureThroughput, replayShapes, ThroughputResult } from './throughput';
import { ArchiveCost, measureArchiveCost } from './archive';

export const SECTIONS = ['latency', 'signature', 'coldStart', 'requests', 'cost', 'throughput', 'scaling'] as const;

export interface BenchOptions {
  /** Deliveries of each load; the first is 1×. */
  readonly scales: readonly number[];
  readonly bodyBytes: number;
  readonly latency: { readonly iterations: number; readonly warmup: number };
  readonly signature: { readonly sizes: readonly number[]; readonly batchMs: number; readonly rounds: number; readonly warmupRounds: number };
  readonly coldStartSamples: number;
  /** Deliveries of the DynamoDB unit trace (each write read before and after). */
  readonly unitTraceDeliveries: number;
  /**
   * Body sizes priced beside `bodyBytes`: each gets its own unit trace and a run of `deliveries`
   * through both receivers, one delivery at a time at the edge (those durations are billed).
   */
  readonly costSizes: { readonly bytes: readonly number[]; readonly deliveries: number };
  /** Deliveries through our receiver with and without the archive (docs/ARCHIVE.md). */
  readonly archiveDeliveries: number;
  readonly throughput: { readonly senders: number; readonly verifierConcurrency: number; readonly processorConcurrency: number; readonly warmup: number };
  /** The counted pipeline runs: deliveries in flight at the edge, batches processed at once. */
  readonly pipeline: { readonly edgeConcurrency: number; readonly processorConcurrency: number };
  /** Progress lines go here (stderr in the CLI). */
  readonly progress?: (line: string) => void;
}

/**
 * The defaults run in a few minutes on the 2-core machine this project is built on (the
 * emulators, single-threaded, carry about 100 to 150 deliveries a second of this pipeline, so
 * the loads are what dominates); `--scales 500,2000,8000` takes about 10 minutes.
 */
export const DEFAULT_OPTIONS: BenchOptions = {
  scales: [200, 800, 3200],
  bodyBytes: 1024,
  latency: { iterations: 1000, warmup: 100 },
  signature: { sizes: [1024, 64 * 1024, 1024 * 1024], batchMs: 50, rounds: 12, warmupRounds: 2 },
  coldStartSamples: 15,
  unitTraceDeliveries: 50,
  costSizes: { bytes: [16 * 1024], deliveries: 400 },
  archiveDeliveries: 800,
  throughput: { senders: 32, verifierConcurrency: 4, processorConcurrency: 2, warmup: 64 },
  pipeline: { edgeConcurrency: 4, processorConcurrency: 2 },
};

/**
 * A tiny load for the structural test: every section runs, no figure is worth keeping. The same
 * body and signature sizes as the defaults, so the test checks the shape the real run produces.
 */
export const QUICK_OPTIONS: BenchOptions = {
  ...DEFAULT_OPTIONS,
  scales: [8, 32],
  latency: { iterations: 20, warmup: 5 },
  signature: { ...DEFAULT_OPTIONS.signature, batchMs: 2, rounds: 2, warmupRounds: 1 },
  coldStartSamples: 1,
  unitTraceDeliveries: 4,
  costSizes: { bytes: [16 * 1024], deliveries: 8 },
  archiveDeliveries: 20,
  throughput: { senders: 4, verifierConcurrency: 1, processorConcurrency: 1, warmup: 4 },
  pipeline: { edgeConcurrency: 2, processorConcurrency: 1 },
};

export interface ReceiverFigures {
  readonly run: Omit<PipelineRun, 'edgeMs' | 'batches'> & {
    readonly batches: number;
    readonly averageBatch: number;
    readonly edgeMeanMs: number;
    readonly processorBatchMeanMs: number;
  };
  readonly stages: StageRequests;
  readonly operations: PerDelivery[];
  readonly cost: CostBreakdown;
}

export interface ScaleFigures {
  readonly deliveries: number;
  readonly load: string;
  readonly ours: ReceiverFigures;
  readonly powertools: ReceiverFigures;
  readonly lean: ReceiverFigures;
  readonly throughput: ThroughputResult;
}

/** The cost of both receivers at one body size, with the unit trace it was priced from. */
export interface SizeCost {
  readonly bytes: number;
  readonly deliveries: number;
  readonly ours: CostBreakdown;
  readonly powertools: CostBreakdown;
  readonly lean: CostBreakdown;
  /** Ours ÷ the Powertools receiver. */
  readonly ratio: number;
  /** Ours ÷ the lean receiver. */
  readonly leanRatio: number;
  /** AWS requests per accepted delivery, whole pipeline. */
  readonly requests: Readonly<Record<ReceiverName, number>>;
  readonly units: Readonly<Record<ReceiverName, MeteredUnits[]>>;
}

export interface Target {
  readonly figure: string;
  readonly target: string;
  readonly value: string;
  readonly met: boolean;
  readonly why?: string;
}

export interface BenchResults {
  readonly meta: {
    readonly startedAt: string;
    readonly seconds: number;
    readonly node: string;
    readonly cpus: number;
    readonly cpuModel: string;
    readonly loadAverage: { readonly start: number[]; readonly end: number[] };
    readonly options: Omit<BenchOptions, 'progress'>;
    readonly command: string;
  };
  readonly latency: LatencyResult;
  readonly signature: SignatureResult;
  readonly coldStart: ColdStartResult;
  readonly units: Readonly<Record<ReceiverName, MeteredUnits[]>> & { readonly deliveries: number; readonly dynaliteAgrees: boolean };
  readonly requests: Readonly<Record<ReceiverName, ReceiverFigures>> & { readonly conditions: string };
  readonly cost: Readonly<Record<ReceiverName, CostBreakdown>> & { readonly conditions: string; readonly ratio: number; readonly leanRatio: number };
  /** The headline's cost (`bodyBytes`, from the largest load) and each of `costSizes`. */
  readonly costBySize: SizeCost[];
  /** What the archive adds per million deliveries. */
  readonly archive: ArchiveCost;
  readonly throughput: ThroughputResult;
  readonly scaling: ScaleFigures[];
  /** What a team pays with the construct's defaults, every line, at each of `BILL_VOLUMES` (1 KiB bodies, the largest load). */
  readonly bill: {
    readonly facts: TemplateFacts;
    readonly customMetrics: string[];
    readonly stored: StoredBytes;
    readonly volumes: Bill[];
  };
  readonly targets: Target[];
}

/** A signed delivery's HTTP request as a provider sends it: the body and its headers. */
function requestBytes(bodyBytes: number): number {
  const event = signedDeliveryEvent(deliveryBody(bodyBytes), 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  return bodyBytes + Object.entries(event.headers).reduce((sum, [name, value]) => sum + name.length + String(value).length + 4, 0);
}

export async function runBench(env: BenchEnvironment, options: BenchOptions = DEFAULT_OPTIONS): Promise<BenchResults> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  const say = options.progress ?? (() => undefined);

  say("the construct's defaults, from the template it synthesizes …");
  const facts = defaultTemplateFacts();

  say('signature verification vs standardwebhooks and svix …');
  const signature = measureSignatures(options.signature);

  say('cold start: bundles vs the naive handler …');
  const coldStart = await measureColdStart(options.coldStartSamples);

  say('verifier latency vs its floor …');
  const { result: latency, samples: edgeSamples } = await measureLatency(env, { ...options.latency, bodyBytes: options.bodyBytes });

  say(`DynamoDB unit trace (${options.unitTraceDeliveries} deliveries each) …`);
  const units = await unitTrace(env, options, options.bodyBytes);

  const scaling: ScaleFigures[] = [];
  let bill: BenchResults['bill'] | undefined;
  const base = options.scales[0];
  for (const deliveries of options.scales) {
    const load = `${Math.round(deliveries / base)}×`;
    say(`${load} load: ${deliveries} deliveries through both receivers …`);
    const figures: Partial<Record<ReceiverName, ReceiverFigures>> = {};
    let shapes;
    for (const name of RECEIVER_NAMES) {
      const counter = new RequestCounter();
      const receiver = await RECEIVERS[name](env, { counter }, `${name}-${deliveries}`);
      const run = await runPipeline(env, receiver, deliveries, { bodyBytes: options.bodyBytes, ...options.pipeline });
      if (run.accepted !== deliveries || run.processed !== deliveries || run.deadLettered !== 0) {
        throw new Error(`${name}: ${run.accepted} accepted, ${run.processed} processed, ${run.deadLettered} dead-lettered of ${deliveries}`);
      }
      figures[name] = receiverFigures(run, counter.all(), units[name], edgeSamples[name], options);
      if (name === 'ours') shapes = replayShapes(counter);
      if (name === 'ours' && deliveries === options.scales[options.scales.length - 1]) {
        const inputs = { run, counts: counter.all(), units: units.ours, edgeMs: edgeSamples.ours, requestBytes: requestBytes(options.bodyBytes) };
        const customMetrics = [...new Set(Object.values(receiver.logs).flatMap((sink) => [...sink.metrics]))].sort();
        const stored = await storedBytesPerDelivery(env.dynamodb(), receiver.tables, run.accepted);
        const volumes = BILL_VOLUMES.map((volume) =>
          billAt(volume, {
            facts,
            perRequest: (batch) => costOf({ ...inputs, batch }),
            customMetrics,
            stored,
            edgeMs: mean(edgeSamples.ours),
            processorMs: batchMs(run.batches),
            reconcilerMs: run.reconcilerMs ?? 0,
          }),
        );
        bill = { facts, customMetrics, stored, volumes };
      }
    }
    say(`${load} load: ${deliveries} deliveries through the twin and the bare replay …`);
    const throughput = await measureThroughput(env, shapes!, { deliveries, bodyBytes: options.bodyBytes, ...options.throughput });
    scaling.push({ deliveries, load, ours: figures.ours!, powertools: figures.powertools!, lean: figures.lean!, throughput });
  }

  // The headline figures come from the largest load: the most deliveries to share batched requests.
  const headline = scaling[scaling.length - 1];
  const requests = {
    conditions: `${headline.deliveries} deliveries of ${options.bodyBytes} B, each a COMPLETED task of its own job (accepted, decided, one effect); ${options.pipeline.edgeConcurrency} in flight at the edge; then the queue drained by the SQS event source (packages/webhook-inbox-local/src/aws/lambda/sqs-event-source.ts), ${options.pipeline.processorConcurrency} batches of up to ${Defaults.PROCESSOR_BATCH_SIZE} at once; one reconciler run after the load, then the sweep's examination of the load's entries as the runs after sweepAfter make it (per delivery)`,
    ours: headline.ours,
    powertools: headline.powertools,
    lean: headline.lean,
  };
  const cost = {
    conditions: `us-east-1 list prices (bench/prices.ts); memory ${MEMORY_MB.edge}/${MEMORY_MB.processor}/${MEMORY_MB.reconciler} MB (edge/processor/reconciler), Arm; durations measured here (edge: the latency section's, one delivery at a time; processor: per batch, ${options.pipeline.processorConcurrency} batches at once); scheduled work amortized at ${MONTHLY_DELIVERIES.toLocaleString('en-US')} deliveries a month (${RECONCILER_RUNS_PER_MONTH} reconciler runs); from the ${headline.deliveries}-delivery run`,
    ours: headline.ours.cost,
    powertools: headline.powertools.cost,
    lean: headline.lean.cost,
    ratio: headline.ours.cost.usdPerMillion / headline.powertools.cost.usdPerMillion,
    leanRatio: headline.ours.cost.usdPerMillion / headline.lean.cost.usdPerMillion,
  };

  const costBySize: SizeCost[] = [
    {
      bytes: options.bodyBytes,
      deliveries: headline.deliveries,
      ours: cost.ours,
      powertools: cost.powertools,
      lean: cost.lean,
      ratio: cost.ratio,
      leanRatio: cost.leanRatio,
      requests: { ours: headline.ours.stages.total, powertools: headline.powertools.stages.total, lean: headline.lean.stages.total },
      units: { ours: units.ours, powertools: units.powertools, lean: units.lean },
    },
  ];
  for (const bytes of options.costSizes.bytes) costBySize.push(await sizeCost(env, options, bytes, say));

  say(`the archive: ${options.archiveDeliveries} deliveries with and without it …`);
  const archive = await measureArchiveCost(env, options.archiveDeliveries, { bodyBytes: options.bodyBytes, ...options.pipeline });

  const results: Omit<BenchResults, 'targets'> = {
    meta: {
      startedAt,
      seconds: (performance.now() - started) / 1000,
      node: process.versions.node,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      loadAverage: { start: loadStart.map(round2), end: loadavg().map(round2) },
      options: { ...options, progress: undefined } as Omit<BenchOptions, 'progress'>,
      command: 'npm run bench',
    },
    latency,
    signature,
    coldStart,
    units,
    requests,
    cost,
    costBySize,
    archive,
    throughput: headline.throughput,
    scaling,
    bill: bill!,
  };
  return { ...results, targets: evaluateTargets(results) };
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/** `billedEdgeMs`: the edge's durations measured one delivery at a time (the latency section). */
function receiverFigures(run: PipelineRun, counts: OperationCount[], units: MeteredUnits[], billedEdgeMs: number[], options: BenchOptions): ReceiverFigures {
  const { edgeMs, batches, ...rest } = run;
  return {
    run: {
      ...rest,
      batches: batches.length,
      averageBatch: run.accepted / batches.length,
      edgeMeanMs: mean(edgeMs),
      processorBatchMeanMs: mean(batches.map((batch) => batch.ms)),
    },
    stages: requestsByStage(counts, run.accepted),
    operations: perDelivery(counts, run.accepted),
    cost: costOf({ run, counts, units, edgeMs: billedEdgeMs, requestBytes: requestBytes(options.bodyBytes) }),
  };
}

/** Both receivers on a small load of `bodyBytes` bodies with the unit meter on every DynamoDB client. */
async function unitTrace(env: BenchEnvironment, options: BenchOptions, bodyBytes: number): Promise<BenchResults['units']> {
  const traced: Partial<Record<ReceiverName, MeteredUnits[]>> = {};
  for (const name of RECEIVER_NAMES) {
    const meter = new CapacityMeter(env.dynamodb());
    const receiver = await RECEIVERS[name](env, { counter: new RequestCounter(), meter }, `${name}-units-${bodyBytes}`);
    await runPipeline(env, receiver, options.unitTraceDeliveries, { bodyBytes, edgeConcurrency: 1, processorConcurrency: 1 });
    traced[name] = meter.all();
  }
  const all = RECEIVER_NAMES.flatMap((name) => traced[name]!);
  // dynalite reports table units (not index units) of writes: they must match the meter's table units.
  const dynaliteAgrees = all
    .filter((entry) => !['Query', 'GetItem', 'BatchGetItem'].includes(entry.operation))
    .every((entry) => Math.abs(entry.tableWru - entry.dynaliteUnits) < 1e-9);
  return { deliveries: options.unitTraceDeliveries, ours: traced.ours!, powertools: traced.powertools!, lean: traced.lean!, dynaliteAgrees };
}

/** Both receivers priced at `bytes`: a unit trace, then a run one delivery at a time at the edge (its durations billed). */
async function sizeCost(env: BenchEnvironment, options: BenchOptions, bytes: number, say: (line: string) => void): Promise<SizeCost> {
  const { deliveries } = options.costSizes;
  say(`${sizeName(bytes)} bodies: unit trace, then ${deliveries} deliveries through both receivers …`);
  const traced = await unitTrace(env, options, bytes);
  const priced: Partial<Record<ReceiverName, { cost: CostBreakdown; requests: number }>> = {};
  for (const name of RECEIVER_NAMES) {
    const counter = new RequestCounter();
    const receiver = await RECEIVERS[name](env, { counter }, `${name}-${bytes}`);
    const run = await runPipeline(env, receiver, deliveries, {
      bodyBytes: bytes,
      edgeConcurrency: 1,
      processorConcurrency: options.pipeline.processorConcurrency,
    });
    if (run.accepted !== deliveries || run.processed !== deliveries || run.deadLettered !== 0) {
      throw new Error(`${name} at ${bytes} B: ${run.accepted} accepted, ${run.processed} processed, ${run.deadLettered} dead-lettered of ${deliveries}`);
    }
    priced[name] = {
      cost: costOf({ run, counts: counter.all(), units: traced[name], edgeMs: run.edgeMs, requestBytes: requestBytes(bytes) }),
      requests: requestsByStage(counter.all(), run.accepted).total,
    };
  }
  const { ours, powertools, lean } = priced as Record<ReceiverName, { cost: CostBreakdown; requests: number }>;
  return {
    bytes,
    deliveries,
    ours: ours.cost,
    powertools: powertools.cost,
    lean: lean.cost,
    ratio: ours.cost.usdPerMillion / powertools.cost.usdPerMillion,
    leanRatio: ours.cost.usdPerMillion / lean.cost.usdPerMillion,
    requests: { ours: ours.requests, powertools: powertools.requests, lean: lean.requests },
    units: { ours: traced.ours, powertools: traced.powertools, lean: traced.lean },
  };
}

export function evaluateTargets(results: Omit<BenchResults, 'targets'>): Target[] {
  const targets: Target[] = [];
  const { latency } = results;
  targets.push({
    figure: 'Verifier latency p50 vs its floor',
    target: '≤ 1.15×',
    value: `${latency.ratioP50.toFixed(2)}× (p99 ${latency.ratioP99.toFixed(2)}×)`,
    met: latency.ratioP50 <= 1.15,
    ...(latency.ratioP50 > 1.15 ? { why: latencyWhy(latency) } : {}),
  });
  for (const row of results.signature.rows) {
    const size = sizeName(row.bytes);
    const goal = row.bytes >= 1024 * 1024 ? 5 : row.bytes <= 1024 ? 1 : undefined;
    if (goal === undefined) continue;
    const label = goal === 5 ? '≥ 5× faster' : 'never slower (≥ 1×)';
    targets.push({
      figure: `Signature check at ${size} vs standardwebhooks`,
      target: label,
      value: `${row.vsStandardWebhooks.toFixed(1)}×`,
      met: row.vsStandardWebhooks >= goal,
    });
    targets.push({
      figure: `Signature check at ${size} vs svix (both parse the JSON)`,
      target: label,
      value: `${row.vsSvix.toFixed(1)}×`,
      met: row.vsSvix >= goal,
      ...(row.vsSvix < goal
        ? {
            why: `svix always JSON.parses the body (${(row.oursWithParseUs - row.oursUs).toFixed(0)} µs of the ${row.oursWithParseUs.toFixed(0)} µs on our side); the signature work alone is ${((row.svixUs - (row.oursWithParseUs - row.oursUs)) / row.oursUs).toFixed(1)}× faster`,
          }
        : {}),
    });
  }
  for (const row of results.coldStart.rows) {
    // Like for like: the naive handler loads the SDK clients this bundle loads at start, no more.
    const ratio = row.bundleLoadMs / row.naiveAtStartLoadMs;
    targets.push({
      figure: `Cold start: ${row.handler} module load vs naive, like for like`,
      target: '≤ 0.5×',
      value: `${ratio.toFixed(2)}× (${row.bundleLoadMs.toFixed(0)} vs ${row.naiveAtStartLoadMs.toFixed(0)} ms; ${row.ratio.toFixed(2)}× against every client it can use)`,
      met: ratio <= 0.5,
      ...(ratio > 0.5
        ? {
            why: `load time follows size, and the bundle (tree-shaken from the SDK's ES module builds) is mostly the SDK itself: ${row.composition
              .slice(0, 3)
              .map((part) => `${part.name} ${part.kb.toFixed(0)} KB`)
              .join(', ')}`,
          }
        : {}),
    });
  }
  const [oneMillion] = results.bill.volumes;
  targets.push({
    figure: `All-in cost, defaults, ${sizeName(results.meta.options.bodyBytes)} bodies, ${oneMillion.deliveriesPerMonth.toLocaleString('en-US')} deliveries a month`,
    target: '≤ $10 per million',
    value: `$${oneMillion.usdPerMillion.toFixed(2)} (${results.bill.volumes
      .slice(1)
      .map((volume) => `$${volume.usdPerMillion.toFixed(2)} at ${volume.deliveriesPerMonth / 1e6} M`)
      .join(', ')})`,
    met: oneMillion.usdPerMillion <= 10,
    ...(oneMillion.usdPerMillion > 10 ? { why: allInWhy(oneMillion) } : {}),
  });
  for (const size of results.costBySize) {
    const goal = size.bytes >= 16 * 1024 ? 0.6 : 0.8;
    targets.push({
      figure: `Cost per million deliveries vs the Powertools receiver, ${sizeName(size.bytes)} bodies`,
      target: `≤ ${goal}×`,
      value: `${size.ratio.toFixed(2)}× ($${size.ours.usdPerMillion.toFixed(2)} vs $${size.powertools.usdPerMillion.toFixed(2)})`,
      met: size.ratio <= goal,
      ...(size.ratio > goal ? { why: costWhy(size, size.powertools, goal, results.meta.options.unitTraceDeliveries) } : {}),
    });
    targets.push({
      figure: `Cost per million deliveries vs the lean conditional-write receiver, ${sizeName(size.bytes)} bodies`,
      target: '≤ 1.1×',
      value: `${size.leanRatio.toFixed(2)}× ($${size.ours.usdPerMillion.toFixed(2)} vs $${size.lean.usdPerMillion.toFixed(2)})`,
      met: size.leanRatio <= 1.1,
      ...(size.leanRatio > 1.1 ? { why: costWhy(size, size.lean, 1.1, results.meta.options.unitTraceDeliveries) } : {}),
    });
  }
  const ours = results.requests.ours.stages;
  const theirs = results.requests.powertools.stages;
  const bodyItems = results.requests.ours.operations.find((entry) => entry.stage === Stage.EDGE && entry.purpose === 'body item')?.perDelivery ?? 0;
  targets.push({
    figure: 'AWS requests at the edge per accepted delivery',
    target: 'exactly 2',
    value: fmt(ours.edge),
    met: ours.edge === 2,
    ...(ours.edge !== 2 && bodyItems > 0
      ? {
          why: `2 for every delivery whose row holds its body; ${(bodyItems * 100).toFixed(2)}% of these bodies deflated to more than a one-unit row holds, and were written in an item of their own first, so that the row's three writes stay one unit each (docs/DESIGN.md#item-layout)`,
        }
      : {}),
  });
  targets.push({
    figure: 'AWS requests per accepted delivery, whole pipeline',
    target: '≤ 5',
    value: fmt(ours.total),
    met: ours.total <= 5,
    ...(ours.total > 5 ? { why: overFive(results.requests.ours) } : {}),
  });
  for (const [stage, label] of [
    ['edge', 'edge'],
    ['eventSource', 'event source (receive, delete)'],
    ['processor', 'processor'],
    ['reconciler', 'reconciler (amortized)'],
    ['sweep', 'sweep reads of each delivery'],
    ['secrets', 'secret reads (amortized)'],
    ['total', 'whole pipeline'],
  ] as const) {
    const met = ours[stage] < theirs[stage];
    targets.push({
      figure: `Requests vs the Powertools receiver: ${label}`,
      target: 'fewer',
      value: `${fmt(ours[stage])} vs ${fmt(theirs[stage])}`,
      met,
      ...(met ? {} : { why: stageWhy(stage) }),
    });
  }
  for (const scale of results.scaling) {
    targets.push({
      figure: `Twin throughput vs bare emulator calls, ${scale.deliveries} deliveries`,
      target: '≥ 50%',
      value: `${(scale.throughput.ratio * 100).toFixed(0)}% (${scale.throughput.twin.perSecond.toFixed(0)} vs ${scale.throughput.bare.perSecond.toFixed(0)}/s)`,
      met: scale.throughput.ratio >= 0.5,
    });
  }
  return targets;
}

/** The two round trips of the verifier's floor in a region (DynamoDB and SQS answer in single-digit milliseconds each), for the projection only. */
const REGIONAL_FLOOR_MS = 10;

function latencyWhy(latency: LatencyResult): string {
  const added = latency.verifier.p50 - latency.floor.p50;
  return (
    `the floor is ${latency.floor.p50.toFixed(2)} ms against emulators on loopback, on the same 2 cores; ours adds ${added.toFixed(2)} ms at the median ` +
    `(its own work and the SDK's between the round trips), which against ${REGIONAL_FLOOR_MS} ms of regional round trips would be ${((REGIONAL_FLOOR_MS + added) / REGIONAL_FLOOR_MS).toFixed(2)}×`
  );
}

/**
 * What ours pays per million deliveries that the comparison has no counterpart for, from the run's
 * unit trace and cost lines: each index entry the insert writes (one write unit each, keys only),
 * the delivery record in the logs, and the sweep's reads.
 */
function costWhy(size: SizeCost, comparison: CostBreakdown, goal: number, traceDeliveries: number): string {
  const perWru = PRICES.dynamodbWriteRequestUnit.usd * 1e6;
  const entries = (index: string) => size.units.ours.reduce((sum, entry) => sum + (entry.indexes[index] ?? 0), 0) / traceDeliveries;
  const lineCost = (item: string) => size.ours.lines.find((line) => line.item === item)?.usdPerMillion ?? 0;
  const writesOf = (...purposes: string[]) =>
    (size.units.ours.filter((entry) => purposes.includes(entry.purpose)).reduce((sum, entry) => sum + entry.tableWru + entry.indexWru, 0) / traceDeliveries) *
    perWru;
  const extras = [
    { what: 'the pending-index entry by which the sweep finds a stranded row (docs/DESIGN.md#invariant-5)', usd: entries('pending') * perWru },
    {
      what: 'the job-ref entry by which a submission recorded by its key alone finds its delivery (docs/DESIGN.md#invariant-10)',
      usd: entries('jobRef') * perWru,
    },
    { what: 'the delivery record and metrics in the logs (docs/DELIVERY-RECORD.md; the comparison logs nothing)', usd: lineCost('CloudWatch Logs ingestion') },
    { what: 'the sweep reading each row once', usd: lineCost('DynamoDB reads') },
    {
      what: "the row's claim and completion, by which one worker at a time processes it and a dead worker's claim is taken over (docs/DESIGN.md#invariant-6)",
      usd: writesOf('claim', 'complete', 'complete batch'),
    },
  ];
  const gap = size.ours.usdPerMillion - goal * comparison.usdPerMillion;
  const withoutEither = (size.ours.usdPerMillion - extras[0].usd - extras[1].usd) / comparison.usdPerMillion;
  return (
    `$${gap.toFixed(2)} above ${goal}×; ours pays for what the comparison lacks: ` +
    extras.map((extra) => `${extra.what} $${extra.usd.toFixed(2)}`).join(', ') +
    `; without both index entries, each of which an invariant rests on, it would be ${withoutEither.toFixed(2)}×`
  );
}

/** The all-in bill's lines by size, and what is fixed, for a target it misses. */
function allInWhy(bill: Bill): string {
  const fixed = bill.lines.filter((entry) => entry.fixed).reduce((sum, entry) => sum + entry.usdPerMillion, 0);
  const largest = [...bill.lines]
    .sort((a, b) => b.usdPerMillion - a.usdPerMillion)
    .slice(0, 5)
    .map((entry) => `${entry.item} $${entry.usdPerMillion.toFixed(2)}`)
    .join(', ');
  return `$${fixed.toFixed(2)} of it is charged by the month whatever the volume (the alarms, the metrics they watch, the dashboard, the secret) and falls with volume; the largest lines: ${largest}`;
}

function overFive(figures: ReceiverFigures): string {
  const per = (stage: string, purpose: string) =>
    figures.operations.filter((entry) => entry.stage === stage && entry.purpose === purpose).reduce((sum, entry) => sum + entry.perDelivery, 0);
  const parts = [
    `edge ${fmt(figures.stages.edge)}`,
    `claim and result offer ${fmt(per(Stage.PROCESSOR, 'claim') + per(Stage.PROCESSOR, 'result offer'))}`,
    `complete ${fmt(per(Stage.PROCESSOR, 'complete') + per(Stage.PROCESSOR, 'complete batch'))} (one BatchWriteItem a batch)`,
    `PutEvents ${fmt(per(Stage.PROCESSOR, 'effects'))}`,
    `receive ${fmt(per(Stage.EVENT_SOURCE, 'receive batch'))} and delete ${fmt(per(Stage.EVENT_SOURCE, 'delete batch'))}`,
    `sweep ${fmt(figures.stages.reconciler)} (${figures.stages.reconcilerPerRun} requests per run, 16 shards of 2 indexes) and ${fmt(figures.stages.sweep)} reading each delivery's entry and row once`,
    `secret reads ${fmt(figures.stages.secrets)}`,
  ];
  return `4 requests are per record (2 at the edge, the claim and the result offer); the rest is batched or scheduled: ${parts.join('; ')}`;
}

function stageWhy(stage: keyof StageRequests): string {
  switch (stage) {
    case 'eventSource':
      return 'both use the same SQS event source with batches of 10: the same receives and deletes';
    case 'sweep':
      return 'the Powertools receiver has no sweep; ours reads each completed row once (one BatchGetItem per 100 entries, and the pending-index pages) instead of an index write per delivery to remove its entry (docs/DESIGN.md#invariant-5)';
    case 'reconciler':
      return 'the Powertools receiver has no sweep (it relies on the provider retrying a 5xx); ours re-enqueues stranded rows (docs/DESIGN.md#invariant-5) with one query per index shard per run';
    case 'secrets':
      return 'ours reads every signing stage (DescribeSecret + GetSecretValue per version) to accept AWSPENDING/AWSPREVIOUS during a rotation; the Powertools receiver reads AWSCURRENT only';
    default:
      return '';
  }
}

const fmt = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(3));

export function sizeName(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}
