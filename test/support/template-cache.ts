/**
 * Synthesized templates kept on disk (node_modules/.cache/cdk-webhook-inbox/templates), so that a
 * template is synthesized once and then read by every later test file of the run, and of the next
 * runs over the same code: a file whose templates are there never loads aws-cdk-lib. An entry is
 * keyed by all that makes its template: the spec, the module that synthesizes it, the construct's
 * sources (lib/) and bundled handlers (assets/, whose hashes the template names), and the
 * aws-cdk-lib and constructs releases installed. Any change to them is a new key, never a stale
 * template; the entries of older code go when the first entry of new code is written.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const { CACHE_ROOT, digest, readEntry, writeEntry } = require('../../scripts/disk-cache.cjs') as {
  CACHE_ROOT: string;
  digest: (...parts: (string | Buffer)[]) => string;
  readEntry: (file: string) => unknown;
  writeEntry: (file: string, value: unknown) => void;
};

const ROOT = join(__dirname, '..', '..');
const CACHE = join(CACHE_ROOT, 'templates');

/** What every synthesis reads besides its own module: the folders (without the compiled output jsii writes beside lib/'s sources) and the CDK releases. */
const CONSTRUCT_FOLDERS: readonly { readonly folder: string; readonly skip?: RegExp }[] = [
  { folder: 'lib', skip: /\.(js|d\.ts|tsbuildinfo)$/ },
  { folder: 'assets' },
];
const CDK_PACKAGES = ['aws-cdk-lib', 'constructs'];

/** The files of `folder`, sorted, but those `skip` matches. */
function filesOf(folder: string, skip?: RegExp): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !skip?.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** The hash of the code a synthesizer module's templates come from. */
function codeHash(synthesizer: string): string {
  const files = [join(ROOT, synthesizer), ...CONSTRUCT_FOLDERS.flatMap(({ folder, skip }) => filesOf(join(ROOT, folder), skip))];
  const releases = CDK_PACKAGES.map(
    (name) => `${name}@${(JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version}`,
  );
  return digest(...releases, ...files.flatMap((file) => [relative(ROOT, file), readFileSync(file)]));
}

const codeHashes = new Map<string, string>();

/**
 * The template `synthesize` makes of `spec` (anything JSON can hold), read from the cache when the
 * same code synthesized it before. `synthesizer` is the module `synthesize` runs, relative to the
 * repository's root; `synthesize` should load it, and with it aws-cdk-lib, only when it is called.
 */
export function cachedSynthesis<T>(synthesizer: string, spec: unknown, synthesize: () => T): T {
  let code = codeHashes.get(synthesizer);
  if (!code) {
    code = codeHash(synthesizer);
    codeHashes.set(synthesizer, code);
  }
  const folder = join(CACHE, synthesizer.replace(/[^\w.-]+/g, '-'));
  const entry = join(folder, code, `${digest(JSON.stringify(spec))}.json`);
  const cached = readEntry(entry);
  if (cached !== undefined) return cached as T;
  const synthesized = synthesize();
  store(folder, code, entry, synthesized);
  return synthesized;
}

function store(folder: string, code: string, entry: string, synthesized: unknown): void {
  mkdirSync(join(folder, code), { recursive: true });
  for (const older of readdirSync(folder)) if (older !== code) rmSync(join(folder, older), { recursive: true, force: true });
  writeEntry(entry, synthesized);
}
