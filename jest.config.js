/** Tests run against emulators that `test/support/global-setup.mjs` starts once per run. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/packages/webhook-inbox-local/test'],
  testMatch: ['**/*.test.ts'],
  // TypeScript first: the jsii build leaves compiled .js beside lib/*.ts.
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.dev.json' }],
  },
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 60_000,
  maxWorkers: 2,
  // No file leaves a handle open after its teardown (checked with process.getActiveResourcesInfo),
  // but on a loaded 2-core machine a worker sometimes needs more than jest's 500 ms to exit.
  workerGracefulExitTimeout: 3_000,
};
