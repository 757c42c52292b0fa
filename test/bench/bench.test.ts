/**
 * The bench's counting and cost code on a tiny load. Structural assertions only: counts of
 * requests, the shape of the results, never a time or a rate (the machine is shared; timing is
 * the bench's business, not the tests').
 */
import { spawn } from 'node:child_process';
import { AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResults, ReceiverFigures } from '../../bench/bench';
import { SECTIONS } from '../../bench/bench';
import { CapacityMeter } from '../../bench/capacity';
import { costOf, requestsByStage } from '../../bench/cost';
import { RequestCounter } from '../../bench/counting';
import { BenchEnvironment } from '../../bench/environment';
import { runPipeline } from '../../bench/pipeline';
import { PRICES } from '../../bench/prices';
import { buildLeanReceiver, buildOurReceiver, buildPowertoolsReceiver, Stage } from '../../bench/receivers';
import { signedDeliveryEvent, deliveryBody } from '../../bench/environment';

const ROOT = join(__dirname, '..', '..');

describe('the bench counts requests and prices them', () => {
  let env: BenchEnvironment;

  beforeAll(async () => {
    env = await BenchEnvironment.start(BenchEnvironment.fromEnvironment());
  });

  afterAll(async () => {
    await env.stop();
  });

  it('counts exactly one conditional PutItem and one SendMessage at the edge per accepted delivery, and one PutItem per body kept apart', async () => {
    const counter = new RequestCounter();
    const receiver = await buildOurReceiver(env, { counter });
    const run = await runPipeline(env, receiver, 6, { bodyBytes: 1024, edgeConcurrency: 2 });

    expect(run).toMatchObject({ deliveries: 6, accepted: 6, processed: 6, deadLettered: 0 });
    // A 1 KiB body of prose deflates to about 510–570 bytes; the rare one whose claimed row would
    // then pass 1 KB is kept in an item of its own (`sk` body#<sha256>), written once, before its row.
    const bodyItems = await itemsWithSortKeyPrefix(env, receiver.tables.inbox, 'body#');
    const edge = counter
      .stage(Stage.EDGE)
      .map(({ operation, purpose, attempts }) => ({ operation, purpose, attempts }))
      .sort((a, b) => a.purpose.localeCompare(b.purpose));
    expect(edge).toEqual([
      ...(bodyItems > 0 ? [{ operation: 'PutItem', purpose: 'body item', attempts: bodyItems }] : []),
      { operation: 'PutItem', purpose: 'conditional insert', attempts: 6 },
      { operation: 'SendMessage', purpose: 'enqueue', attempts: 6 },
    ]);
    expect(requestsByStage(counter.all(), run.accepted).edge).toBe(2 + bodyItems / 6);
    // Per record in the processor: claim, result offer; per batch: the effects, and the completion
    // of its rows in one BatchWriteItem (a batch of one row is completed with one UpdateItem).
    const processor = Object.fromEntries(counter.stage(Stage.PROCESSOR).map((entry) => [entry.purpose, entry]));
    expect(processor.claim.attempts).toBe(6);
    expect(processor['result offer'].attempts).toBe(6);
    expect(processor.effects.attempts).toBe(run.batches.length);
    const batched = run.batches.filter((batch) => batch.size > 1);
    expect(processor['complete batch']?.attempts ?? 0).toBe(batched.length);
    expect(processor['complete batch']?.items ?? 0).toBe(batched.reduce((sum, batch) => sum + batch.size, 0));
    expect(processor.complete?.attempts ?? 0).toBe(run.batches.length - batched.length);
    // One run: the flow-control item read (is the inbox paused?), the sweep's watermark read, one
    // query per shard of the pending index, the watermark moved (a first run: from 0 to the
    // cutoff), and beside it one query per shard of the awaiting index; never a scan.
    expect(counter.stage(Stage.RECONCILER).map((entry) => [entry.operation, entry.purpose, entry.attempts])).toEqual(
      expect.arrayContaining([
        ['GetItem', 'flow-control read', 1],
        ['GetItem', 'sweep watermark read', 1],
        ['Query', 'query pending index shard', 16],
        ['UpdateItem', 'sweep watermark advance', 1],
        ['Query', 'query awaiting index shard', 16],
      ]),
    );
    expect(counter.stage(Stage.RECONCILER)).toHaveLength(5);
    // The sweep once the load is older than sweepAfter: every row read once, in one BatchGetItem, none enqueued.
    expect(counter.stage(Stage.SWEEP).map((entry) => [entry.operation, entry.purpose, entry.attempts])).toEqual([
      ['GetItem', 'flow-control read', 1],
      ['GetItem', 'sweep watermark read', 1],
      ['Query', 'query pending index shard', 16],
      ['BatchGetItem', 'sweep status read', 1],
      ['UpdateItem', 'sweep watermark advance', 1],
    ]);
  });

  it('counts four requests at the edge of the Powertools receiver', async () => {
    const counter = new RequestCounter();
    const receiver = await buildPowertoolsReceiver(env, { counter });
    const run = await runPipeline(env, receiver, 4, { bodyBytes: 1024, edgeConcurrency: 1 });

    expect(run).toMatchObject({ accepted: 4, processed: 4, deadLettered: 0 });
    expect(Object.fromEntries(counter.stage(Stage.EDGE).map((entry) => [entry.purpose, entry.attempts]))).toEqual({
      'idempotency record: INPROGRESS': 4,
      'store the delivery': 4,
      enqueue: 4,
      'idempotency record: COMPLETED': 4,
    });
    expect(requestsByStage(counter.all(), run.accepted).edge).toBe(4);
  });

  it('counts two requests at the edge of the lean receiver, and answers a repeat 200 without enqueueing it again', async () => {
    const counter = new RequestCounter();
    const receiver = await buildLeanReceiver(env, { counter });
    const run = await runPipeline(env, receiver, 4, { bodyBytes: 1024, edgeConcurrency: 1 });

    expect(run).toMatchObject({ accepted: 4, processed: 4, deadLettered: 0 });
    expect(Object.fromEntries(counter.stage(Stage.EDGE).map((entry) => [entry.operation, entry.attempts]))).toEqual({ PutItem: 4, SendMessage: 4 });
    const repeat = signedDeliveryEvent(deliveryBody(1024), receiver.signingSecret);
    expect((await receiver.edge(repeat)).statusCode).toBe(202);
    expect(await receiver.edge(repeat)).toMatchObject({ statusCode: 200 });
    expect(counter.stage(Stage.EDGE).find((entry) => entry.operation === 'SendMessage')!.attempts).toBe(5);
    // Per record a result offer; per batch one PutEvents.
    const processor = Object.fromEntries(counter.stage(Stage.PROCESSOR).map((entry) => [entry.operation, entry.attempts]));
    expect(processor).toEqual({ UpdateItem: 4, PutEvents: run.batches.length });
  });

  it('meters write units from item sizes and indexes, as dynalite does for the table, and prices every line', async () => {
    const counter = new RequestCounter();
    const meter = new CapacityMeter(env.dynamodb());
    const receiver = await buildOurReceiver(env, { counter, meter });
    const run = await runPipeline(env, receiver, 3, { bodyBytes: 1024, edgeConcurrency: 1 });

    const units = Object.fromEntries(meter.all().map((entry) => [entry.purpose, entry]));
    // A write costs one unit per started KB of the larger of the item before and after it: the
    // claimed row is the largest the row gets. The insert also writes the sparse pending and
    // job-ref indexes; the completion (the three rows of the one batch in one BatchWriteItem,
    // billed per item) keeps the row's pending-index entry as it was, so it writes no index. The
    // sweep then reads each row once, eventually consistent: half a unit per started 4 KB.
    const unitsOf = (bytes: number) => Math.ceil(bytes / 1024);
    const claimedRow = units.claim.itemBytes / 3;
    expect(units['conditional insert']).toMatchObject({ calls: 3, indexWrites: 6, indexes: { pending: 3, jobRef: 3 } });
    expect(units['conditional insert'].tableWru).toBe(3 * unitsOf(units['conditional insert'].itemBytes / 3));
    expect(units.claim).toMatchObject({ calls: 3, tableWru: 3 * unitsOf(claimedRow), indexWrites: 0 });
    expect(units['complete batch']).toMatchObject({ calls: 1, items: 3, tableWru: 3 * unitsOf(claimedRow), indexWrites: 0, indexes: {} });
    expect(units['sweep status read']).toMatchObject({ calls: 1, items: 3, rru: 3 * 0.5 });
    // Priced per row read: 3 rows at half a unit each, over 3 deliveries (and the sweep's own queries).
    const sweepReads = counter.stage(Stage.SWEEP).find((entry) => entry.operation === 'BatchGetItem')!;
    expect(sweepReads.items).toBe(3);
    for (const entry of meter.all().filter((unit) => !['Query', 'GetItem', 'BatchGetItem'].includes(unit.operation))) {
      expect(entry.dynaliteUnits).toBe(entry.tableWru);
    }

    const cost = costOf({ run, counts: counter.all(), units: meter.all(), edgeMs: run.edgeMs, requestBytes: 1500 });
    expect(cost.lines.map((entry) => entry.price).every((price) => price in PRICES)).toBe(true);
    for (const entry of cost.lines) expect(Number.isFinite(entry.usdPerMillion) && entry.usdPerMillion >= 0).toBe(true);
    expect(cost.usdPerMillion).toBeCloseTo(
      cost.lines.reduce((sum, entry) => sum + entry.usdPerMillion, 0),
      9,
    );
    expect(cost.lines.find((entry) => entry.item === 'API Gateway HTTP API')?.perDelivery).toBe(1);
  });
});

