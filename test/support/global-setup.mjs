// Starts dynalite and fauxqs once for the whole test run; test files create their own
// uniquely named tables and queues on them. Endpoints reach the test workers through env.
import { startEmulators } from '../../local/emulators.mjs';

export default async function globalSetup() {
  const emulators = await startEmulators();
  globalThis.__EMULATORS__ = emulators;
  Object.assign(process.env, emulators.environment);
}
