import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildOptions, Metafile } from 'esbuild';
import { HANDLER_FILE, HANDLER_NODE_MAJOR } from '../lib/contract';

export { HANDLER_FILE };

export const ROOT = join(__dirname, '..');

/** Every handler, `lambda/<name>/index.ts`, bundled into `assets/<name>/` (`HANDLER_FILE` and its chunks). */
export function handlerNames(): string[] {
  return readdirSync(join(ROOT, 'lambda'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, 'lambda', entry.name, 'index.ts')))
    .map((entry) => entry.name);
}

/** What every shipped bundle shares. */
function sharedOptions(entry: string): BuildOptions {
  return {
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: 'node',
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
  };
}

/**
 * A handler's bundle (scripts/bundle.ts; the bench and the tests rebuild it in memory to read what
 * fills it): `assets/<name>/index.mjs`, an ES module, and what it imports dynamically split into
 * chunks beside it (`chunks/`), which Node reads only when the import runs. So neither the S3
 * client of the body store (bodyStoreFromEnv) nor the SDK's credential providers that a function
 * never reaches (SSO, ini files, processes, web identity, container and instance metadata: the
 * default chain imports each one when the environment's credentials are missing) are loaded at
 * a cold start. Code splitting needs ES module output; Lambda's Node.js runtime imports an `.mjs`
 * handler as an ES module.
 */
export function handlerBundleOptions(name: string, options: BuildOptions = {}): BuildOptions {
  return {
    ...sharedOptions(`lambda/${name}/index.ts`),
    format: 'esm',
    splitting: true,
    outdir: join(ROOT, 'assets', name),
    entryNames: 'index',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    // The SDK's browser user-agent parser: imported dynamically from browser-only code that the
    // Node.js clients never call and esbuild drops, yet a chunk would still be written for it.
    external: ['bowser'],
    ...options,
  };
}

/** A single-file CommonJS bundle (the ops CLI, the ledger client) from `entry` into `outfile`. */
export function bundleOptions(entry: string, outfile: string, options: BuildOptions = {}): BuildOptions {
  return { ...sharedOptions(entry), format: 'cjs', outfile: join(ROOT, outfile), ...options };
}

/**
 * The outputs of a handler's build that Node loads when the handler's module loads: its entry and
 * every chunk reached from it by static imports (metafile paths; the chunks reached only through
 * a dynamic import load when the import runs).
 */
export function loadedAtStart(metafile: Metafile, name: string): string[] {
  const outputs = metafile.outputs;
  // Metafile paths are relative to the working directory; a chunk of a dynamic import has that module as its entry point.
  const entry = Object.keys(outputs).find((path) => outputs[path].entryPoint?.endsWith(`lambda/${name}/index.ts`));
  if (!entry) throw new Error(`the build of ${name} has no entry`);
  const loaded = new Set<string>();
  const visit = (path: string) => {
    if (loaded.has(path)) return;
    loaded.add(path);
    for (const imported of outputs[path].imports) if (imported.kind === 'import-statement' && imported.path in outputs) visit(imported.path);
  };
  visit(entry);
  return [...loaded];
}