describe('npm run bench -- --quick', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a results file with every section, counted as the targets say', async () => {
    const out = join(dir, 'results.json');
    const { code, stdout, stderr } = await run(process.execPath, [
      require.resolve('ts-node/dist/bin.js'),
      '--transpile-only',
      '-P',
      'tsconfig.dev.json',
      'bench/run.ts',
      '--quick',
      '--out',
      out,
    ]);
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });

    const results = JSON.parse(readFileSync(out, 'utf8')) as BenchResults;
    for (const section of [...SECTIONS, 'meta', 'units', 'targets']) expect(results).toHaveProperty(section);
    expect(results.scaling.map((scale) => scale.deliveries)).toEqual([8, 32]);
    for (const scale of results.scaling) {
      // What each receiver asks of AWS is exact; the stage figures bill every attempt, so an SDK retry on a loaded machine adds to them.
      // One insert and one enqueue per delivery, and a PutItem for each of the rare bodies kept apart (see above).
      const ourEdge = scale.ours.operations.filter((operation) => operation.stage === 'edge');
      expect(ourEdge.every((operation) => ['body item', 'conditional insert', 'enqueue'].includes(operation.purpose))).toBe(true);
      expect({ inserts: madeAt(scale.ours, 'edge', 'conditional insert').requests, enqueues: madeAt(scale.ours, 'edge', 'enqueue').requests }).toEqual({
        inserts: scale.deliveries,
        enqueues: scale.deliveries,
      });
      expect(madeAt(scale.ours, 'edge', 'body item').requests).toBeLessThan(scale.deliveries / 4);
      expect(scale.ours.stages.edge * scale.deliveries).toBeCloseTo(madeAt(scale.ours, 'edge').attempts, 9);
      expect(madeAt(scale.powertools, 'edge').requests).toBe(4 * scale.deliveries);
      expect(scale.powertools.stages.edge * scale.deliveries).toBeCloseTo(madeAt(scale.powertools, 'edge').attempts, 9);
      expect(scale.ours.run).toMatchObject({ accepted: scale.deliveries, processed: scale.deliveries, deadLettered: 0 });
      expect(scale.throughput.twin.accepted).toBe(scale.deliveries);
      // One query per shard of the two indexes, the flow-control item read, and the sweep's watermark read and moved to the cutoff.
      expect(madeAt(scale.ours, 'reconciler').requests).toBe(35);
      expect(scale.ours.stages.reconcilerPerRun).toBe(madeAt(scale.ours, 'reconciler').attempts);
      // The sweep's examination of the load: the flow-control item and its watermark read, a page per shard, one BatchGetItem per 100 rows, the watermark moved.
      expect(madeAt(scale.ours, 'sweep').requests).toBe(3 + 16 + Math.ceil(scale.deliveries / 100));
      expect(scale.ours.stages.sweep * scale.deliveries).toBeCloseTo(madeAt(scale.ours, 'sweep').attempts, 9);
    }
    expect(results.signature.rows.map((row) => row.bytes)).toEqual([1024, 64 * 1024, 1024 * 1024]);
    expect(results.coldStart.rows.map((row) => row.handler)).toEqual(['verifier', 'processor', 'reconciler', 'rotator']);
    // Each bundle also measured with its source map (about 1 MB each), a first stack read where the handler throws on no event.
    for (const row of results.coldStart.rows) expect(row.sourceMapKb).toBeGreaterThan(row.bundleKb);
    // The naive handler loads every client a function can use; the S3 client is one the verifier loads only on first use.
    const verifier = results.coldStart.rows.find((row) => row.handler === 'verifier')!;
    expect(verifier.clients).toEqual(['client-dynamodb', 'client-s3', 'client-secrets-manager', 'client-sqs']);
    expect(verifier.clientsAtStart).toEqual(['client-dynamodb', 'client-secrets-manager', 'client-sqs']);
    expect(verifier.laterKb).toBeGreaterThan(0);
    expect(results.coldStart.rows.filter((row) => Number.isFinite(row.sourceMapsFirstStackMs)).map((row) => row.handler)).toEqual([
      'verifier',
      'processor',
      'rotator',
    ]);
    expect(stdout).toContain('load ms with maps');
    expect(results.units.dynaliteAgrees).toBe(true);
    // The cost at 1 KiB and at 16 KiB, each against the Powertools receiver, each a target row.
    expect(results.costBySize.map((size) => size.bytes)).toEqual([1024, 16 * 1024]);
    for (const size of results.costBySize) expect(size.units.ours.some((entry) => entry.purpose === 'conditional insert')).toBe(true);
    expect(results.targets.filter((target) => target.figure.startsWith('Cost per million deliveries')).map((target) => target.figure)).toEqual([
      'Cost per million deliveries vs the Powertools receiver, 1 KiB bodies',
      'Cost per million deliveries vs the lean conditional-write receiver, 1 KiB bodies',
      'Cost per million deliveries vs the Powertools receiver, 16 KiB bodies',
      'Cost per million deliveries vs the lean conditional-write receiver, 16 KiB bodies',
    ]);
    // The all-in bill at 1, 10 and 100 million deliveries a month (30-day months), every line of it.
    const { bill } = results;
    expect(bill.volumes.map((volume) => volume.deliveriesPerMonth)).toEqual([1e6, 1e7, 1e8]);
    for (const volume of bill.volumes) {
      expect(volume.lines.map((entry) => entry.item)).toEqual(
        expect.arrayContaining([
          'X-Ray traces',
          'Lambda platform log lines (START, END, REPORT)',
          'API access log',
          'DynamoDB storage',
          'DynamoDB point-in-time recovery',
          'Custom metrics',
          'Alarms',
          'Composite alarm',
          'Dashboard',
          'Signing secret',
        ]),
      );
      expect(volume.usdPerMillion).toBeCloseTo((volume.lines.reduce((sum, entry) => sum + entry.usdPerMonth, 0) / volume.deliveriesPerMonth) * 1e6, 9);
      // A 5-second batching window gathers what arrives in it, after the message that opened it, up to 10.
      expect(volume.batch).toBeCloseTo(Math.min(10, 1 + (volume.deliveriesPerMonth / (30 * 86_400)) * 5), 9);
    }
    // Untraced by default: no trace is billed.
    expect(bill.volumes[0].lines.find((entry) => entry.item === 'X-Ray traces')!.usdPerMonth).toBe(0);
    // Metrics per inbox by default: none carries the Provider dimension, and each alarm's metric the handlers emit is among them.
    expect(bill.customMetrics.length).toBeGreaterThan(0);
    expect(bill.customMetrics.filter((metric) => metric.includes('Provider='))).toEqual([]);
    expect(bill.customMetrics).toEqual(expect.arrayContaining(['WebhookInbox/QueueDelay{Inbox=bench-inbox}', 'WebhookInbox/SweepLag{Inbox=bench-inbox}']));
    expect(stdout).toContain("**What a team pays, all in, with the construct's defaults**");
    // The archive: fewer objects than deliveries (one per batch), each delivery's line stored, priced.
    expect(results.archive.objects).toBeGreaterThan(0);
    expect(results.archive.objects).toBeLessThan(results.archive.deliveries);
    expect(results.archive.putsPerDelivery).toBe(results.archive.objects / results.archive.deliveries);
    expect(results.archive.bytesPerDelivery).toBeGreaterThan(1024);
    expect(stdout).toContain('**What the archive adds per million deliveries**');
    expect(results.targets.length).toBeGreaterThan(10);
    // The Markdown tables docs/PROOF.md carries.
    expect(stdout).toContain('| Figure | Target | Measured | Result |');
    expect(stdout).toContain('**Cost per million deliveries**');
  }, 300_000);
});

/** How many items of `table` have a sort key beginning with `prefix`, read with a scan of every page. */
async function itemsWithSortKeyPrefix(env: BenchEnvironment, table: string, prefix: string): Promise<number> {
  let count = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await env.dynamodb().send(
      new ScanCommand({
        TableName: table,
        ExclusiveStartKey: start,
        FilterExpression: 'begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':prefix': { S: prefix } },
        Select: 'COUNT',
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/**
 * What a receiver asked of AWS at `stage` over its run (for `purpose` only, when given): its requests, each once however often the SDK
 * retried it, and the HTTP attempts they took (what AWS bills).
 */
function madeAt(figures: ReceiverFigures, stage: string, purpose?: string): { requests: number; attempts: number } {
  const operations = figures.operations.filter((operation) => operation.stage === stage && (purpose === undefined || operation.purpose === purpose));
  return {
    requests: operations.reduce((sum, operation) => sum + operation.calls, 0),
    attempts: operations.reduce((sum, operation) => sum + operation.attempts, 0),
  };
}

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, NODE_NO_WARNINGS: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr: stderr.slice(-4000) }));
  });
}
