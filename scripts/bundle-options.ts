import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';
import { HANDLER_NODE_MAJOR } from '../lib/contract';

export const ROOT = join(__dirname, '..');

/** Every handler, `lambda/<name>/index.ts`, bundled into `assets/<name>/index.js`. */
export function handlerNames(): string[] {
  return readdirSync(join(ROOT, 'lambda'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, 'lambda', entry.name, 'index.ts')))
    .map((entry) => entry.name);
}

/**
 * The esbuild options of every shipped bundle (scripts/bundle.ts), shared with the bench, which
 * rebuilds the handlers in memory to read what fills them.
 */
export function bundleOptions(entry: string, outfile: string, options: BuildOptions = {}): BuildOptions {
  return {
    entryPoints: [join(ROOT, entry)],
    outfile: join(ROOT, outfile),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${HANDLER_NODE_MAJOR}`,
    // The AWS SDK's ES module builds tree-shake; its CommonJS builds (node's default) do not.
    mainFields: ['module', 'main'],
    minify: true,
    // No source maps: with NODE_OPTIONS=--enable-source-maps a function loads 14-28% slower and
    // its first error stack takes 170-290 ms instead of 2 ms (bench/cold-start.ts; docs/DESIGN.md,
    // "Function assets"); without the flag nothing reads them.
    sourcemap: false,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    logOverride: { 'unsupported-dynamic-import': 'error', 'unsupported-require-call': 'error' },
    ...options,
  };
}
