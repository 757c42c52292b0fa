/**
 * `npm run bench`: bundles the handlers, starts the emulators and stand-ins, measures every
 * figure (bench/bench.ts), prints the Markdown tables and writes bench/results.json.
 *
 *   npm run bench
 *   npm run bench -- --scales 500,2000,8000 --out /tmp/results.json   (about 10 minutes here)
 *   npm run bench -- --quick --out /tmp/results.json   (a tiny load: checks the bench works, measures nothing worth keeping)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { hideSdkNodeVersionWarning } from '../lambda/shared/runtime/node-warnings';
import { BenchOptions, DEFAULT_OPTIONS, QUICK_OPTIONS, runBench } from './bench';
import { BenchEnvironment } from './environment';
import { renderMarkdown } from './report';
import { measureRecoveryCalls, RECOVERY_CALLS_DEFAULTS, renderRecoveryCalls } from './recovery-calls';

hideSdkNodeVersionWarning();

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scales: { type: 'string' },
      quick: { type: 'boolean', default: false },
      out: { type: 'string', default: join(__dirname, 'results.json') },
    },
    strict: true,
  });
  const scales = values.scales ? values.scales.split(',').map((value) => Number(value.trim())) : DEFAULT_OPTIONS.scales;
  if (scales.length === 0 || scales.some((value) => !Number.isSafeInteger(value) || value < 1))
    throw new Error(`--scales must be positive integers, not ${values.scales}`);
  const options: BenchOptions = {
    ...(values.quick ? QUICK_OPTIONS : DEFAULT_OPTIONS),
    ...(values.scales || !values.quick ? { scales } : {}),
    progress: (line) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`),
  };
  const env = await BenchEnvironment.start();
  try {
    const results = await runBench(env, options);
    options.progress?.('recovery: the reconciler’s requests to GitHub and Stripe over a simulated hour');
    const recoveryCalls = await measureRecoveryCalls(values.quick ? { ...RECOVERY_CALLS_DEFAULTS, volumes: [60] } : RECOVERY_CALLS_DEFAULTS);
    writeFileSync(values.out!, `${JSON.stringify({ ...results, recoveryCalls }, null, 2)}\n`);
    console.log(renderMarkdown(results));
    console.log(`\n${renderRecoveryCalls(recoveryCalls)}`);
    process.stderr.write(`[bench] results written to ${values.out}\n`);
  } finally {
    await env.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
