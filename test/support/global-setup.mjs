// Starts dynalite and fauxqs once for the whole test run, for the projects whose tests use them;
// test files create their own uniquely named tables and queues on them. Endpoints reach the test
// workers through env.
import { startEmulators } from '#twin/emulators';
import { prepareRun } from './run-setup.mjs';

export default async function globalSetup() {
  prepareRun();
  if (globalThis.__EMULATORS__) return;
  const emulators = await startEmulators();
  globalThis.__EMULATORS__ = emulators;
  Object.assign(process.env, emulators.environment);
}
