/**
 * How the repository runs its TypeScript without building it: esbuild, the bundler the package
 * already builds with, turns each file into CommonJS on its own, as `isolatedModules` guarantees
 * it can, as tsc would emit it for the tsconfig's target. Two users:
 *
 * - ts-node (`transpiler` in tsconfig.dev.json): every ts-node process (`npm start`, `npm run
 *   chaos`, the bench, `cdk synth` of bin/app.ts, and the processes the tests start) loads the
 *   twin, lib/ and lambda/ (about 150 files) when it starts; TypeScript's own transpiler takes
 *   about 4 s of CPU for that, esbuild a fraction of one, and esbuild's output kept on disk
 *   (`diskCached`) none: a process whose files are all cached starts no esbuild at all.
 * - jest (test/support/jest-project.cjs), for the test files and what they import.
 *
 * Neither type-checks: `npm run typecheck` (part of the build) does, tests included.
 */
'use strict';
const { mkdirSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');
const esbuild = require('esbuild');
const { CACHE_ROOT, digest, readEntry, writeEntry } = require('./disk-cache.cjs');

/** esbuild's options for a tsconfig's target and class fields, and tsc's "use strict" (alwaysStrict), which esbuild does not write. */
function transformOptions(target, useDefineForClassFields) {
  return {
    loader: 'ts',
    format: 'cjs',
    target,
    banner: '"use strict";',
    sourcemap: 'external',
    tsconfigRaw: { compilerOptions: { useDefineForClassFields } },
  };
}

/** tsc's default for class fields: define semantics from ES2022 on. */
const definesClassFields = (target) => !/^es(3|5|201[5-9]|2020|2021)$/.test(target);

/** What an output depends on besides the file itself: this file, esbuild's version and the options. */
const versionOf = (options) => digest(readFileSync(__filename), esbuild.version, JSON.stringify(options));

/** Where ts-node's transpiled files are kept. */
const CACHE_FOLDER = join(CACHE_ROOT, 'transpiled');

/**
 * `transform` (text and file name to an output), its outputs kept in `folder`, one entry per file:
 * named by a digest of the file's name, then one of `version` and its text, so that an edited
 * file, or a new version, is transformed again, never served a stale output, and its new entry
 * replaces the old. Processes share the folder (scripts/disk-cache.cjs says how an entry is read
 * and written), and pruning skips an entry another process is still writing. A process lists the
 * folder once, at its first miss: an old entry another process writes after that is replaced by a
 * later process. A folder that cannot be written to only costs the time the cache would have saved.
 */
function diskCached(folder, version, transform) {
  /** The folder's entries as this process knows them: listed at its first miss, then kept up to date. */
  let listed;
  let writable = true;
  try {
    mkdirSync(folder, { recursive: true });
  } catch {
    writable = false;
  }
  return (text, fileName) => {
    const file = digest(fileName);
    const name = `${file}-${digest(version, text)}.json`;
    const entry = join(folder, name);
    const cached = readEntry(entry);
    if (cached !== undefined) return cached;
    const output = transform(text, fileName);
    if (writable) {
      try {
        writeEntry(entry, output);
        listed ??= new Set(readdirSync(folder));
        for (const older of listed)
          if (older.startsWith(`${file}-`) && older.endsWith('.json') && older !== name) {
            rmSync(join(folder, older), { force: true });
            listed.delete(older);
          }
        listed.add(name);
      } catch {
        writable = false;
      }
    }
    return output;
  };
}
exports.diskCached = diskCached;

/** ts-node's transpiler factory (its `transpiler` option): the target and class fields of the tsconfig ts-node read. */
exports.create = ({ service }) => {
  const ts = require(service.projectLocalResolveHelper('typescript', true));
  const { target: targetEnum, useDefineForClassFields } = service.config.options;
  const target = ts.ScriptTarget[targetEnum].toLowerCase();
  const options = transformOptions(target, useDefineForClassFields ?? definesClassFields(target));
  const transpile = diskCached(CACHE_FOLDER, versionOf(options), (input, fileName) => {
    const { code, map } = esbuild.transformSync(input, { ...options, sourcefile: fileName });
    return { outputText: code, sourceMapText: map };
  });
  return { transpile: (input, { fileName }) => transpile(input, fileName) };
};

/** A compiler option of a tsconfig file, or of the one it extends. */
function compilerOption(tsconfig, name) {
  const config = JSON.parse(readFileSync(tsconfig, 'utf8'));
  if (config.compilerOptions?.[name] !== undefined) return config.compilerOptions[name];
  return config.extends ? compilerOption(resolve(dirname(tsconfig), config.extends), name) : undefined;
}

/** jest's transformer, made with `{ tsconfig }` (jest's `transform` options). */
exports.createTransformer = ({ tsconfig }) => {
  const target = String(compilerOption(tsconfig, 'target')).toLowerCase();
  const options = transformOptions(target, compilerOption(tsconfig, 'useDefineForClassFields') ?? definesClassFields(target));
  const version = versionOf(options);
  return {
    canInstrument: false,
    getCacheKey: (source, path) => digest(version, path, source),
    process(source, path) {
      const { code, map } = esbuild.transformSync(source, { ...options, sourcefile: path });
      return { code, map };
    },
  };
};
