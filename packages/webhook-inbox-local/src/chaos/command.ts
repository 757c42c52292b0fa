/**
 * `npm run chaos` (the `chaos` command of src/cli.ts): the fault-injection run. Starts the local twin with compressed timing, drives
 * it with three simulated providers (Answerline, Echonova, a Standard Webhooks sender) while every
 * failure mode the design lists (docs/DESIGN.md#failure-modes) is injected, audits the inbox against the providers' own records,
 * prints a table of figures and exits non-zero on any violation.
 */
import { randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { formatReport } from './audit';
import { runChaos } from './run';
import { parseCommandLine, UsageError } from '../twin/usage';

const USAGE = `usage: npm run chaos -- [--seed N] [--deliveries N] [--speed X] [--rate N] [--keep DIR] [--report FILE]
  --seed N           repeat a run (the seed is printed at the start of every run; default: random)
  --deliveries N     result deliveries the three providers complete (default 10000)
  --speed X          compress time X times more (schedules, outages, timeouts; default 1)
  --rate N           at most this many result deliveries per second (default 70; the run slows down when the twin falls behind)
  --keep DIR         write the twin's logs and ops config to DIR and keep them
  --report FILE      also write the report as JSON to FILE
  --drain-seconds N  how long to wait for the inbox to settle once the providers are done (default 180)`;

/** Runs the fault-injection run its command line (`argv`, what follows `chaos`) asks for; its exit code. */
export async function chaosCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommandLine(
    {
      seed: { type: 'string' },
      deliveries: { type: 'string', default: '10000' },
      speed: { type: 'string', default: '1' },
      rate: { type: 'string' },
      keep: { type: 'string' },
      report: { type: 'string' },
      'drain-seconds': { type: 'string', default: '180' },
      help: { type: 'boolean', default: false },
    },
    USAGE,
    argv,
  );
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const seed = args.seed === undefined ? randomInt(1, 2 ** 31 - 1) : Number(args.seed);
  const deliveries = Number(args.deliveries);
  const speed = Number(args.speed);
  const rate = args.rate === undefined ? undefined : Number(args.rate);
  const drainSeconds = Number(args['drain-seconds']);
  const problems = [
    ...(drainSeconds > 0 ? [] : [`--drain-seconds wants a positive number, got "${args['drain-seconds']}"`]),
    ...(Number.isSafeInteger(seed) ? [] : [`--seed wants an integer, got "${args.seed}"`]),
    ...(Number.isSafeInteger(deliveries) && deliveries >= 50 ? [] : [`--deliveries wants an integer of at least 50, got "${args.deliveries}"`]),
    ...(speed > 0 ? [] : [`--speed wants a positive number, got "${args.speed}"`]),
    ...(rate === undefined || rate > 0 ? [] : [`--rate wants a positive number, got "${args.rate}"`]),
  ];
  if (problems.length) throw new UsageError(problems.join('; '), USAGE);
  console.log(`seed ${seed}  (repeat with: npm run chaos -- --seed ${seed} --deliveries ${deliveries}${speed !== 1 ? ` --speed ${speed}` : ''})`);
  const report = await runChaos({
    seed,
    deliveries,
    speed,
    ratePerSecond: rate,
    drainTimeoutMs: drainSeconds * 1000,
    ...(args.keep ? { stateDir: args.keep, keepState: true } : {}),
    log: (line) => console.log(line),
  });
  console.log(`\n${formatReport(report)}`);
  if (args.report) writeFileSync(args.report, `${JSON.stringify(report, null, 2)}\n`);
  return report.violations.length > 0 ? 1 : 0;
}
