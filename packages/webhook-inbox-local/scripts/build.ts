/**
 * Bundles the command (src/cli.ts) with the twin it runs (this package's src/, and the contract
 * and runtime code of the repository's lib/ and lambda/ it shares) into dist/cli.js, with esbuild
 * and the settings of the construct's own bundles (scripts/bundle-options.ts); the repository's
 * `npm run build` runs it too, so the bin runs from a checkout. The package's dependencies
 * stay outside the bundle, required at run time from node_modules; so does the optional IAM
 * simulator (AGPL-3.0), which must never be bundled. No package is bundled at all: the bundle
 * keeps no legal comments, so a package's license notice stays with it in node_modules. Beside
 * the bundle: the Lambda execution environment the twin forks and the ESM module that starts the
 * emulators.
 */
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { build, Plugin } from 'esbuild';
import { bundleOptions, ROOT } from '../../../scripts/bundle-options';

const PACKAGE = join(__dirname, '..');
const DIST = join(PACKAGE, 'dist');
const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
/** What the bundle may require: the package's dependencies and peers. */
const DECLARED = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)];
/** Never read, let alone bundled; a bundle that still requires them fails the check against DECLARED. */
const LEFT_OUT = ['aws-cdk-lib', 'constructs'];

/** Inputs that must never be in the bundle: any package (the copyleft simulator above all; a dependency is declared instead), the tests. */
const NEVER_BUNDLED = [/(^|\/)node_modules\//, /^test\//];

/** Files the bundle loads from its own folder at run time, by their path in the repository. */
const BESIDE_THE_BUNDLE = ['packages/webhook-inbox-local/src/aws/lambda/worker.cjs', 'packages/webhook-inbox-local/src/aws/emulators.mjs'];

/**
 * The emulators are an ES module (fauxqs is ESM-only) imported at run time: kept as a file beside
 * the bundle, and the import pointed at it.
 */
/**
 * Modules that nothing runs in when they are imported: those that only build CDK apps (the
 * construct, the twin's own app and its template), and those only the repository's edition of the
 * command runs (the fault-injection run, the demo, the simulated providers and the app that
 * records their submissions).
 */
const IMPORT_TIME_PURE = [
  /^lib\//,
  /^packages\/webhook-inbox-local\/src\/twin\/(app|inbox-template|demo)\.ts$/,
  /^packages\/webhook-inbox-local\/src\/(chaos|providers)\//,
  /^client\//,
];
const RESOLVING = Symbol('resolving');

/**
 * Declares those modules free of import-time side effects, so that esbuild leaves out what the
 * command never calls (synthesizing the twin's own app, the repository's edition), and with it
 * aws-cdk-lib.
 */
const cdkCodeLeftOut: Plugin = {
  name: 'cdk-code-left-out',
  setup(plugins) {
    plugins.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.pluginData === RESOLVING) return undefined;
      const resolved = await plugins.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: RESOLVING });
      if (resolved.errors.length > 0 || !IMPORT_TIME_PURE.some((pattern) => pattern.test(relative(ROOT, resolved.path)))) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

const emulatorsBesideTheBundle: Plugin = {
  name: 'emulators-beside-the-bundle',
  setup(plugins) {
    plugins.onResolve({ filter: /\/emulators\.mjs$/ }, () => ({ path: './emulators.mjs', external: true }));
  },
};

async function main(): Promise<void> {
  rmSync(DIST, { recursive: true, force: true });
  const outfile = relative(ROOT, join(DIST, 'cli.js'));
  const result = await build(
    bundleOptions(relative(ROOT, join(PACKAGE, 'src', 'cli.ts')), outfile, {
      // The developer's machine: the package's minimum Node.js.
      target: 'node20',
      minify: false,
      // The package's edition of the command (src/cli.ts): what only the repository's runs is left out.
      define: { WEBHOOK_INBOX_LOCAL_PACKAGE: 'true' },
      external: [...DECLARED, ...LEFT_OUT],
      plugins: [emulatorsBesideTheBundle, cdkCodeLeftOut],
    }),
  );
  const forbidden = Object.keys(result.metafile!.inputs).filter((input) => NEVER_BUNDLED.some((pattern) => pattern.test(input)));
  if (forbidden.length > 0) throw new Error(`${outfile} would bundle what it must not: ${forbidden.slice(0, 5).join(', ')}`);
  const required = new Set(
    Object.values(result.metafile!.outputs).flatMap((output) => output.imports.filter((entry) => entry.external).map((entry) => entry.path)),
  );
  const packages = [...required].filter((path) => !isBuiltin(path) && !path.startsWith('./'));
  const undeclared = packages.filter((path) => !DECLARED.some((name) => path === name || path.startsWith(`${name}/`)));
  if (undeclared.length > 0) throw new Error(`${outfile} requires what package.json does not declare: ${undeclared.join(', ')}`);
  for (const file of BESIDE_THE_BUNDLE) copyFileSync(join(ROOT, file), join(DIST, file.slice(file.lastIndexOf('/') + 1)));
  const bytes = Object.values(result.metafile!.outputs).find((output) => output.entryPoint)?.bytes ?? 0;
  console.log(`bundled ${outfile}: ${(bytes / 1024).toFixed(0)} KiB, requiring ${packages.join(', ')}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
