/**
 * The twin runs an app as today's `cdk init app --language typescript` makes it: the project is
 * generated here by the installed CDK CLI, and the app is synthesized with the context its
 * `cdk.json` holds (every feature flag `cdk init` writes, and what the CLI adds so that resources
 * name their assets and construct paths), its assets staged as `cdk synth` stages them. The app
 * has two stacks, `Dev` and `Prod`, each with an inbox of the same construct id (`Inbox`) and the
 * user's own processing function (a NodejsFunction bundled from the project, writing each event it
 * is handed into the user's table). With those flags every function gets a log group named after
 * its `Ref`, and both stacks hold the same logical ids. The twin runs both stacks side by side, in
 * its own process (test/support/template-twin-process.ts): each inbox admits a signed delivery, the
 * user's function of that stack records it, and the IAM gateway refuses nothing.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { LOCAL_AWS } from '../../src/aws/local-aws';
import { unixSeconds } from '../../src/providers/signing';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { stripeHeaders } from '../../../../test/support/senders';
import { ReadyLine, ROOT, startTemplateTwinProcess, TemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';

const STAGES = ['Dev', 'Prod'] as const;
const INBOX = 'Inbox';
const FUNCTION = 'ProcessPayments';
const TABLE = 'Payments';
/** The project's folder name: `cdk init` names the project (its bin and stack files) after it. */
const PROJECT = 'payments';

/** The user's processing function, in the project's lib/: it writes each event it is handed into its stage's table. */
const HANDLER = `import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';

const client = new DynamoDBClient({});

export const handler = async (event: { detail: { eventId: string; provider: string } }) => {
  await client.send(
    new PutItemCommand({
      TableName: process.env.TABLE_NAME,
      Item: { id: { S: event.detail.eventId }, provider: { S: event.detail.provider }, stage: { S: process.env.STAGE! } },
    }),
  );
};
`;

let dir: string;
let project: string;
let outdir: string;

