/**
 * The repository's jest projects, one per test layer, and what they share: TypeScript transpiled
 * file by file with esbuild (scripts/transpile.cjs; `npm run typecheck`, part of the build,
 * type-checks the tests with the rest), a
 * temporary folder per test file (test-environment.cjs), and the run's setup (run-setup.mjs), with
 * the emulators (global-setup.mjs) for the layers that use them: they start only when such a
 * layer runs, once however many do (jest runs one global setup per module path).
 *
 * A test file belongs to the first layer whose paths hold it, so every file under test/ and
 * packages/webhook-inbox-local/test is in exactly one layer.
 */
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const TWIN = join(ROOT, 'packages', 'webhook-inbox-local');

/** The variable naming the run's temporary folder (run-setup.mjs), in which each test file gets its own. */
const RUN_TMPDIR = 'WEBHOOK_INBOX_TEST_RUN_TMPDIR';

/** The layers, in the order a test file is given to one: each is the files under its paths (folders, or test files) no layer before took. */
const LAYERS = [
  {
    name: 'unit',
    // Pure tests: templates, parsers, rules, pure functions. No emulator, no twin, no browser.
    emulators: false,
    paths: [
      'test/lib',
      'test/lambda/shared/runtime',
      'test/lambda/processor/breaker.test.ts',
      'test/lambda/shared/providers/delivery-filter.test.ts',
      'test/lambda/shared/providers/registry.test.ts',
      'test/lambda/shared/providers/sample-secrets.test.ts',
      'test/lambda/shared/stores/inbox/sweep.test.ts',
      'test/lambda/shared/winner-order.test.ts',
      'test/cli/config.test.ts',
      'test/cli/events.test.ts',
      'test/package/bundle-inputs.test.ts',
      'test/package/transpile.test.ts',
      'packages/webhook-inbox-local/test/aws/apigateway/account-settings.test.ts',
      'packages/webhook-inbox-local/test/aws/apigateway/http-api.test.ts',
      'packages/webhook-inbox-local/test/aws/cloudformation',
      'packages/webhook-inbox-local/test/aws/cloudwatch',
      'packages/webhook-inbox-local/test/aws/eventbridge',
      'packages/webhook-inbox-local/test/aws/loopback.test.ts',
      'packages/webhook-inbox-local/test/providers',
      'packages/webhook-inbox-local/test/chaos/audit.test.ts',
      'packages/webhook-inbox-local/test/twin/console/dashboard-widgets.test.ts',
    ],
  },
  // The documents' examples and links, and the package as it is published.
  { name: 'docs-package', emulators: true, paths: ['test/docs', 'test/package', 'test/client'] },
  // The local twin's package: the twin running templates, its command, the fault-injection run.
  { name: 'twin', emulators: true, paths: ['packages/webhook-inbox-local/test'] },
  // The handlers, the ops CLI, the fuzzers and the bench against the emulators, under IAM from the template.
  { name: 'integration', emulators: true, paths: ['test'] },
];

/**
 * The order the layers' files start in when jest has no durations for them (test-sequencer.cjs):
 * those that wait on processes, timers and queues first, the pure tests last.
 */
const START_ORDER = ['twin', 'integration', 'docs-package', 'unit'];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regular expression matching every test file under `paths`. */
function testsUnder(paths) {
  return `^(${paths.map((path) => escape(join(ROOT, path)) + (path.endsWith('.test.ts') ? '' : '/.*\\.test\\.ts')).join('|')})$`;
}

/** The folders jest looks for tests of `paths` in. */
const rootsOf = (paths) => [...new Set(paths.map((path) => (path.startsWith('packages/') ? join(TWIN, 'test') : join(ROOT, 'test'))))];

/** What every project shares. */
function project(displayName, emulators) {
  return {
    displayName,
    rootDir: ROOT,
    testEnvironment: join(__dirname, 'test-environment.cjs'),
    // TypeScript first: the jsii build leaves compiled .js beside lib/*.ts.
    moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
    transform: {
      '^.+\\.ts$': [join(ROOT, 'scripts', 'transpile.cjs'), { tsconfig: join(ROOT, 'tsconfig.dev.json') }],
    },
    globalSetup: join(__dirname, emulators ? 'global-setup.mjs' : 'run-setup.mjs'),
    globalTeardown: join(__dirname, emulators ? 'global-teardown.mjs' : 'run-teardown.mjs'),
  };
}

/** The layers' projects, by name. */
const PROJECTS = Object.fromEntries(
  LAYERS.map((layer, index) => [
    layer.name,
    {
      ...project(layer.name, layer.emulators),
      roots: rootsOf(layer.paths),
      testRegex: testsUnder(layer.paths),
      testPathIgnorePatterns: ['/node_modules/', ...(index > 0 ? [testsUnder(LAYERS.slice(0, index).flatMap((earlier) => earlier.paths))] : [])],
    },
  ]),
);

/** The twin package's own tests, every layer of them, as `npm test` runs them in its folder. */
const TWIN_PACKAGE = { ...project('twin', true), roots: [join(TWIN, 'test')], testMatch: ['**/*.test.ts'] };

/** How a run goes, whichever projects it runs (jest reads them from the configuration it starts with). */
const RUN_SETTINGS = {
  testTimeout: 60_000,
  // One worker more than the machine's two cores: the twin's files and the fault-injection run wait
  // on timers and child processes for much of their time (the fault-injection run: about 245 s of
  // wall for 105 CPU-seconds), which a third worker fills. A fourth gained no more than the
  // machine's variance on fresh clones (jest 558 and 591 s, against 578 and 614 s with three), and
  // its extra load pushed timing-bound tests to their limits.
  maxWorkers: 3,
  testSequencer: join(__dirname, 'test-sequencer.cjs'),
  // No file leaves a handle open after its teardown (checked with process.getActiveResourcesInfo),
  // but on a loaded 2-core machine a worker sometimes needs more than jest's 500 ms to exit.
  workerGracefulExitTimeout: 3_000,
};

module.exports = { LAYERS, PROJECTS, TWIN_PACKAGE, RUN_SETTINGS, RUN_TMPDIR, START_ORDER };
