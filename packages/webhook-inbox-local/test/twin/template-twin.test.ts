/**
 * The twin runs an app's synthesized template with each function under its own role's policy:
 * a processing function that reads the inbox table without a grant is refused as AWS refuses it,
 * and the same app with `grantReadData` is allowed. The app is built here, in process, as a
 * consumer's would be; the twin runs it in its own process (test/support/template-twin-process.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../../src/aws/local-aws';
import { standardWebhooksHeaders, unixSeconds } from '../../src/providers/signing';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { functionLogLines, IamRecord, ReadyLine, startTemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';

const STACK = 'MissingGrant';
const READER = 'InboxReader';
const READER_ROLE = `${STACK}/${READER}/ServiceRole`;

/**
 * The processing function: reads one row of the inbox table and logs what the SDK answered,
 * without failing (so it runs once). Its `require` of the SDK is resolved as in Lambda, where the
 * runtime provides it: inline code is written to the twin's state folder, outside any
 * node_modules tree, and the twin gives each function the SDK on its NODE_PATH.
 */
const READER_CODE = `
const { DynamoDBClient, GetItemCommand } = require('@aws-sdk/client-dynamodb');
const client = new DynamoDBClient({});
exports.handler = async () => {
  try {
    await client.send(new GetItemCommand({ TableName: process.env.INBOX_TABLE, Key: { pk: { S: 'probe' }, sk: { S: 'delivery' } } }));
    console.log('GetItem allowed');
  } catch (error) {
    console.log('GetItem refused: ' + error.name + ': ' + error.message);
  }
  return {};
};
`;

/** A consumer's app: an inbox whose processing function reads the inbox table, granted or not. */
function synthesizeApp(outdir: string, grantRead: boolean): void {
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, STACK);
  const reader = new lambda.Function(stack, READER, {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline(READER_CODE),
  });
  const inbox = new WebhookInbox(stack, 'Answers', { providers: [WebhookProvider.answerline()], processingFunction: reader });
  reader.addEnvironment('INBOX_TABLE', inbox.inboxTable.tableName);
  if (grantRead) inbox.inboxTable.grantReadData(reader);
  app.synth();
}

/** Runs the app, sends one signed Answerline result, waits for the processing function's line; what it logged and what the gateway judged. */
async function runOneDelivery(grantRead: boolean): Promise<{ ready: ReadyLine; logged: string; iam: IamRecord }> {
  const dir = mkdtempSync(join(tmpdir(), 'template-twin-'));
  const outdir = join(dir, 'cdk.out');
  synthesizeApp(outdir, grantRead);
  const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
  try {
    const [inbox] = twin.ready.inboxes;
    const answerline = inbox.providers.find((provider) => provider.name === 'answerline')!;
    const taskId = `tsk_${randomUUID().slice(0, 8)}`;
    const body = JSON.stringify({
      task: { id: taskId, status: 'COMPLETED', idempotencyKey: 'report-1', createdAt: new Date().toISOString() },
      response: { result: { answer: 'forty-two' } },
    });
    const headers = standardWebhooksHeaders(answerline.secret, `msg_${randomUUID()}`, unixSeconds(), Buffer.from(body));
    const response = await fetch(answerline.url, { method: 'POST', headers, body });
    expect(response.status).toBe(202);
    const logged = await waitFor("the processing function's GetItem", () =>
      functionLogLines(twin.ready.logs, STACK, READER).find((line) => line.startsWith('GetItem ')),
    );
    return { ready: twin.ready, logged, iam: await twin.iam() };
  } finally {
    await twin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a template with a processing function', () => {
  test('without a grant on the inbox table, its GetItem is denied as AWS denies it, counted under that function', async () => {
    const { ready, logged, iam } = await runOneDelivery(false);
    const tableArn = `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${ready.inboxes[0].tables.inbox}`;
    expect(iam.enforced).toBe(true);
    expect(iam.denials).toEqual([
      { principal: READER_ROLE, operation: 'GetItem', action: 'dynamodb:GetItem', resource: tableArn, message: expect.any(String) },
    ]);
    const [denial] = iam.denials;
    expect(denial.message).toMatch(
      new RegExp(
        `^User: arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/[\\w+=,.@-]+/${READER_ROLE} is not authorized to perform: dynamodb:GetItem on resource: ${tableArn} because no identity-based policy allows the dynamodb:GetItem action$`,
      ),
    );
    // The function's SDK raised what it raises in AWS, with the gateway's message.
    expect(logged).toBe(`GetItem refused: AccessDeniedException: ${denial.message}`);
    expect(iam.deniedByFunction).toEqual({ [`${STACK}/${READER}`]: 1 });
  });

  test('with inboxTable.grantReadData, the same GetItem is allowed', async () => {
    const { logged, iam } = await runOneDelivery(true);
    expect(logged).toBe('GetItem allowed');
    expect(iam.enforced).toBe(true);
    // Judged, not skipped: the reader's call went through the gateway and was allowed.
    expect(iam.evaluated[READER_ROLE]).toBeGreaterThanOrEqual(1);
    expect(iam.denials).toEqual([]);
    expect(iam.deniedByFunction).toEqual({});
  });
});
