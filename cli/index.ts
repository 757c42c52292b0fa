/**
 * `webhook-inbox`: the ops CLI of cdk-webhook-inbox. Bundled by scripts/bundle.ts into
 * assets/cli/webhook-inbox.js and published as the package's `bin`.
 */
import { run } from './main';
import { hideSdkNodeVersionWarning } from '../lambda/shared/runtime/node-warnings';

export type { LocalOpsConfig, OpsEndpoints } from './config';

hideSdkNodeVersionWarning();

run(process.argv.slice(2), {
  io: { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) },
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`webhook-inbox: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
