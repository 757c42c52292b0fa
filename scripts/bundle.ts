/**
 * Bundles every handler in `lambda/<name>/index.ts` into `assets/<name>/index.mjs` (and the chunks
 * it imports on first use, `assets/<name>/chunks/`) at package build time, so that consumers of the construct need no bundler at synth time. The ops CLI
 * (`cli/index.ts`) becomes `assets/cli/webhook-inbox.js`, the package's `bin`; the submission
 * ledger client (`client/index.ts`) becomes `assets/client/index.js`, the `./client` export, with
 * its types in `assets/client/index.d.ts`. Last, the digest of the inputs is recorded
 * (scripts/bundle-inputs.ts), which `npm start` compares to bundle only what changed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build, BuildOptions, Metafile } from 'esbuild';
import { bundleOptions, handlerBundleOptions, handlerNames, loadedAtStart, ROOT as root } from './bundle-options';
import { bundleInputsDigest, recordBundleInputs } from './bundle-inputs';

const handlers = handlerNames();

/**
 * What ships may not contain the local tooling (`packages/`, `test/`), nor the copyleft IAM
 * simulator the tests and the twin use (AGPL-3.0, a devDependency only).
 */
const NEVER_SHIPPED = [/^packages\//, /^test\//, /node_modules\/@cloud-copilot\//];

/** One esbuild build with the project's settings, checked for what must never ship. */
async function bundle(what: string, options: BuildOptions): Promise<Metafile> {
  const { metafile } = await build(options);
  const forbidden = Object.keys(metafile!.inputs).filter((input) => NEVER_SHIPPED.some((pattern) => pattern.test(input)));
  if (forbidden.length > 0) throw new Error(`${what} would ship what must never ship: ${forbidden.slice(0, 5).join(', ')}`);
  return metafile!;
}

const kib = (metafile: Metafile, outputs: string[] = Object.keys(metafile.outputs)) =>
  `${(outputs.reduce((sum, output) => sum + metafile.outputs[output].bytes, 0) / 1024).toFixed(0)} KiB`;

async function main(): Promise<void> {
  // Read before anything is bundled: an input changed during the run makes the next start bundle again.
  const inputs = bundleInputsDigest();
  rmSync(join(root, 'assets'), { recursive: true, force: true });
  for (const name of handlers) {
    const metafile = await bundle(`assets/${name}`, handlerBundleOptions(name));
    const atStart = loadedAtStart(metafile, name);
    console.log(`bundled ${name}: ${kib(metafile, atStart)} loaded at start (${atStart.length} files), ${kib(metafile)} in all`);
  }
  // The ops CLI runs on an operator's machine: the package's minimum Node.js, a shebang, executable.
  const cli = 'assets/cli/webhook-inbox.js';
  console.log(`bundled cli: ${kib(await bundle(cli, bundleOptions('cli/index.ts', cli, { target: 'node20', banner: { js: '#!/usr/bin/env node' } })))}`);
  chmodSync(join(root, cli), 0o755);
  // The ledger client runs in the user's app, with the user's AWS SDK (it takes their DynamoDBClient).
  const client = 'assets/client/index.js';
  console.log(
    `bundled client: ${kib(await bundle(client, bundleOptions('client/index.ts', client, { target: 'node20', minify: false, external: ['@aws-sdk/*'] })))}`,
  );
  // Its types, one declaration file with the contract types it names inlined.
  const types = spawnSync(
    process.execPath,
    [
      require.resolve('dts-bundle-generator/dist/bin/dts-bundle-generator.js'),
      '--silent',
      '--no-banner',
      '--project',
      'tsconfig.client.json',
      '-o',
      'assets/client/index.d.ts',
      'client/index.ts',
    ],
    { cwd: root, stdio: 'inherit' },
  );
  if (types.status !== 0) throw new Error(`dts-bundle-generator failed (exit ${types.status ?? types.signal})`);
  console.log('bundled client types: assets/client/index.d.ts');
  recordBundleInputs(inputs);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
