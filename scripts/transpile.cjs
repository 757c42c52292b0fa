/**
 * How the repository runs its TypeScript without building it: esbuild, the bundler the package
 * already builds with, turns each file into CommonJS on its own, as `isolatedModules` guarantees
 * it can, as tsc would emit it for the tsconfig's target. Two users:
 *
 * - ts-node (`transpiler` in tsconfig.dev.json): every ts-node process (`npm start`, `npm run
 *   chaos`, the bench, `cdk synth` of bin/app.ts, and the processes the tests start) transpiles
 *   the twin, lib/ and lambda/ again when it starts; TypeScript's own transpiler takes about 4 s
 *   of CPU for that, esbuild a fraction of one.
 * - jest (test/support/jest-project.cjs), for the test files and what they import.
 *
 * Neither type-checks: `npm run typecheck` (part of the build) does, tests included.
 */
'use strict';
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { dirname, resolve } = require('node:path');
const esbuild = require('esbuild');

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

/** ts-node's transpiler factory (its `transpiler` option): the target and class fields of the tsconfig ts-node read. */
exports.create = ({ service }) => {
  const ts = require(service.projectLocalResolveHelper('typescript', true));
  const { target: targetEnum, useDefineForClassFields } = service.config.options;
  const target = ts.ScriptTarget[targetEnum].toLowerCase();
  const options = transformOptions(target, useDefineForClassFields ?? definesClassFields(target));
  return {
    transpile(input, { fileName }) {
      const { code, map } = esbuild.transformSync(input, { ...options, sourcefile: fileName });
      return { outputText: code, sourceMapText: map };
    },
  };
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
  const version = createHash('sha256').update(readFileSync(__filename)).update(esbuild.version).update(JSON.stringify(options)).digest('hex');
  return {
    canInstrument: false,
    getCacheKey(source, path) {
      return createHash('sha256').update(version).update(path).update(source).digest('hex');
    },
    process(source, path) {
      const { code, map } = esbuild.transformSync(source, { ...options, sourcefile: path });
      return { code, map };
    },
  };
};
