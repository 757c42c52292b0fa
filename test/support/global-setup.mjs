// Starts dynalite and fauxqs once for the whole test run; test files create their own
// uniquely named tables and queues on them. Endpoints reach the test workers through env.
import { startEmulators } from '#twin/emulators';

export default async function globalSetup() {
  // The AWS SDK's own switch for its Node-version notice (SDK_NODE_VERSION_WARNING_SWITCH in
  // lambda/shared/runtime/node-warnings.ts): nine lines from every process that creates a client
  // on Node 20. Set here, before jest starts its workers, it reaches them and every process a test
  // starts; every other warning is still printed.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // aws-cdk-lib's built-in CloudFormation validation (a WebAssembly rule engine, about 10 s of CPU
  // to start in every process that synthesizes, then 1 to 2 s per synth) only prints warnings; the
  // tests synthesize in dozens of processes. test/lib/cloudformation-validate.test.ts runs it, and
  // asserts it finds nothing, on the construct's canonical templates.
  process.env.CDK_VALIDATION = 'false';
  const emulators = await startEmulators();
  globalThis.__EMULATORS__ = emulators;
  Object.assign(process.env, emulators.environment);
}
