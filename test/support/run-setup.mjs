// What every test run sets up once, whichever of its projects run and whether or not they need the
// emulators (global-setup.mjs adds those): the environment jest's workers and every process they
// start inherit, and a temporary folder of the run's own, removed at its end (run-teardown.mjs),
// in which each test file gets a folder of its own (test-environment.cjs).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jestProject from './jest-project.cjs';

const { RUN_TMPDIR } = jestProject;

export function prepareRun() {
  if (process.env[RUN_TMPDIR]) return;
  // The AWS SDK's own switch for its Node-version notice (SDK_NODE_VERSION_WARNING_SWITCH in
  // lambda/shared/runtime/node-warnings.ts): nine lines from every process that creates a client
  // on Node 20. Every other warning is still printed.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // aws-cdk-lib's built-in CloudFormation validation (a WebAssembly rule engine, about 10 s of CPU
  // to start in every process that synthesizes, then 1 to 2 s per synth) only prints warnings; the
  // tests synthesize in dozens of processes. test/lib/cloudformation-validate.test.ts runs it, and
  // asserts it finds nothing, on the construct's canonical templates.
  process.env.CDK_VALIDATION = 'false';
  const folder = mkdtempSync(join(tmpdir(), 'webhook-inbox-tests-'));
  process.env[RUN_TMPDIR] = folder;
  process.env.TMPDIR = folder;
}

export default async function runSetup() {
  prepareRun();
}
