/**
 * A processing function's unhandled error, in the twin as in AWS: Lambda's Node.js runtime writes
 * it to the function's log group (`ERROR	Invoke Error 	{"errorType":…,"errorMessage":…,"stack":[…]}`)
 * and reports the error's own type (not the twin's wrapper), which the processor records in the row's `lastError`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { functionLogLines, postAnswerlineResult, startTemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';

const STACK = 'FailingEffects';
const HANDLER = 'Handler';

/** Runs an app whose processing function is `code`, sends it one result; the function's log and the row's lastError once recorded. */
async function runFailingFunction(code: string): Promise<{ invokeErrors: Record<string, unknown>[]; lastError: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'function-errors-'));
  const outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, STACK);
  const handler = new lambda.Function(stack, HANDLER, { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline(code) });
  new WebhookInbox(stack, 'Answers', { providers: [WebhookProvider.answerline()], processingFunction: handler });
  app.synth();
  const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
  const dynamodb = new DynamoDBClient({
    endpoint: twin.ready.services.dynamodb,
    region: twin.ready.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const [inbox] = twin.ready.inboxes;
    const response = await postAnswerlineResult(twin.ready);
    expect(response.status).toBe(202);
    const lastError = await waitFor('the row to record the processing error', async () => {
      const { Items = [] } = await dynamodb.send(new ScanCommand({ TableName: inbox.tables.inbox }));
      return Items.map((item) => item.lastError?.S).find((text) => text !== undefined);
    });
    const invokeErrors = functionLogLines(twin.ready.logs, STACK, HANDLER)
      .map((line) => /^\S+\t[\w-]+\tERROR\tInvoke Error \t(\{.*\})$/.exec(line)?.[1])
      .filter((document): document is string => document !== undefined)
      .map((document) => JSON.parse(document) as Record<string, unknown>);
    return { invokeErrors, lastError };
  } finally {
    dynamodb.destroy();
    await twin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a thrown Error is written to the function's log with its stack, and recorded as Error", async () => {
  const { invokeErrors, lastError } = await runFailingFunction(`exports.handler = async () => { throw new Error('cannot handle charge.poison'); };`);
  expect(invokeErrors.length).toBeGreaterThanOrEqual(1);
  expect(invokeErrors[0]).toEqual({
    errorType: 'Error',
    errorMessage: 'cannot handle charge.poison',
    stack: expect.arrayContaining(['Error: cannot handle charge.poison', expect.stringMatching(/^ {4}at .*index\.js/)]),
  });
  // The processor records the function's errorType, as Lambda reports it.
  expect(lastError).toBe('EffectDispatchError: the processing function failed (Unhandled: Error)');
});

test("a failed fetch is written to the function's log as the TypeError it is, and recorded as TypeError", async () => {
  // Port 1 on the loopback refuses the connection.
  const { invokeErrors, lastError } = await runFailingFunction(`exports.handler = async () => { await fetch('http://127.0.0.1:1/'); };`);
  expect(invokeErrors[0]).toEqual({ errorType: 'TypeError', errorMessage: 'fetch failed', stack: expect.arrayContaining(['TypeError: fetch failed']) });
  expect(lastError).toBe('EffectDispatchError: the processing function failed (Unhandled: TypeError)');
});
