/**
 * Bad input: property-based fuzzing of the verifier with fast-check, every preset served by one
 * verifier against the emulators. The properties, generators, boundary cases and regressions
 * live in ./verifier-fuzz.ts. `npm test` runs 3,000 cases; `npm run fuzz` runs this same file
 * with 100,000 and prints the summary table.
 *
 * FUZZ_RUNS (default 3,000) and FUZZ_SEED change the run; FUZZ_SUMMARY=1 prints the table. A
 * failure prints the seed and the shrunk plan; once its bug is fixed, the plan belongs in
 * REGRESSION_PLANS.
 */
import * as fc from 'fast-check';
import { SecretsFixture } from '../support/inbox-fixture';
import { FuzzBench } from './verifier-fuzz';

const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 3_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_918);

const secrets = new SecretsFixture();
let bench: FuzzBench;
let elapsedMs = 0;

beforeAll(async () => {
  await secrets.start();
  bench = await FuzzBench.create(secrets, { salt: `jest-${SEED}` });
});
afterAll(async () => {
  bench?.destroy();
  await secrets.stop();
});

test(
  `boundaries, regressions and ${NUM_RUNS} generated cases (seed ${SEED}): documented answers only, never 5xx, nothing unauthenticated admitted, clean logs`,
  async () => {
    const started = performance.now();
    await fc.assert(bench.property(), { seed: SEED, numRuns: NUM_RUNS, examples: FuzzBench.examples() });
    elapsedMs = performance.now() - started;
    // The generator reaches every stage: routing, size, verification, freshness, admission, the store.
    if (NUM_RUNS < 1_000) return;
    for (const reason of [
      'unknown_provider',
      'too_large',
      'malformed',
      'body_too_deep',
      'bad_signature',
      'stale_timestamp',
      'test',
      'not_final',
      'handshake',
      'accepted',
      'duplicate',
      'quarantined',
    ]) {
      expect(bench.stats.byReason[reason]).toBeGreaterThan(0);
    }
  },
  // A guard against a hang, not a measure of speed: 3,000 cases take 60 s here alone and past 120 s
  // beside the rest of the suite on two cores (about 40 ms a case).
  Math.max(300_000, NUM_RUNS * 60),
);

test('after the run the inbox holds exactly the rows answered accepted and quarantined, the queue one message per accepted', async () => {
  const audit = await bench.audit();
  expect(audit.violations).toEqual([]);
  expect(audit.deliveryRows).toBe(audit.expectedDeliveryRows);
  expect(audit.quarantineItems).toBe(audit.expectedQuarantineItems);
  expect(audit.messages).toBe(audit.expectedMessages);
  expect(audit.deliveryRows).toBeGreaterThan(0);
  if (process.env.FUZZ_SUMMARY)
    process.stdout.write(`\n${bench.summary(elapsedMs, audit)}\n(reproduce: FUZZ_SEED=${SEED} FUZZ_RUNS=${NUM_RUNS} npm run fuzz)\n`);
});
