/**
 * Cost per million deliveries, from what the bench counted and measured: the requests each
 * stage sent (bench/counting.ts), the DynamoDB request units of each request (bench/capacity.ts,
 * from the items' sizes and the tables' indexes), the handlers' measured durations and the memory
 * the construct configures, priced with bench/prices.ts.
 *
 * Work that runs on a schedule rather than per delivery (the reconciler's sweep every 5 minutes,
 * a signing-secret read per cache TTL per warm environment) is amortized at a stated volume:
 * MONTHLY_DELIVERIES per 30-day month. Fixed monthly charges (the secret itself, $0.40/month) are
 * left out.
 */
import { API_GATEWAY_INCREMENT_BYTES, BILLING_CHUNK_BYTES, PRICES, PriceName } from './prices';
import type { MeteredUnits } from './capacity';
import type { OperationCount } from './counting';
import type { PipelineRun } from './pipeline';
import { Stage } from './receivers';
import { Defaults } from '../lib/contract';

/** The volume at which scheduled work is amortized. */
export const MONTHLY_DELIVERIES = 1_000_000;
const SECONDS_PER_MONTH = 30 * 86_400;
/** Reconciler runs per month at the construct's schedule. */
export const RECONCILER_RUNS_PER_MONTH = SECONDS_PER_MONTH / (Defaults.SWEEP_EVERY_MINUTES * 60);
/** Secret reads per month by one warm environment with the construct's cache TTL. */
export const SECRET_READS_PER_MONTH_PER_ENVIRONMENT = SECONDS_PER_MONTH / Defaults.SECRET_CACHE_SECONDS;
/**
 * Warm environments that read the signing secret at that volume: 1 M deliveries a month is about
 * 0.4 a second, which one verifier environment serves; each further concurrent environment reads
 * the secret on its own.
 */
export const SECRET_READING_ENVIRONMENTS = 1;

/** Memory of each function, as `Defaults` in lib/contract/defaults.ts sets it (ours); the comparison receiver gets the same. */
export const MEMORY_MB = { edge: Defaults.VERIFIER_MEMORY_MB, processor: Defaults.PROCESSOR_MEMORY_MB, reconciler: Defaults.RECONCILER_MEMORY_MB } as const;

export interface CostLine {
  readonly item: string;
  /** How many billed units one delivery uses. */
  readonly perDelivery: number;
  readonly unit: string;
  readonly price: PriceName;
  /** The price as a reader expects it written. */
  readonly priceText: string;
  /** US dollars per million deliveries. */
  readonly usdPerMillion: number;
  readonly note?: string;
}

export interface CostBreakdown {
  readonly receiver: string;
  readonly lines: CostLine[];
  readonly usdPerMillion: number;
}

/** Everything the cost of one receiver is computed from. */
export interface CostInputs {
  readonly run: PipelineRun;
  /** The run's counted requests, every stage (the reconciler's from one run after the load). */
  readonly counts: readonly OperationCount[];
  /** DynamoDB units per request, by stage and purpose, from the unit trace. */
  readonly units: readonly MeteredUnits[];
  /** Milliseconds of each edge invocation to bill (one delivery at a time). */
  readonly edgeMs: readonly number[];
  /** Bytes of the HTTP request a provider sends (body and headers). */
  readonly requestBytes: number;
  /**
   * Messages per processor batch to price at, when not the run's own: the event source's
   * receives and deletes and the processor's invocations are per batch, its duration follows
   * `batchMs`, every other request and unit is per delivery.
   */
  readonly batch?: number;
}

/**
 * A processor batch's milliseconds by its size, fitted to the run's batches (a fixed part and a
 * part per message, least squares); proportional to the size when the run's batches were all alike.
 */
export function batchMs(batches: PipelineRun['batches']): (size: number) => number {
  const n = batches.length;
  const mx = batches.reduce((sum, batch) => sum + batch.size, 0) / n;
  const my = batches.reduce((sum, batch) => sum + batch.ms, 0) / n;
  const sxx = batches.reduce((sum, batch) => sum + (batch.size - mx) ** 2, 0);
  if (sxx === 0) return (size) => (my / mx) * size;
  const slope = batches.reduce((sum, batch) => sum + (batch.size - mx) * (batch.ms - my), 0) / sxx;
  const fixed = Math.max(0, my - slope * mx);
  return (size) => fixed + Math.max(0, slope) * size;
}

