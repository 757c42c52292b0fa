/**
 * The repository's jest projects, the construct's (test/) and the twin's
 * (packages/webhook-inbox-local/test), and what they share: TypeScript through ts-jest, and the
 * emulators that global-setup.mjs starts once per run, however many projects run (jest runs one
 * global setup per module path).
 */
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');

/** A project whose tests are the `*.test.ts` files under `<rootDir>/test`, type-checked with `tsconfig`. */
function jestProject(rootDir, displayName, tsconfig = join(ROOT, 'tsconfig.dev.json')) {
  return {
    displayName,
    rootDir,
    testEnvironment: 'node',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.test.ts'],
    // TypeScript first: the jsii build leaves compiled .js beside lib/*.ts.
    moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
    transform: {
      '^.+\\.ts$': ['ts-jest', { tsconfig }],
    },
    globalSetup: join(__dirname, 'global-setup.mjs'),
    globalTeardown: join(__dirname, 'global-teardown.mjs'),
  };
}

const TWIN = join(ROOT, 'packages', 'webhook-inbox-local');

const PROJECTS = { construct: jestProject(ROOT, 'construct'), twin: jestProject(TWIN, 'twin', join(TWIN, 'tsconfig.json')) };

/** How a run goes, whichever projects it runs (jest reads them from the configuration it starts with). */
const RUN_SETTINGS = {
  testTimeout: 60_000,
  maxWorkers: 2,
  // No file leaves a handle open after its teardown (checked with process.getActiveResourcesInfo),
  // but on a loaded 2-core machine a worker sometimes needs more than jest's 500 ms to exit.
  workerGracefulExitTimeout: 3_000,
};

module.exports = { PROJECTS, RUN_SETTINGS };
