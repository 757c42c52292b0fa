/**
 * The twin refuses what AWS refuses at deploy: a function whose environment variables take more
 * than 4 KB (4,096 bytes of the JSON text of all of them) fails the twin's start with Lambda's own
 * message, and a name longer than its service accepts (64 characters for a function or a role, 80
 * for a queue) with CloudFormation's; at exactly the limits the stack runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Aws, Fn, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { startTemplateTwinProcess } from '../../../../test/support/template-twin-process';

const LIMIT_BYTES = 4096;

let dir: string;
let outdir: string;

/** A stack of one function whose environment, as Lambda measures it, is `bytes` long. */
function stackWithEnvironment(app: App, name: string, bytes: number): void {
  const stack = new Stack(app, name);
  const measured = (value: string) => Buffer.byteLength(JSON.stringify({ PADDING: value }), 'utf8');
  const padding = 'p'.repeat(bytes - measured(''));
  expect(measured(padding)).toBe(bytes);
  new lambda.Function(stack, 'Handler', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler = async () => "ok";'),
    environment: { PADDING: padding },
  });
}

/**
 * A stack of a function, its role and a queue whose names run `extra` characters past each
 * service's limit: built from the stack's name, as CDK cannot check at synth.
 */
function stackWithNames(app: App, name: string, extra: number): void {
  const stack = new Stack(app, name);
  const named = (length: number, letter: string) => Fn.join('-', [Aws.STACK_NAME, letter.repeat(length + extra - name.length - 1)]);
  const role = new iam.Role(stack, 'Role', { roleName: named(64, 'r'), assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  new lambda.Function(stack, 'Handler', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler = async () => "ok";'),
    functionName: named(64, 'f'),
    role,
  });
  new sqs.Queue(stack, 'Queue', { queueName: named(80, 'q') });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'template-twin-limits-'));
  outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: ASSEMBLY_METADATA_CONTEXT });
  stackWithEnvironment(app, 'AtLimit', LIMIT_BYTES);
  stackWithEnvironment(app, 'OverLimit', LIMIT_BYTES + 1);
  stackWithNames(app, 'NamesAtLimit', 0);
  stackWithNames(app, 'NamesOverLimit', 1);
  app.synth();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a function whose environment takes 4,097 bytes is refused with Lambda’s message; one of 4,096 bytes runs', async () => {
  await expect(startTemplateTwinProcess({ app: outdir, stacks: ['OverLimit'], port: 0, stateDir: join(dir, 'over') })).rejects.toThrow(
    /stack OverLimit, resource Handler\w+ \(Handler, AWS::Lambda::Function\), property Environment\.Variables: Lambda was unable to configure your environment variables because the environment variables you have provided exceeded the 4KB limit\. String measured: \{"PADDING":"p{4083}"\}/,
  );
  const twin = await startTemplateTwinProcess({ app: outdir, stacks: ['AtLimit'], port: 0, stateDir: join(dir, 'at') });
  await twin.stop();
}, 120_000);

test('a name one character past its service’s limit is refused with CloudFormation’s message; names at the limits run', async () => {
  await expect(startTemplateTwinProcess({ app: outdir, stacks: ['NamesOverLimit'], port: 0, stateDir: join(dir, 'names-over') })).rejects.toThrow(
    /stack NamesOverLimit, resource \w+ \((Role|Handler|Queue), AWS::(IAM::Role|Lambda::Function|SQS::Queue)\), property (RoleName|FunctionName|QueueName): Properties validation failed for resource \w+ with message: #\/(RoleName|FunctionName|QueueName): expected maxLength: (64|80), actual: (65|81)/,
  );
  const twin = await startTemplateTwinProcess({ app: outdir, stacks: ['NamesAtLimit'], port: 0, stateDir: join(dir, 'names-at') });
  await twin.stop();
}, 120_000);
