/**
 * `npm start` and `npm run chaos`: the twin's command (packages/webhook-inbox-local/src/cli.ts) run
 * from the repository's sources, once the bundles it runs are up to date. `--help` and a usage
 * error are answered first, with nothing bundled or loaded. `npm run bundle` (the handlers, the ops
 * CLI, the ledger client and its type bundle: the slow part, a minute or more on two cores) runs
 * only when its inputs changed since the bundles were made, and says so while it runs. The
 * command's "ready in" counts from the start of this process.
 */
import { spawnSync } from 'node:child_process';
import { OPTIONS, REPOSITORY_OPTIONS, repositoryUsage } from '../packages/webhook-inbox-local/src/command-line';
import { parseCommandLine, runMain } from '../packages/webhook-inbox-local/src/twin/usage';
import { ROOT } from './bundle-options';
import { bundlesUpToDate } from './bundle-inputs';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Runs `npm run bundle` unless the bundles were made from these very inputs. */
function bundleIfChanged(): void {
  if (bundlesUpToDate()) return;
  const started = Date.now();
  log('bundling the functions, the ops CLI and the ledger client with its types (their sources changed since the last bundle; a minute or more)…');
  const run = spawnSync('npm', ['run', '--silent', 'bundle'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (run.status !== 0) throw new Error(`npm run bundle failed (exit ${run.status ?? run.signal})`);
  log(`bundled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

runMain(async () => {
  const argv = process.argv.slice(2);
  if (argv[0] !== 'chaos') {
    const usage = repositoryUsage();
    const options = parseCommandLine({ ...OPTIONS, ...REPOSITORY_OPTIONS }, usage, argv);
    if (options.help) {
      console.log(usage);
      return 0;
    }
  }
  bundleIfChanged();
  log('loading the twin…');
  // The command reads the same argv, and runs from here.
  require('../packages/webhook-inbox-local/src/cli');
  return undefined;
});
