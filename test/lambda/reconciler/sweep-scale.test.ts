/**
 * The sweep's work as its backlog grows, counted in AWS calls, not timed: this machine cannot hold
 * an inbox's real load, so the algorithm is run with its bound scaled down a hundredfold (pages of
 * 10 entries a shard instead of 1,000) against loads scaled down alike, through the emulators and
 * the fault proxy that counts every request the reconciler's clients make.
 *
 * What AWS would see at full size is the same count a hundred times larger: a run that drains
 * 600 stranded rows among 6,000 entries here is one that drains 60,000 among 600,000 there
 * (docs/DESIGN.md#invariant-5 gives the figures and the time it takes).
 */
import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { Defaults, DeliveryStatus, PendingIndex } from '../../../lib/contract';
import { deliveryItems } from '../../../lambda/shared/stores/inbox';
import { InboxHarness, SecretsFixture, sha256Hex } from '../../support/inbox-fixture';

const SWEEP_AFTER_MS = Defaults.SWEEP_AFTER_SECONDS * 1000;
/** The step's bound, a hundredth of the real one. */
const SCALED_STEP = { pageEntries: Defaults.SWEEP_PAGE_ENTRIES / 100, pagesPerShard: Defaults.SWEEP_PAGES_PER_STEP };
/** One row in ten of the backlog is stranded (its enqueue failed); the rest were processed and keep their entries. */
const STRANDED_SHARE = 10;

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'sweep-scale');
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

/**
 * `entries` delivery rows in the pending index, one a second, every tenth stranded (RECEIVED,
 * no message) and the others PROCESSED, written as the verifier writes them (then marked processed
 * as the processor leaves them: status changed, entry kept). Their keys, stranded ones first.
 */
async function backlog(entries: number): Promise<{ stranded: string[]; processed: string[] }> {
  const start = h.clock.now() - entries * 1_000;
  const items = Array.from({ length: entries }, (_, i) => {
    const body = Buffer.from(`{"task":{"id":"tsk_scale_${i}"}}`);
    const { row: item } = deliveryItems(
      {
        provider: 'answerline',
        eventId: `tsk_scale_${i}`,
        body,
        digest: sha256Hex(body),
        receivedAt: start + i * 1_000,
        meta: {},
        expiresAt: Math.floor(start / 1000) + 86_400,
      },
      PendingIndex.SHARD_COUNT,
    );
    return i % STRANDED_SHARE === 0 ? item : { ...item, status: { S: DeliveryStatus.PROCESSED } };
  });
  const chunks = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25));
  for (let i = 0; i < chunks.length; i += 8) {
    await Promise.all(
      chunks
        .slice(i, i + 8)
        .map((chunk) =>
          h.dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [h.names.inboxTable]: chunk.map((Item) => ({ PutRequest: { Item } })) } })),
        ),
    );
  }
  const keys = items.map((item) => item.pk.S!);
  return { stranded: keys.filter((_, i) => i % STRANDED_SHARE === 0), processed: keys.filter((_, i) => i % STRANDED_SHARE !== 0) };
}

/**
 * The requests made between two readings of the proxy, by `<service>.<operation>`. Not its calls:
 * an SDK's retry (a connection the emulator dropped on a loaded machine) is the transport's cost,
 * not the sweep's.
 */
