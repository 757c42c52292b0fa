/**
 * ts-node's transpiler in this repository (tsconfig.dev.json "ts-node"): esbuild, the bundler the
 * package already builds with, turning each TypeScript file into CommonJS on its own, as
 * `isolatedModules` guarantees it can. Every ts-node process (`npm start`, `npm run chaos`, the
 * bench, `cdk synth` of bin/app.ts, and the processes the tests start) transpiles the whole twin,
 * lib/ and lambda/ again on each start: TypeScript's own transpiler takes about 4 s of CPU for
 * that, esbuild well under one. Type checking is `npm run typecheck`'s, as it always was with
 * `--transpile-only`.
 */
'use strict';
const { transformSync } = require('esbuild');

/** ts-node's transpiler factory: the project's target, strict mode and class fields, as tsc would emit them. */
exports.create = ({ service }) => {
  const ts = require(service.projectLocalResolveHelper('typescript', true));
  const { target, useDefineForClassFields } = service.config.options;
  const options = {
    loader: 'ts',
    format: 'cjs',
    target: ts.ScriptTarget[target].toLowerCase(),
    // tsc writes "use strict" into every CommonJS file (alwaysStrict); esbuild writes none.
    banner: '"use strict";',
    sourcemap: 'external',
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: useDefineForClassFields ?? target >= ts.ScriptTarget.ES2022 } },
  };
  return {
    transpile(input, { fileName }) {
      const { code, map } = transformSync(input, { ...options, sourcefile: fileName });
      return { outputText: code, sourceMapText: map };
    },
  };
};