/** `unit` is singular; prices of small units read per million of them. */
export const line = (item: string, perDelivery: number, unit: string, price: PriceName, note?: string): CostLine => {
  const usd = PRICES[price].usd;
  const [head, tail] = unit.split(' (');
  const plural = `${head}s${tail ? ` (${tail.replace(/\)$/, 's)')}` : ''}`;
  const perMillion = String(Number((usd * 1e6).toPrecision(4)))
    .replace(/^(\d+)$/, '$1.00')
    .replace(/^(\d+\.\d)$/, '$10');
  const priceText = usd >= 0.01 || /GB/.test(unit) ? `$${usd} per ${unit}` : `$${perMillion} per million ${plural}`;
  return { item, perDelivery, unit, price, priceText, usdPerMillion: perDelivery * usd * 1e6, ...(note ? { note } : {}) };
};

/** Lambda bills duration per invocation, rounded up to the millisecond. */
export const billedSeconds = (ms: number): number => Math.ceil(ms) / 1000;

/** Units per item of each metered purpose: per call, but per item of a batch write. */
export function unitsPerCall(units: readonly MeteredUnits[]): Map<string, { wru: number; rru: number; indexWrites: number }> {
  return new Map(
    units.map((entry) => [
      `${entry.stage}|${entry.operation}|${entry.purpose}`,
      { wru: (entry.tableWru + entry.indexWru) / entry.items, rru: entry.rru / entry.items, indexWrites: entry.indexWrites / entry.items },
    ]),
  );
}

const READS = ['GetItem', 'BatchGetItem', 'Query', 'Scan'];

/**
 * Per-delivery request units of the counted DynamoDB requests of the given stages. A request whose
 * purpose the unit trace never saw (a form a few bodies of the load take, such as a body too
 * large for a one-unit row, kept in an item of its own) is priced as the costliest traced request
 * of its stage (of any, if its stage has none) that reads, or writes, as it does: an upper bound,
 * named in `estimated`.
 */
export function dynamodbUnits(
  counts: readonly OperationCount[],
  units: readonly MeteredUnits[],
  stages: readonly string[],
  perRequestOf: (entry: OperationCount) => number,
): { wru: number; rru: number; missing: string[]; estimated: string[] } {
  const table = unitsPerCall(units);
  let wru = 0;
  let rru = 0;
  const missing: string[] = [];
  const estimated: string[] = [];
  for (const entry of counts) {
    if (entry.service !== 'DynamoDB' || !stages.includes(entry.stage)) continue;
    let per = table.get(`${entry.stage}|${entry.operation}|${entry.purpose}`);
    if (!per) {
      const reads = READS.includes(entry.operation);
      const costliest = (sameStage: boolean) =>
        units
          .filter((traced) => (!sameStage || traced.stage === entry.stage) && READS.includes(traced.operation) === reads)
          .map((traced) => table.get(`${traced.stage}|${traced.operation}|${traced.purpose}`)!)
          .sort((a, b) => b.wru + b.rru - (a.wru + a.rru))[0];
      per = costliest(true) ?? costliest(false);
      if (!per) {
        missing.push(`${entry.stage} ${entry.operation} (${entry.purpose})`);
        continue;
      }
      estimated.push(`${entry.stage} ${entry.operation} (${entry.purpose}) ×${perRequestOf(entry).toFixed(4)}`);
    }
    // A batch write or read is billed per item, whatever the batch's size was in the trace.
    const billed = entry.items === undefined ? perRequestOf(entry) : (perRequestOf(entry) * entry.items) / entry.attempts;
    wru += billed * per.wru;
    rru += billed * per.rru;
  }
  return { wru, rru, missing, estimated };
}

