/**
 * Bundles every handler in `lambda/<name>/index.ts` into `assets/<name>/index.js` at package
 * build time, so that consumers of the construct need no bundler at synth time. The ops CLI
 * (`cli/index.ts`) becomes `assets/cli/webhook-inbox.js`, the package's `bin`.
 */
import { chmodSync, readdirSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { HANDLER_NODE_MAJOR } from '../lib/contract';

const root = join(__dirname, '..');
const handlers = readdirSync(join(root, 'lambda'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, 'lambda', entry.name, 'index.ts')))
  .map((entry) => entry.name);

async function main(): Promise<void> {
  rmSync(join(root, 'assets'), { recursive: true, force: true });
  for (const name of handlers) {
    const result = await build({
      entryPoints: [join(root, 'lambda', name, 'index.ts')],
      outfile: join(root, 'assets', name, 'index.js'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${HANDLER_NODE_MAJOR}`,
      minify: true,
      sourcemap: true,
      sourcesContent: false,
      legalComments: 'none',
      metafile: true,
      logLevel: 'warning',
      logOverride: { 'unsupported-dynamic-import': 'error', 'unsupported-require-call': 'error' },
    });
    const bytes = Object.values(result.metafile.outputs).find((o) => o.entryPoint)?.bytes ?? 0;
    console.log(`bundled ${name}: ${(bytes / 1024).toFixed(0)} KiB`);
  }
  await bundleCli();
}

/** The ops CLI runs on an operator's machine: the package's minimum Node.js, a shebang, executable. */
async function bundleCli(): Promise<void> {
  const outfile = join(root, 'assets', 'cli', 'webhook-inbox.js');
  const result = await build({
    entryPoints: [join(root, 'cli', 'index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    legalComments: 'none',
    banner: { js: '#!/usr/bin/env node' },
    metafile: true,
    logLevel: 'warning',
    logOverride: { 'unsupported-dynamic-import': 'error', 'unsupported-require-call': 'error' },
  });
  chmodSync(outfile, 0o755);
  const bytes = Object.values(result.metafile.outputs).find((o) => o.entryPoint)?.bytes ?? 0;
  console.log(`bundled cli: ${(bytes / 1024).toFixed(0)} KiB`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
