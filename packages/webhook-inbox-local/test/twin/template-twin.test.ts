/**
 * The twin runs an app's synthesized template with each function under its own role's policy:
 * a processing function that reads the inbox table without a grant is refused as AWS refuses it,
 * and the same app with `grantReadData` is allowed. The app is built here, in process, as a
 * consumer's would be; the twin runs it in its own process (test/support/template-twin-process.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../../src/aws/local-aws';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import {
  functionLogLines,
  IamRecord,
  ReadyLine,
  postAnswerlineResult,
  startTemplateTwinProcess,
  waitFor,
} from '../../../../test/support/template-twin-process';

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
async function runOneDelivery(grantRead: boolean): Promise<{
  ready: ReadyLine;
  logged: string;
  iam: IamRecord;
  printed: string;
  console: { iam?: { enforced: boolean; deniedByFunction: Record<string, number> } };
}> {
  const dir = mkdtempSync(join(tmpdir(), 'template-twin-'));
  const outdir = join(dir, 'cdk.out');
  synthesizeApp(outdir, grantRead);
  const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
  try {
    const taskId = `tsk_${randomUUID().slice(0, 8)}`;
    const response = await postAnswerlineResult(twin.ready, taskId);
    expect(response.status).toBe(202);
    const logged = await waitFor("the processing function's GetItem", () =>
      functionLogLines(twin.ready.logs, STACK, READER).find((line) => line.startsWith('GetItem ')),
    );
    const console = (await (await fetch(`${twin.ready.console}/api/snapshot`)).json()) as {
      iam?: { enforced: boolean; deniedByFunction: Record<string, number> };
    };
    return { ready: twin.ready, logged, iam: await twin.iam(), printed: twin.printed(), console };
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
    expect(iam.denials).toEqual([expect.objectContaining({ principal: READER_ROLE, operation: 'GetItem', action: 'dynamodb:GetItem', resource: tableArn })]);
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

  test('without the grant, the running twin prints the denial as CloudTrail records it, and its console counts it', async () => {
    const { ready, printed, console } = await runOneDelivery(false);
    const tableArn = `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${ready.inboxes[0].tables.inbox}`;
    const lines = printed.split('\n').filter((line) => line.startsWith('denied: '));
    expect(lines).toHaveLength(1);
    const [, record] = /^denied: \S+ dynamodb:GetItem on \S+ (\{.*\})$/.exec(lines[0])!;
    expect(lines[0].startsWith(`denied: ${STACK}/${READER} dynamodb:GetItem on ${tableArn} `)).toBe(true);
    expect(JSON.parse(record)).toEqual({
      eventTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      eventSource: 'dynamodb.amazonaws.com',
      eventName: 'GetItem',
      awsRegion: LOCAL_REGION,
      userIdentity: {
        type: 'AssumedRole',
        arn: expect.stringMatching(new RegExp(`^arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/[\\w+=,.@-]+/${READER_ROLE}$`)),
        sessionContext: { sessionIssuer: { type: 'Role', arn: expect.stringMatching(new RegExp(`^arn:aws:iam::${LOCAL_ACCOUNT}:role/`)) } },
      },
      errorCode: 'AccessDenied',
      errorMessage: expect.stringContaining('is not authorized to perform: dynamodb:GetItem'),
      resources: [{ ARN: tableArn }],
    });
    expect(console.iam).toEqual({ enforced: true, deniedByFunction: { [`${STACK}/${READER}`]: 1 } });
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

describe('a grant removed from the template', () => {
  test("without UpdateItem on the inbox table, the processor's claim is denied, printed as it happens and counted on the console", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'template-twin-'));
    const outdir = join(dir, 'cdk.out');
    synthesizeApp(outdir, true);
    // The processor's role loses dynamodb:UpdateItem, as an edited policy would lose it.
    const templatePath = join(outdir, `${STACK}.template.json`);
    const template = JSON.parse(readFileSync(templatePath, 'utf8')) as { Resources: Record<string, { Type: string; Properties: any }> };
    let removed = 0;
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy' || !logicalId.startsWith('AnswersProcessorRole')) continue;
      for (const statement of resource.Properties.PolicyDocument.Statement) {
        const actions: string[] = [statement.Action].flat();
        if (!actions.includes('dynamodb:UpdateItem')) continue;
        statement.Action = actions.filter((action) => action !== 'dynamodb:UpdateItem');
        removed++;
      }
    }
    expect(removed).toBeGreaterThan(0);
    writeFileSync(templatePath, JSON.stringify(template));
    const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
    try {
      const [inbox] = twin.ready.inboxes;
      expect((await postAnswerlineResult(twin.ready)).status).toBe(202);
      const tableArn = `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${inbox.tables.inbox}`;
      const line = await waitFor('the printed denial', () =>
        twin
          .printed()
          .split('\n')
          .find((candidate) => candidate.startsWith(`denied: ${STACK}/Answers/Processor dynamodb:UpdateItem on ${tableArn} {`)),
      );
      expect(JSON.parse(line.slice(line.indexOf('{')))).toMatchObject({
        eventSource: 'dynamodb.amazonaws.com',
        eventName: 'UpdateItem',
        errorCode: 'AccessDenied',
        resources: [{ ARN: tableArn }],
      });
      const snapshot = (await (await fetch(`${twin.ready.console}/api/snapshot`)).json()) as {
        iam: { deniedByFunction: Record<string, number> };
        inboxes: { rowsByStatus: Record<string, number> }[];
      };
      expect(snapshot.iam.deniedByFunction[`${STACK}/Answers/Processor`]).toBeGreaterThanOrEqual(1);
      // The claim never happened: the row waits, RECEIVED, for the grant to come back.
      expect(snapshot.inboxes[0].rowsByStatus).toEqual({ RECEIVED: 1 });
    } finally {
      await twin.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