export function costOf(inputs: CostInputs): CostBreakdown {
  const { run, counts } = inputs;
  const n = run.accepted;
  const perDelivery = (entry: OperationCount) => entry.attempts / n;
  // The reconciler's counts are of one run; it runs RECONCILER_RUNS_PER_MONTH times a month.
  const reconcilerShare = RECONCILER_RUNS_PER_MONTH / MONTHLY_DELIVERIES;
  const perRun = (entry: OperationCount) => entry.attempts * reconcilerShare;
  const of = (stage: string) => counts.filter((entry) => entry.stage === stage);
  const hasReconciler = run.reconcilerMs !== undefined;

  const lines: CostLine[] = [];
  lines.push(line('API Gateway HTTP API', Math.ceil(inputs.requestBytes / API_GATEWAY_INCREMENT_BYTES), 'request', 'apiGatewayHttpRequest'));

  const runBatch = n / run.batches.length;
  const batch = inputs.batch ?? runBatch;
  const batchesPerDelivery = 1 / batch;
  const invocations = 1 + batchesPerDelivery + (hasReconciler ? reconcilerShare : 0);
  lines.push(
    line(
      'Lambda invocations',
      invocations,
      'invocation',
      'lambdaRequest',
      `edge 1, processor ${batchesPerDelivery.toFixed(3)} (batches of ${batch.toFixed(1)})${hasReconciler ? `, reconciler ${reconcilerShare.toFixed(4)}` : ''}`,
    ),
  );

  const edgeGbs = (inputs.edgeMs.reduce((sum, ms) => sum + billedSeconds(ms), 0) / inputs.edgeMs.length) * (MEMORY_MB.edge / 1024);
  // The sweep's examination of the load: once per delivery, on the reconciler's memory.
  const sweepGbs = run.sweepMs !== undefined ? (billedSeconds(run.sweepMs) * (MEMORY_MB.reconciler / 1024)) / n : 0;
  const processorGbs =
    (inputs.batch === undefined ? run.batches.reduce((sum, each) => sum + billedSeconds(each.ms), 0) / n : billedSeconds(batchMs(run.batches)(batch)) / batch) *
    (MEMORY_MB.processor / 1024);
  const reconcilerGbs = hasReconciler ? billedSeconds(run.reconcilerMs!) * (MEMORY_MB.reconciler / 1024) * reconcilerShare : 0;
  lines.push(
    line(
      'Lambda duration (Arm)',
      edgeGbs + processorGbs + reconcilerGbs + sweepGbs,
      'GB-second',
      'lambdaArmGbSecond',
      `edge ${(edgeGbs * 1000).toFixed(3)}, processor ${(processorGbs * 1000).toFixed(3)}, reconciler ${(reconcilerGbs * 1000).toFixed(4)}, sweep ${(sweepGbs * 1000).toFixed(4)} GB-ms`,
    ),
  );

  const perDeliveryStages = [Stage.EDGE, Stage.PROCESSOR, Stage.EVENT_SOURCE];
  const delivered = dynamodbUnits(counts, inputs.units, perDeliveryStages, perDelivery);
  const examined = dynamodbUnits(counts, inputs.units, [Stage.SWEEP], perDelivery);
  const scheduled = dynamodbUnits(counts, inputs.units, [Stage.RECONCILER], perRun);
  const swept = { wru: examined.wru + scheduled.wru, rru: examined.rru + scheduled.rru };
  const missing = [...delivered.missing, ...examined.missing, ...scheduled.missing];
  if (missing.length > 0) throw new Error(`no unit trace for ${missing.join(', ')}`);
  const estimated = [...delivered.estimated, ...examined.estimated, ...scheduled.estimated];
  const bound = estimated.length > 0 ? `; not in the unit trace, priced as their stage's costliest request: ${estimated.join(', ')}` : '';
  lines.push(
    line('DynamoDB writes', delivered.wru + swept.wru, 'write request unit', 'dynamodbWriteRequestUnit', `table and index writes, from item sizes${bound}`),
  );
  lines.push(
    line(
      'DynamoDB reads',
      delivered.rru + swept.rru,
      'read request unit',
      'dynamodbReadRequestUnit',
      hasReconciler
        ? `sweep ${swept.rru.toFixed(4)} (each entry and row read once: ${examined.rru.toFixed(4)}; the runs' own queries: ${scheduled.rru.toFixed(4)})`
        : undefined,
    ),
  );

  // SQS bills each 64 KB chunk of a request's payload as one request.
  const sqs = counts.filter((entry) => entry.service === 'SQS' && entry.stage !== Stage.RECONCILER);
  const chunks = (entry: OperationCount) =>
    entry.operation === 'SendMessage'
      ? Math.max(1, Math.ceil(run.messageBytes / BILLING_CHUNK_BYTES))
      : entry.operation === 'ReceiveMessage'
        ? Math.max(1, Math.ceil((batch * run.messageBytes) / BILLING_CHUNK_BYTES))
        : 1;
  // The event source receives and deletes once a batch: at another batch size, that many times as often.
  const perBatch = (entry: OperationCount) => (entry.stage === Stage.EVENT_SOURCE ? runBatch / batch : 1);
  const sqsRequests =
    sqs.reduce((sum, entry) => sum + perDelivery(entry) * perBatch(entry) * chunks(entry), 0) +
    of(Stage.RECONCILER)
      .filter((entry) => entry.service === 'SQS')
      .reduce((sum, entry) => sum + perRun(entry), 0);
  lines.push(
    line(
      'SQS requests',
      sqsRequests,
      'request (64 KB chunk)',
      'sqsRequest',
      `message ${run.messageBytes} B; a receive and a delete per batch of ${batch.toFixed(1)}`,
    ),
  );

  const events = run.processed / n;
  lines.push(
    line(
      'EventBridge events',
      events * Math.max(1, Math.ceil(run.effectBytes / BILLING_CHUNK_BYTES)),
      'event (64 KB chunk)',
      'eventBridgeEvent',
      `entry ${run.effectBytes} B; billed per event, not per PutEvents call`,
    ),
  );

  const secretCallsPerRead = of(Stage.SECRETS).reduce((sum, entry) => sum + entry.attempts, 0);
  const secretCalls = (secretCallsPerRead * SECRET_READS_PER_MONTH_PER_ENVIRONMENT * SECRET_READING_ENVIRONMENTS) / MONTHLY_DELIVERIES;
  lines.push(
    line(
      'Secrets Manager API calls',
      secretCalls,
      'API call',
      'secretsManagerApiCall',
      `calls per read: ${secretCallsPerRead}; one read per ${Defaults.SECRET_CACHE_SECONDS} s per warm environment`,
    ),
  );

  lines.push(line('S3 requests', 0, 'request', 's3Put', `bodies up to ${Defaults.INLINE_BODY_BYTES / 1024} KiB stay in the row`));

  const logBytes = (run.logBytes.edge + run.logBytes.processor) / n + (hasReconciler ? run.logBytes.reconciler * reconcilerShare : 0);
  lines.push(
    line(
      'CloudWatch Logs ingestion',
      logBytes / 1024 ** 3,
      'GB',
      'cloudWatchLogsIngestedGb',
      `${logBytes.toFixed(0)} B of log lines and EMF metrics per delivery`,
    ),
  );

  return { receiver: run.receiver, lines, usdPerMillion: lines.reduce((sum, entry) => sum + entry.usdPerMillion, 0) };
}

