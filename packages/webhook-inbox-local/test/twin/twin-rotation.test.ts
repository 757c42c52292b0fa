/**
 * The twin runs the template's rotation schedules as CloudFormation creates them, and Secrets
 * Manager's reports of a failed rotation reach the inbox's alarm through the template's own rule,
 * queue and alarm. The rules checked, stated here: a schedule without `RotateImmediatelyOnUpdate:
 * false` rotates at once, and Secrets Manager reports a failed rotation as a CloudTrail service
 * event on the default bus (`aws.secretsmanager`, "AWS Service Event via CloudTrail", `RotationFailed`,
 * the secret's ARN in `additionalEventData.SecretId`); a schedule with it only tests the function,
 * and leaves the secret as it was. One provider (acme) rotates at deploy and its register function
 * refuses every secret; the other (github) keeps the default. Secrets Manager refuses to turn on a
 * rotation whose function's resource policy does not let it invoke the function: so does the twin.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { standardWebhooksHeaders, unixSeconds } from '../../src/providers/signing';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { startTemplateTwinProcess, TemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';

const REFUSING_REGISTER = `exports.handler = async () => { const error = new Error('acme refused the secret'); error.name = 'ProviderRefused'; throw error; };`;

let dir: string;
let twin: TemplateTwinProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'twin-rotation-'));
  const outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, 'Rotating');
  const registerFunction = new lambda.Function(stack, 'RegisterWithAcme', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline(REFUSING_REGISTER),
  });
  new WebhookInbox(stack, 'Inbox', {
    providers: [
      WebhookProvider.standardWebhooks({ name: 'acme', rotation: { registerFunction, rotateOnDeploy: true } }),
      WebhookProvider.github({ rotation: {} }),
    ],
  });
  app.synth();
  twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state'), timeScale: 60 });
}, 120_000);
afterAll(async () => {
  await twin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The JSON lines of a log of the twin's state folder; a function's log also holds the runtime's own
 * lines (`<time> <request id> ERROR Invoke Error …` for a failed invocation), as in CloudWatch Logs.
 */
const jsonLines = (file: string) =>
  readFileSync(join(dir, 'state', file), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);

test('a rotation that fails at deploy is reported on the default bus, kept in the inbox’s queue, and raises its alarm with the runbook section', async () => {
  const acme = twin.ready.inboxes[0].providers.find((provider) => provider.name === 'acme')!;
  const reported = await waitFor('Secrets Manager’s report of the failed rotation', () => {
    const found = jsonLines('events.log').filter((line) => line.type === 'event' && line.source === 'aws.secretsmanager');
    return found.length > 0 ? found : undefined;
  });
  expect(reported).toHaveLength(1);
  expect(reported[0]).toMatchObject({
    bus: 'default',
    detailType: 'AWS Service Event via CloudTrail',
    detail: { eventName: 'RotationFailed', errorMessage: expect.stringContaining('during setSecret step') },
  });
  const secretArn = reported[0].detail.additionalEventData.SecretId as string;
  expect(secretArn).toContain('Acme');
  // The template's rule put it in the rotation failure queue.
  const delivered = await waitFor('the rule’s delivery to the queue', () => {
    const found = jsonLines('events.log').filter((line) => line.type === 'rule-delivery' && line.kind === 'sqs');
    return found.length > 0 ? found : undefined;
  });
  expect(delivered.map((line) => [line.event.detail.additionalEventData.SecretId, line.error])).toEqual([[secretArn, undefined]]);

  const raised = await waitFor(
    'the rotation-failure alarm',
    () => jsonLines('notifications.log').find((line) => line.to === 'ALARM' && /RotationFailures/.test(line.alarmName)),
    90_000,
  );
  expect(raised.runbook).toMatch(/docs\/RUNBOOK\.md#rotation-failures$/);

  // Nothing was promoted: the secret the provider signs with still verifies.
  const body = Buffer.from(JSON.stringify({ type: 'invoice.paid', timestamp: new Date().toISOString(), data: { id: randomUUID() } }));
  const answer = await fetch(acme.url, { method: 'POST', headers: standardWebhooksHeaders(acme.secret, `msg_${randomUUID()}`, unixSeconds(), body), body });
  expect(answer.status).toBe(202);
}, 120_000);

test('a schedule that does not rotate at deploy only tests the function: no report, and no alarm for it', async () => {
  const reports = jsonLines('events.log').filter((line) => line.type === 'event' && line.source === 'aws.secretsmanager');
  expect(reports.map((line) => line.detail.additionalEventData.SecretId)).not.toContainEqual(expect.stringContaining('Github'));
  const rotator = jsonLines('logs/Rotating-Inbox-Rotator.log').filter((line) => line.message === 'rotation');
  expect(rotator.filter((line) => line.Provider === 'github').map((line) => `${line.step}:${line.outcome}`)).toEqual(['testSecret:configuration-tested']);
});

test('a schedule whose function Secrets Manager may not invoke is refused, with Secrets Manager’s message', async () => {
  const outdir = join(dir, 'unpermitted.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, 'Unpermitted');
  const secret = new secretsmanager.Secret(stack, 'Secret');
  const rotator = new lambda.Function(stack, 'Rotator', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline(REFUSING_REGISTER),
  });
  // The L1 alone: no invoke permission comes with it.
  new secretsmanager.CfnRotationSchedule(stack, 'Schedule', {
    secretId: secret.secretArn,
    rotationLambdaArn: rotator.functionArn,
    rotationRules: { scheduleExpression: 'rate(30 days)' },
  });
  app.synth();
  await expect(startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'unpermitted') })).rejects.toThrow(
    /stack Unpermitted, resource Schedule \(Schedule, AWS::SecretsManager::RotationSchedule\): failed to create: AccessDeniedException: Secrets Manager cannot invoke the specified Lambda function/,
  );
}, 60_000);
