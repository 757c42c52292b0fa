/**
 * The twin refuses what Lambda refuses at deploy: a function whose environment variables take
 * more than 4 KB (4,096 bytes of the JSON text of all of them) fails the twin's start with
 * Lambda's own message; one of exactly 4,096 bytes runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
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

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'template-twin-limits-'));
  outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: ASSEMBLY_METADATA_CONTEXT });
  stackWithEnvironment(app, 'AtLimit', LIMIT_BYTES);
  stackWithEnvironment(app, 'OverLimit', LIMIT_BYTES + 1);
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
