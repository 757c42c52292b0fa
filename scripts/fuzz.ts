/**
 * `npm run fuzz`: the verifier fuzzer (test/support/verifier-fuzz.ts) at scale, outside jest.
 * Starts its own emulators (dynalite, fauxqs) and the Secrets Manager stand-in, runs the
 * property for `--runs` cases (default 100,000) from `--seed` (printed; pass it back to reproduce
 * a run), audits the table and queue, prints a summary table, and exits non-zero on any
 * violation.
 *
 *   npm run fuzz
 *   npm run fuzz -- --seed 123456789 --runs 20000
 */
import { performance } from 'node:perf_hooks';
import { expect } from 'expect';
import * as fc from 'fast-check';
import { SecretsFixture } from '../test/support/inbox-fixture';
import { stopIam } from '../test/support/iam-fixture';
import { FuzzBench } from '../test/support/verifier-fuzz';

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  if (at >= 0) return process.argv[at + 1];
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function integerArgument(name: string, fallback: number): number {
  const text = argument(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`--${name} must be an integer, not ${text}`);
  return value;
}

async function main(): Promise<number> {
  const runs = integerArgument('runs', 100_000);
  const seed = integerArgument('seed', Date.now() % 2 ** 31);
  console.log(`verifier fuzz: ${runs} cases, seed ${seed} (reproduce: npm run fuzz -- --seed ${seed} --runs ${runs})`);

  // The emulators first: the SDK clients read their endpoints from the environment when created.
  // emulators.mjs is ESM (fauxqs is ESM-only): a dynamic import, resolved from this file.
  const { startEmulators } = (await import(new URL('../local/emulators.mjs', `file://${__filename}`).href)) as typeof import('../local/emulators.mjs');
  const emulators = await startEmulators();
  Object.assign(process.env, emulators.environment);
  // The fixture's log check (expectLogsClean) asserts with jest's `expect`, which runs outside jest too.
  Object.assign(globalThis, { expect });

  const secrets = await new SecretsFixture().start();
  const bench = await FuzzBench.create(secrets, { salt: `fuzz-${seed}` });
  const started = performance.now();
  const progress = setInterval(() => {
    const { cases, invocations } = bench.stats;
    process.stderr.write(`  … ${cases} cases, ${invocations} invocations, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }, 15_000);
  let failed = false;
  try {
    const details = await fc.check(bench.property(), { seed, numRuns: runs, examples: FuzzBench.examples() });
    const elapsed = performance.now() - started;
    clearInterval(progress);
    const audit = await bench.audit();
    console.log(bench.summary(elapsed, audit));
    if (details.failed) {
      failed = true;
      console.log(`\nPROPERTY FAILED\n${fc.defaultReportMessage(details)}\n\n${String((details.errorInstance as Error | undefined)?.message ?? details.errorInstance)}`);
    }
    if (audit.violations.length > 0) {
      failed = true;
      console.log(`\nAUDIT FAILED\n- ${audit.violations.join('\n- ')}`);
    }
    console.log(failed ? `\nFAIL (seed ${seed})` : `\nOK: no violation in ${bench.stats.cases} cases (seed ${seed})`);
  } finally {
    clearInterval(progress);
    bench.destroy();
    await stopIam();
    await secrets.stop();
    await emulators.stop();
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
