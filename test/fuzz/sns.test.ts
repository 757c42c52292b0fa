/**
 * Bad input for the Amazon SNS preset: property-based fuzzing of the verifier with fast-check,
 * messages signed by the local SNS stand-in and mutated, against the emulators and the stand-in's
 * HTTPS host. The rules, generators and examples live in ./sns-fuzz.ts. `npm test` runs 1,000
 * cases; `npm run fuzz` a tenth of its FUZZ_RUNS (10,000: a case signs with RSA and posts two or
 * three times) and prints the summary table.
 *
 * SNS_FUZZ_RUNS (else a tenth of FUZZ_RUNS, else 1,000) and FUZZ_SEED change the run;
 * FUZZ_SUMMARY=1 prints the table. A failure prints the seed and the shrunk plan.
 */
import * as fc from 'fast-check';
import { SecretsFixture } from '../support/inbox-fixture';
import { SnsFuzzBench } from './sns-fuzz';

const NUM_RUNS = Number(process.env.SNS_FUZZ_RUNS ?? (process.env.FUZZ_RUNS ? Math.ceil(Number(process.env.FUZZ_RUNS) / 10) : 1_000));
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_201);

const secrets = new SecretsFixture();
let bench: SnsFuzzBench;
let elapsedMs = 0;

beforeAll(async () => {
  await secrets.start();
  bench = await SnsFuzzBench.create(secrets);
});
afterAll(async () => {
  await bench?.destroy();
  await secrets.stop();
});

test(
  `SNS: examples and ${NUM_RUNS} generated cases (seed ${SEED}): authentic messages accepted or confirmed, every mutation refused, clean logs`,
  async () => {
    const started = performance.now();
    await fc.assert(bench.property(), { seed: SEED, numRuns: NUM_RUNS, examples: SnsFuzzBench.examples() });
    elapsedMs = performance.now() - started;
    // The generator reaches every answer: stored, repeated, altered, confirmed, and each refusal.
    if (NUM_RUNS < 500) return;
    for (const outcome of [
      '202 accepted',
      '200 duplicate',
      '200 quarantined',
      '200 confirmed',
      '400 bad_signature',
      '400 malformed',
      '400 stale_timestamp',
      '502 confirmation_failed',
      '503 certificate_unavailable',
    ]) {
      expect(bench.stats.byOutcome[outcome]).toBeGreaterThan(0);
    }
  },
  Math.max(120_000, NUM_RUNS * 60),
);

test('after the run the inbox holds exactly the accepted messages, the queue one message each, the stand-in exactly the confirmations answered', async () => {
  const audit = await bench.audit();
  expect(audit.violations).toEqual([]);
  expect(audit.deliveryRows).toBe(audit.expectedDeliveryRows);
  expect(audit.quarantineItems).toBe(audit.expectedQuarantineItems);
  expect(audit.messages).toBe(audit.expectedMessages);
  expect(audit.confirmations).toBe(audit.expectedConfirmations);
  expect(audit.deliveryRows).toBeGreaterThan(0);
  if (process.env.FUZZ_SUMMARY)
    process.stdout.write(`\n${bench.summary(elapsedMs, audit)}\n(reproduce: FUZZ_SEED=${SEED} SNS_FUZZ_RUNS=${NUM_RUNS} npx jest test/fuzz/sns.test.ts)\n`);
});
