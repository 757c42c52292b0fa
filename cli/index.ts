/**
 * `webhook-inbox`: the ops CLI of cdk-webhook-inbox. Bundled by scripts/bundle.ts into
 * assets/cli/webhook-inbox.js and published as the package's `bin`.
 */
import { run } from './main';

export type { LocalOpsConfig, OpsEndpoints } from './config';

// The bundled AWS SDK warns on Node 20 that its future versions need Node 22; this bundle pins
// its SDK, so the warning says nothing about this CLI. Other warnings are printed as usual.
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (!warning.message.startsWith('NodeVersionSupportWarning')) process.stderr.write(`${warning.name}: ${warning.message}\n`);
});

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
