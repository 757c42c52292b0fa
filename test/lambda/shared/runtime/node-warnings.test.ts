/**
 * The AWS SDK's Node-version notice is off in the tests and in what the CLI and the twin start,
 * through the SDK's own switch, and every other warning is still printed. Each case is a new Node
 * process that creates an SDK client and emits a warning of its own.
 */
import { spawnSync } from 'node:child_process';
import { SDK_NODE_VERSION_WARNING_SWITCH } from '../../../../lambda/shared/runtime/node-warnings';

/** The SDK emits its notice on Node releases older than this one. */
const SDK_SUPPORTED_NODE_MAJOR = 22;
const nodeMajor = Number(process.versions.node.split('.')[0]);

const CLIENT_AND_ANOTHER_WARNING = [
  `const { DynamoDBClient } = require(${JSON.stringify(require.resolve('@aws-sdk/client-dynamodb'))});`,
  "new DynamoDBClient({ region: 'us-east-1' });",
  "process.emitWarning('a warning of our own', 'OwnWarning');",
].join('\n');

/** The stderr of a process that creates an SDK client and emits another warning. */
function stderrOf(env: NodeJS.ProcessEnv): string {
  const run = spawnSync(process.execPath, ['-e', CLIENT_AND_ANOTHER_WARNING], { encoding: 'utf8', env });
  expect(run.status).toBe(0);
  return run.stderr;
}

test('the test run has the switch on: set before jest starts its workers, every process a test starts inherits it', () => {
  expect(process.env[SDK_NODE_VERSION_WARNING_SWITCH]).toBe('true');
});

test('with the switch on, the SDK prints no notice and another warning is printed as Node prints it', () => {
  const stderr = stderrOf({ ...process.env, [SDK_NODE_VERSION_WARNING_SWITCH]: 'true' });
  expect(stderr).not.toContain('NodeVersionSupportWarning');
  expect(stderr).toMatch(/\(node:\d+\) OwnWarning: a warning of our own/);
});

test('without the switch, the SDK prints its notice on Node releases it will stop supporting (so the switch is what hides it)', () => {
  const env = { ...process.env };
  delete env[SDK_NODE_VERSION_WARNING_SWITCH];
  const stderr = stderrOf(env);
  if (nodeMajor < SDK_SUPPORTED_NODE_MAJOR) expect(stderr).toContain('NodeVersionSupportWarning');
  else expect(stderr).not.toContain('NodeVersionSupportWarning');
  expect(stderr).toContain('OwnWarning: a warning of our own');
});
