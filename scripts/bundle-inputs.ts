/**
 * What `npm run bundle` reads, as one digest: its last successful run records the digest of the
 * inputs it bundled beside the bundles, so that `npm start` (scripts/start.ts) bundles again only
 * when an input changed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './bundle-options';

/** The sources it bundles, its own scripts and settings, the pinned packages. */
const BUNDLE_INPUTS = [
  'lambda',
  'lib',
  'client',
  'cli',
  'scripts/bundle.ts',
  'scripts/bundle-options.ts',
  'tsconfig.json',
  'tsconfig.client.json',
  'package-lock.json',
];
/**
 * jsii's output beside the sources in lib/ (`npm run compile`: the JavaScript, the declarations and
 * its incremental build's record) is not an input of the bundles: a build must not make the next
 * `npm start` bundle again.
 */
const COMPILED = /^lib\/.*\.(js|d\.ts|tsbuildinfo)$/;
/** Inside assets/, which `npm run bundle` empties first: a failed run leaves none. */
const DIGEST_FILE = join(ROOT, 'assets', '.inputs.sha256');

/** The input files under `path` (a file or a folder) of the checkout at `root`, in a stable order. */
function filesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return COMPILED.test(path) ? [] : [path];
  return readdirSync(full)
    .sort()
    .flatMap((name) => filesUnder(root, join(path, name)));
}

/** One digest of every input file's path and content, in the checkout at `root`. */
export function bundleInputsDigest(root = ROOT): string {
  const hash = createHash('sha256');
  for (const file of BUNDLE_INPUTS.flatMap((input) => filesUnder(root, input)))
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex');
}

/** Records that the bundles were made from the inputs of `digest`. */
export function recordBundleInputs(digest: string): void {
  writeFileSync(DIGEST_FILE, digest);
}

/** Whether the bundles were made from the inputs as they are now. */
export function bundlesUpToDate(): boolean {
  return existsSync(DIGEST_FILE) && readFileSync(DIGEST_FILE, 'utf8') === bundleInputsDigest();
}