/** A new project, as the installed CLI's `cdk init app --language typescript` writes it (without installing its packages). */
function cdkInit(folder: string): void {
  mkdirSync(folder);
  const cli = require.resolve('aws-cdk/bin/cdk');
  const init = spawnSync(process.execPath, [cli, 'init', 'app', '--language', 'typescript', '--generate-only', '--no-notices'], {
    cwd: folder,
    env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`cdk init failed:\n${init.stdout}\n${init.stderr}`);
  // What `npm install` would give the project: the CDK, esbuild and the AWS SDK (this repository's), and a lock file.
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'));
  writeFileSync(join(folder, 'package-lock.json'), JSON.stringify({ name: PROJECT, lockfileVersion: 3, requires: true, packages: {} }));
  writeFileSync(join(folder, 'lib', 'process-payments.ts'), HANDLER);
}

/** The app, synthesized with what `cdk synth` hands it: the context of the project's cdk.json and the CLI's metadata flags. */
function synthesize(folder: string, into: string): void {
  const { context } = JSON.parse(readFileSync(join(folder, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  const app = new App({ outdir: into, context: { ...context, ...ASSEMBLY_METADATA_CONTEXT } });
  for (const stage of STAGES) {
    const stack = new Stack(app, stage);
    const table = new dynamodb.Table(stack, TABLE, { partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING } });
    const processPayments = new NodejsFunction(stack, FUNCTION, {
      entry: join(folder, 'lib', 'process-payments.ts'),
      projectRoot: folder,
      depsLockFilePath: join(folder, 'package-lock.json'),
      environment: { TABLE_NAME: table.tableName, STAGE: stage },
    });
    table.grantWriteData(processPayments);
    new WebhookInbox(stack, INBOX, { providers: [WebhookProvider.stripe()], processingFunction: processPayments });
  }
  app.synth();
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cdk-init-app-'));
  project = join(dir, PROJECT);
  outdir = join(project, 'cdk.out');
  cdkInit(project);
  synthesize(project, outdir);
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown>; Metadata?: Record<string, unknown> }> };

function templateOf(stage: string): Template {
  return JSON.parse(readFileSync(join(outdir, `${stage}.template.json`), 'utf8')) as Template;
}

test('the app holds what the flags of cdk init make: a log group named after its function, and the same logical ids in both stacks', () => {
  const { context } = JSON.parse(readFileSync(join(project, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  expect(context['@aws-cdk/aws-lambda:useCdkManagedLogGroup']).toBe(true);
  const [dev, prod] = STAGES.map(templateOf);
  const [functionId] = Object.entries(dev.Resources).find(([, resource]) => resource.Metadata?.['aws:cdk:path'] === `Dev/${FUNCTION}/Resource`)!;
  const logGroups = Object.values(dev.Resources).filter((resource) => resource.Type === 'AWS::Logs::LogGroup');
  expect(logGroups.map((resource) => resource.Properties?.LogGroupName)).toContainEqual({ 'Fn::Join': ['', ['/aws/lambda/', { Ref: functionId }]] });
  const alarms = (template: Template) => Object.keys(template.Resources).filter((id) => template.Resources[id].Type === 'AWS::CloudWatch::Alarm');
  expect(alarms(dev).length).toBeGreaterThan(0);
  expect(alarms(prod)).toEqual(alarms(dev));
});

describe('the twin runs both stacks', () => {
  let twin: TemplateTwinProcess;
  let dynamodbClient: DynamoDBClient;

  beforeAll(async () => {
    twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
    dynamodbClient = new DynamoDBClient({ ...LOCAL_AWS, endpoint: twin.ready.services.dynamodb });
  }, 120_000);

  afterAll(async () => {
    dynamodbClient?.destroy();
    await twin?.stop();
  });

  function inboxOf(stage: string): ReadyLine['inboxes'][number] {
    const inbox = twin.ready.inboxes.find((candidate) => candidate.stack === stage);
    if (!inbox) throw new Error(`no inbox of stack ${stage} among ${twin.ready.inboxes.map((candidate) => candidate.stack).join(', ')}`);
    return inbox;
  }

  /** The user's table of a stage: the twin names a table the template leaves unnamed `<stack>-<logical id>`, as CloudFormation prefixes it. */
  async function tableOf(stage: string): Promise<string> {
    const { TableNames = [] } = await dynamodbClient.send(new ListTablesCommand({}));
    const tables = TableNames.filter((name) => name.startsWith(`${stage}-${TABLE}`));
    expect(tables).toHaveLength(1);
    return tables[0];
  }

  test('each stack has its inbox, behind its own front door', () => {
    expect(twin.ready.inboxes.map((inbox) => inbox.stack).sort()).toEqual([...STAGES]);
    const [dev, prod] = STAGES.map(inboxOf);
    expect(dev.name).not.toBe(prod.name);
    const urls = [dev, prod].map((inbox) => inbox.providers.find((provider) => provider.name === 'stripe')!.url);
    expect(new URL(urls[0]).port).not.toBe(new URL(urls[1]).port);
  });

  test("a signed delivery to each inbox is accepted and recorded by that stack's own function, and no call is denied", async () => {
    const sent: Record<string, string> = {};
    for (const stage of STAGES) {
      const stripe = inboxOf(stage).providers.find((provider) => provider.name === 'stripe')!;
      const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
      const now = unixSeconds();
      const body = JSON.stringify({ id: eventId, object: 'event', type: 'payment_intent.succeeded', created: now });
      const response = await fetch(stripe.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...stripeHeaders(body, now, stripe.secret) },
        body,
      });
      expect({ stage, status: response.status }).toEqual({ stage, status: 202 });
      sent[stage] = eventId;
    }
    for (const stage of STAGES) {
      const table = await tableOf(stage);
      const item = await waitFor(`${stage}'s function to record its event`, async () => {
        const { Item } = await dynamodbClient.send(new GetItemCommand({ TableName: table, Key: { id: { S: sent[stage] } }, ConsistentRead: true }));
        return Item;
      });
      expect(item).toEqual({ id: { S: sent[stage] }, provider: { S: 'stripe' }, stage: { S: stage } });
    }
    const iam = await twin.iam();
    expect(iam.enforced).toBe(true);
    expect(iam.denials).toEqual([]);
    for (const stage of STAGES) expect(iam.evaluated[`${stage}/${FUNCTION}/ServiceRole`]).toBeGreaterThanOrEqual(1);
  });
});
