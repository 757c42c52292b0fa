/**
 * Bundles every handler in `lambda/<name>/index.ts` into `assets/<name>/index.js` at package
 * build time, so that consumers of the construct need no bundler at synth time. The ops CLI
 * (`cli/index.ts`) becomes `assets/cli/webhook-inbox.js`, the package's `bin`; the submission
 * ledger client (`client/index.ts`) becomes `assets/client/index.js`, the `./client` export.
 */
import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build, BuildOptions } from 'esbuild';
import { bundleOptions, handlerNames, ROOT as root } from './bundle-options';

const handlers = handlerNames();

/**
 * What ships may not contain the local tooling (`local/`, `test/`), nor the copyleft IAM
 * simulator the tests and the twin use (AGPL-3.0, a devDependency only).
 */
const NEVER_SHIPPED = [/^local\//, /^test\//, /node_modules\/@cloud-copilot\//];

/** One esbuild bundle with the project's settings; returns the bundle's size in KiB. */
async function bundle(entry: string, outfile: string, options: BuildOptions = {}): Promise<string> {
  const result = await build(bundleOptions(entry, outfile, options));
  const forbidden = Object.keys(result.metafile!.inputs).filter((input) => NEVER_SHIPPED.some((pattern) => pattern.test(input)));
  if (forbidden.length > 0) throw new Error(`${outfile} would ship what must never ship: ${forbidden.slice(0, 5).join(', ')}`);
  const bytes = Object.values(result.metafile!.outputs).find((output) => output.entryPoint)?.bytes ?? 0;
  return (bytes / 1024).toFixed(0);
}

async function main(): Promise<void> {
  rmSync(join(root, 'assets'), { recursive: true, force: true });
  for (const name of handlers) {
    console.log(`bundled ${name}: ${await bundle(`lambda/${name}/index.ts`, `assets/${name}/index.js`)} KiB`);
  }
  // The ops CLI runs on an operator's machine: the package's minimum Node.js, a shebang, executable.
  const cli = 'assets/cli/webhook-inbox.js';
  console.log(`bundled cli: ${await bundle('cli/index.ts', cli, { target: 'node20', banner: { js: '#!/usr/bin/env node' } })} KiB`);
  chmodSync(join(root, cli), 0o755);
  // The ledger client runs in the user's app, with the user's AWS SDK (it takes their DynamoDBClient).
  const client = await bundle('client/index.ts', 'assets/client/index.js', { target: 'node20', minify: false, external: ['@aws-sdk/*'] });
  console.log(`bundled client: ${client} KiB`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