function requestsBetween(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([operation, count]) => [operation, count - (before[operation] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
}

interface ScaleFigures {
  readonly entries: number;
  readonly stranded: number;
  readonly runs: number;
  readonly steps: number;
  readonly calls: Record<string, number>;
  readonly callsPerEntry: number;
}

/** A backlog of `entries`, swept until the reconciler reports no lag: its runs, steps and calls. */
async function sweepBacklog(entries: number): Promise<ScaleFigures> {
  const { stranded } = await backlog(entries);
  h.clock.advance(SWEEP_AFTER_MS);
  const faults = await h.faults();
  // The sweep alone: the ledger's own queries would blur what the sweep costs.
  const reconcile = h.reconciler({ sweepStep: SCALED_STEP, ledger: undefined });
  const before = { ...faults.requests };
  let runs = 0;
  let swept = 0;
  for (let lag = Infinity; lag > 0 && runs < 10; runs++) {
    const report = await reconcile();
    swept += report.swept;
    lag = report.sweepLagSeconds!;
  }
  const calls = requestsBetween(before, faults.requests);
  const sent = await h.takeMessages();
  // Every stranded row once, nothing else.
  expect(swept).toBe(stranded.length);
  expect(sent.sort()).toEqual([...stranded].sort());
  const steps = h.capture.logs('sweep').reduce((sum, line) => sum + Number(line.steps), 0);
  h.capture.clear();
  return { entries, stranded: stranded.length, runs, steps, calls, callsPerEntry: Object.values(calls).reduce((a, b) => a + b, 0) / entries };
}

test('as the backlog grows 1×, 10×, 100×, one run drains it, and the calls per entry and per stranded row do not grow', async () => {
  const figures: ScaleFigures[] = [];
  for (const scale of [1, 10, 100]) {
    figures.push(await sweepBacklog(60 * scale));
    // Each scale in an inbox of its own: nothing left from the one before.
    h.destroy();
    h = await InboxHarness.create(secrets, 'sweep-scale');
  }
  if (process.env.SWEEP_SCALE_FIGURES) console.log(JSON.stringify(figures, null, 1));
  for (const scale of figures) {
    // The whole backlog in one run: no count of rows or pages per run holds it back.
    expect(scale.runs).toBe(1);
    // One clock restart per stranded row (and a watermark write per step), and a SendMessageBatch per ten (a step's last one may be short).
    expect(scale.calls['dynamodb.UpdateItem']).toBeGreaterThanOrEqual(scale.stranded);
    expect(scale.calls['dynamodb.UpdateItem']).toBeLessThanOrEqual(scale.stranded + scale.steps);
    expect(scale.calls['sqs.SendMessageBatch']).toBeLessThanOrEqual(Math.ceil(scale.stranded / 10) + scale.steps);
    // A read of the watermark and a page of each shard per step, and one BatchGetItem per 100 of the entries a step read;
    // and one read of the flow-control item (paused, the breaker) per run.
    expect(scale.calls['dynamodb.GetItem']).toBe(scale.steps + scale.runs);
    expect(scale.calls['dynamodb.Query']).toBe(scale.steps * PendingIndex.SHARD_COUNT);
    expect(scale.calls['dynamodb.BatchGetItem']).toBeLessThanOrEqual(scale.steps * Math.ceil((PendingIndex.SHARD_COUNT * SCALED_STEP.pageEntries) / 100));
  }
  // Per entry examined, the calls never grow with the backlog (the fixed cost of a run only thins out).
  for (let i = 1; i < figures.length; i++) expect(figures[i].callsPerEntry).toBeLessThanOrEqual(figures[i - 1].callsPerEntry * 1.1);
}, 300_000);

test('a run with time for a few steps drains a backlog over a few runs, each moving the watermark, and its lag says how far it still is', async () => {
  const { stranded } = await backlog(600);
  h.clock.advance(SWEEP_AFTER_MS);
  const reconcile = h.reconciler({ sweepStep: SCALED_STEP, ledger: undefined });
  // Each run's clock loses 10 s at every look: its steps seem to take 10 s each, and after two of
  // them less than another and the margin is left.
  const context = () => {
    let call = 0;
    return { getRemainingTimeInMillis: () => 60_000 - 10_000 * call++ };
  };
  const lags: number[] = [];
  let swept = 0;
  for (let runs = 0; runs < 20 && lags.at(-1) !== 0; runs++) {
    const report = await reconcile(undefined, context());
    swept += report.swept;
    lags.push(report.sweepLagSeconds!);
  }
  expect(lags.length).toBeGreaterThan(1);
  expect(lags.at(-1)).toBe(0);
  for (let run = 1; run < lags.length; run++) expect(lags[run]).toBeLessThanOrEqual(lags[run - 1]);
  expect(h.capture.logs('sweep').filter((line) => line.stopped === 'time_budget')).toHaveLength(lags.length - 1);
  expect(swept).toBe(stranded.length);
  expect((await h.takeMessages()).sort()).toEqual([...stranded].sort());
});
