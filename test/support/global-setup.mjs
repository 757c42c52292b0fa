// Starts dynalite and fauxqs once for the whole test run; test files create their own
// uniquely named tables and queues on them. Endpoints reach the test workers through env.
import { startEmulators } from '#twin/emulators';

export default async function globalSetup() {
  // The AWS SDK's own switch for its Node-version notice (SDK_NODE_VERSION_WARNING_SWITCH in
  // lambda/shared/runtime/node-warnings.ts): nine lines from every process that creates a client
  // on Node 20. Set here, before jest starts its workers, it reaches them and every process a test
  // starts; every other warning is still printed.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const emulators = await startEmulators();
  globalThis.__EMULATORS__ = emulators;
  Object.assign(process.env, emulators.environment);
}