/** Requests per accepted delivery, by stage: per-delivery stages pro rata, scheduled ones amortized. */
export interface StageRequests {
  readonly edge: number;
  readonly eventSource: number;
  readonly processor: number;
  /** The reconciler's requests per run, and per delivery at MONTHLY_DELIVERIES. */
  readonly reconcilerPerRun: number;
  readonly reconciler: number;
  /** The sweep's examination of each delivery's entry and row once it is older than sweepAfter (`Stage.SWEEP`). */
  readonly sweep: number;
  readonly secrets: number;
  readonly total: number;
}

export function requestsByStage(counts: readonly OperationCount[], accepted: number): StageRequests {
  const sum = (stage: string) => counts.filter((entry) => entry.stage === stage).reduce((total, entry) => total + entry.attempts, 0);
  const edge = sum(Stage.EDGE) / accepted;
  const eventSource = sum(Stage.EVENT_SOURCE) / accepted;
  const processor = sum(Stage.PROCESSOR) / accepted;
  const reconcilerPerRun = sum(Stage.RECONCILER);
  const reconciler = (reconcilerPerRun * RECONCILER_RUNS_PER_MONTH) / MONTHLY_DELIVERIES;
  const sweep = sum(Stage.SWEEP) / accepted;
  const secrets = (sum(Stage.SECRETS) * SECRET_READS_PER_MONTH_PER_ENVIRONMENT * SECRET_READING_ENVIRONMENTS) / MONTHLY_DELIVERIES;
  return { edge, eventSource, processor, reconcilerPerRun, reconciler, sweep, secrets, total: edge + eventSource + processor + reconciler + sweep + secrets };
}
