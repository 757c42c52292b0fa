/**
 * The shipped CLI (`assets/cli/webhook-inbox.js`, built by `npm run bundle`, the package's `bin`)
 * run as an operator runs it: a child process, a --config file naming the emulators, and no AWS
 * variables in its environment (the file's endpoints and the local credentials must suffice).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { EffectEvent } from '../../lib/contract';
import { encodeWorkMessage } from '../../lambda/shared/stores/work-queue';
import { LambdaInvokeStandIn } from '#twin/testing';
import { answerlineBody, InboxHarness, keyOf, SecretsFixture } from '../support/inbox-fixture';

const CLI = join(__dirname, '..', '..', 'assets', 'cli', 'webhook-inbox.js');
const secrets = new SecretsFixture();
const lambda = new LambdaInvokeStandIn();
let lambdaEndpoint: string;
let h: InboxHarness;
let configPath: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error('assets/cli/webhook-inbox.js is missing: run `npm run bundle` first');
  await secrets.start();
  lambdaEndpoint = await lambda.start();
  h = await InboxHarness.create(secrets, 'cli-bundle');
  const document = h.localOpsConfig(lambdaEndpoint);
  configPath = join(mkdtempSync(join(tmpdir(), 'webhook-inbox-bundle-')), 'ops-config.json');
  writeFileSync(configPath, JSON.stringify(document, null, 2));
});
afterAll(async () => {
  h?.destroy();
  await lambda.stop();
  await secrets.stop();
});

/** The environment without any AWS_ variable. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
}

/** Runs the bundle with `args` (asynchronously: the Lambda stand-in serves from this process). */
function webhookInbox(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(CLI, args, { env: cleanEnv(), timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('the bundle is an executable script with a shebang', () => {
  expect(statSync(CLI).mode & 0o111).toBe(0o111);
  expect(require('node:fs').readFileSync(CLI, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
});

test('--help exits 0; a usage error exits 2', async () => {
  const help = await webhookInbox('--help');
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('Usage: webhook-inbox <command>');
  const usage = await webhookInbox('status');
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain('give --stack <name> (a deployed stack) or --config <file>');
});

test('status, inspect, replay, redrive, quarantine and reconcile against the emulators via --config', async () => {
  const body = answerlineBody();
  expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
  const key = keyOf(body);

  const status = await webhookInbox('status', '--config', configPath, '--json');
  // No SDK Node-version warning either: the bundle pins its SDK, so it is filtered out.
  expect(status).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(status.stdout)).toMatchObject({ workQueue: { visible: 1, inFlight: 0 }, deadLetterQueue: { visible: 0 }, quarantined: { count: 0 } });

  const inspected = await webhookInbox('inspect', '--config', configPath, key);
  expect(inspected).toMatchObject({ code: 0, stdout: expect.stringMatching(/^status +RECEIVED$/m) });
  for (const needle of h.sensitive) expect(inspected.stdout + inspected.stderr).not.toContain(needle);

  expect(await webhookInbox('replay', '--config', configPath, '--event', 'answerline#tsk_nope')).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('unknown event answerline#tsk_nope'),
  });
  const replayed = await webhookInbox('replay', '--config', configPath, '--event', key, '--json');
  expect(JSON.parse(replayed.stdout)).toMatchObject({ enqueued: 1 });
  expect(await h.takeMessages()).toEqual([key, key]);

  await h.sqs.send(new SendMessageCommand({ QueueUrl: h.deadLetterQueueUrl, MessageBody: encodeWorkMessage(key) }));
  expect(await webhookInbox('redrive', '--config', configPath)).toMatchObject({
    code: 0,
    stdout: 'moved 1 message from the dead-letter queue to the work queue\nrevived 0 DEAD rows (RECEIVED again, with a fresh budget of attempts)\n',
  });
  expect(await h.takeMessages()).toEqual([key]);
  expect(await h.takeMessages(h.deadLetterQueueUrl)).toEqual([]);

  expect(await webhookInbox('quarantine', '--config', configPath)).toMatchObject({ code: 0, stdout: expect.stringContaining('0 quarantined copies') });

  lambda.deploy(h.opsConfig().reconcilerFunctionName, () => h.reconciler()());
  expect(await webhookInbox('reconcile', '--config', configPath)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^swept +0$/m) });
});

test("events lists the effect events of a twin's events log; without one it is exit 2", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-inbox-bundle-events-'));
  const eventsLog = join(dir, 'events.log');
  const inbox = h.opsConfig().inboxName;
  const effect = (bus: string, jobKey: string) => {
    const detail = { schemaVersion: 1, inbox, provider: 'answerline', eventKey: 'answerline#tsk_1', jobKey, status: 'COMPLETED' };
    return JSON.stringify({
      at: '2026-03-01T10:00:01.000Z',
      type: 'event',
      eventId: jobKey,
      bus,
      source: EffectEvent.SOURCE,
      detailType: EffectEvent.JOB_RESULT_DECIDED,
      detail,
      detailText: JSON.stringify(detail),
      resources: [],
      time: '2026-03-01T10:00:01Z',
    });
  };
  writeFileSync(
    eventsLog,
    [
      effect('effects', 'answerline#job_1'),
      effect('default', 'answerline#job_2'),
      '{"type":"rule-delivery","rule":"R","target":"Q","kind":"sqs","event":"answerline#job_1"}',
      'not json',
      '',
    ].join('\n'),
  );
  const withLog = join(dir, 'ops-config.json');
  writeFileSync(withLog, JSON.stringify({ ...h.localOpsConfig(lambdaEndpoint), eventsLog, eventBus: 'effects' }));

  const listed = await webhookInbox('events', '--config', withLog);
  expect(listed).toMatchObject({ code: 0, stderr: '' });
  expect(listed.stdout).toMatch(/^2026-03-01T10:00:01Z +JobResultDecided +answerline#tsk_1 +answerline#job_1 +COMPLETED$/m);
  expect(listed.stdout).not.toContain('answerline#job_2');
  expect(listed.stdout).toContain(`skipped 1 malformed line of ${eventsLog}`);
  const json = await webhookInbox('events', '--config', withLog, '--json');
  expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ eventId: 'answerline#job_1', bus: 'effects' })]);

  expect(await webhookInbox('events', '--config', configPath)).toMatchObject({ code: 2, stderr: expect.stringContaining('EventBridge keeps no history') });
});
