/**
 * The companion package's command (`webhook-inbox-local`) runs a consumer's app as the consumer
 * would: the app is synthesized here, outside the repository's bin/, into its own project folder,
 * and the command runs in its own process from the package's bin. One stack, two inboxes: Orders
 * (Stripe, GitHub, Amazon SNS) with a processing function, Answers (Answerline, Echonova) with an
 * `onJobResult` rule to an SQS queue. Signed deliveries reach both (SNS's signed by the command's
 * SNS stand-in, its subscription confirmed there); the processing function runs, the queue
 * receives the decided results, and the IAM gateway refuses nothing. Without the optional IAM
 * simulator installed, the command still runs and says that calls are not judged. A template it
 * cannot run is answered in one line that names where. What the package installs is permissively
 * licensed.
 */
import { ChildProcessByStdio, spawn, spawnSync } from 'node:child_process';
import { createPrivateKey, randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { App, Stack } from 'aws-cdk-lib';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { EffectDetail, WebhookInbox, WebhookProvider } from '../../../lib';
import { EffectEvent } from '../../../lib/contract';
import { LOCAL_AWS } from '../src/aws/local-aws';
import { echonovaHeaders, standardWebhooksHeaders, unixSeconds } from '../src/providers/signing';
import { snsHeaders, snsMessage } from '../src/aws/sns/stand-in';
import { ASSEMBLY_METADATA_CONTEXT } from '../src/twin/synth';
import { githubHeaders, stripeHeaders } from '../../../test/support/senders';
import { functionLogLines, ReadyLine, ROOT, twinEnvironment, waitFor } from '../../../test/support/template-twin-process';

const PACKAGE = join(ROOT, 'packages', 'webhook-inbox-local');
const BIN = join(PACKAGE, 'bin', 'webhook-inbox-local.js');
const STACK = 'ConsumerApp';
const RECORDER = 'OrdersRecorder';
const DECIDED_QUEUE = 'consumer-decided-results';
/** What the processing function logs before each effect it is handed. */
const MARKER = 'RECORDED ';
/** The consumer's topic: the command's SNS stand-in plays SNS's host for every topic. */
const ORDERS_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:order-events';

/** The summary the command prints when it is stopped. */
interface StopLine {
  readonly stopped: true;
  readonly iam: { readonly enforced: boolean; readonly judged: number; readonly deniedByFunction: Record<string, number> };
}

/** A consumer's app, synthesized into `outdir` as `cdk synth` would (assets read where they are). */
function synthesizeConsumerApp(outdir: string): void {
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, STACK);
  const recorder = new lambda.Function(stack, RECORDER, {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline(`exports.handler = async (event) => { console.log(${JSON.stringify(MARKER)} + JSON.stringify(event)); return {}; };`),
  });
  new WebhookInbox(stack, 'Orders', {
    providers: [WebhookProvider.stripe(), WebhookProvider.github(), WebhookProvider.sns({ topicArns: [ORDERS_TOPIC] })],
    processingFunction: recorder,
  });
  const answers = new WebhookInbox(stack, 'Answers', { providers: [WebhookProvider.answerline(), WebhookProvider.echonova()] });
  answers.onJobResult('DecidedToQueue', { target: new targets.SqsQueue(new sqs.Queue(stack, 'DecidedResults', { queueName: DECIDED_QUEUE })) });
  app.synth();
}

/** The command, running: its lines on stdout, everything on stderr, how it exited. */
class RunningCommand {
  private readonly stdoutLines: string[] = [];
  private readonly waiters: (() => void)[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(private readonly child: ChildProcessByStdio<null, Readable, Readable>) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.stdoutLines.push(line);
      this.waiters.splice(0).forEach((wake) => wake());
    });
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** The n-th line on stdout (from 0), once printed. */
  async line(index: number): Promise<string> {
    for (;;) {
      if (this.stdoutLines.length > index) return this.stdoutLines[index];
      const exitedFirst = await Promise.race([new Promise<false>((resolve) => this.waiters.push(() => resolve(false))), this.exited.then(() => true)]);
      if (exitedFirst && this.stdoutLines.length <= index) throw new Error(`the command exited before printing line ${index + 1}:\n${this.stderr}`);
    }
  }

  /** Ends it at once, if it still runs (after a failed assertion). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  /** Interrupts it, as Ctrl-C does; the line it prints then. */
  async interrupt(): Promise<StopLine> {
    this.child.kill('SIGINT');
    const line = await this.line(1);
    expect(await this.exited).toBe(0);
    return JSON.parse(line) as StopLine;
  }
}

function runCommand(bin: string, args: readonly string[], cwd: string): RunningCommand {
  return new RunningCommand(spawn(process.execPath, [bin, ...args], { cwd, env: twinEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] }));
}

let project: string;
let assembly: string;

beforeAll(() => {
  // The bundle the package ships, built from the current sources.
  const built = spawnSync('npm', ['run', 'build', '--workspace', 'cdk-webhook-inbox-local'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`building the package failed:\n${built.stdout}\n${built.stderr}`);
  project = mkdtempSync(join(tmpdir(), 'consumer-app-'));
  assembly = join(project, 'cdk.out');
  synthesizeConsumerApp(assembly);
});

afterAll(() => rmSync(project, { recursive: true, force: true }));

test('serves both inboxes of a consumer app: the processing function runs, the rule feeds its queue, no call is denied', async () => {
  const command = runCommand(BIN, ['--app', assembly, '--port', '0'], project);
  try {
    const ready = JSON.parse(await command.line(0)) as ReadyLine;
    expect(ready.ready).toBe(true);
    expect(ready.services.iamGateway).toEqual(expect.any(String));
    const inboxWith = (provider: string) => ready.inboxes.find((inbox) => inbox.providers.some((candidate) => candidate.name === provider))!;
    const orders = inboxWith('stripe');
    const answers = inboxWith('answerline');
    expect(orders.providers.map((provider) => provider.name).sort()).toEqual(['github', 'sns', 'stripe']);
    expect(answers.providers.map((provider) => provider.name).sort()).toEqual(['answerline', 'echonova']);
    const provider = (inbox: ReadyLine['inboxes'][number], name: string) => inbox.providers.find((candidate) => candidate.name === name)!;
    const now = unixSeconds();

    const stripeBody = JSON.stringify({ id: `evt_${randomUUID().replace(/-/g, '')}`, object: 'event', type: 'payment_intent.succeeded', created: now });
    const githubBody = JSON.stringify({ action: 'opened', issue: { number: 7 } });
    const taskId = `tsk_${randomUUID().slice(0, 8)}`;
    const answerlineBody = JSON.stringify({
      task: { id: taskId, status: 'COMPLETED', idempotencyKey: 'report-7', createdAt: new Date().toISOString() },
      response: { result: { answer: 'forty-two' } },
    });
    const jobId = `job_${randomUUID().slice(0, 8)}`;
    const echonovaBody = JSON.stringify({ jobId, status: 'completed', createdAt: new Date().toISOString(), audioUrl: 'https://example.invalid/a.mp3' });
    // SNS's messages, signed with the stand-in's key (the provider's secret in the ready line): its
    // subscription is confirmed first (200, never stored), then a notification is stored.
    const sns = provider(orders, 'sns');
    const snsSigner = { signingKey: createPrivateKey(sns.secret) };
    const confirmation = snsMessage(snsSigner, { type: 'SubscriptionConfirmation', topicArn: ORDERS_TOPIC, origin: ready.services.sns });
    const confirmed = await fetch(sns.url, { method: 'POST', headers: snsHeaders(confirmation), body: JSON.stringify(confirmation) });
    expect(confirmed.status).toBe(200);
    const notification = snsMessage(snsSigner, { topicArn: ORDERS_TOPIC, origin: ready.services.sns, message: JSON.stringify({ order: 'A-7' }) });
    const deliveries = [
      {
        url: provider(orders, 'stripe').url,
        body: stripeBody,
        headers: { 'content-type': 'application/json', ...stripeHeaders(stripeBody, now, provider(orders, 'stripe').secret) },
      },
      {
        url: provider(orders, 'github').url,
        body: githubBody,
        headers: { 'content-type': 'application/json', ...(await githubHeaders(githubBody, provider(orders, 'github').secret)) },
      },
      {
        url: provider(answers, 'answerline').url,
        body: answerlineBody,
        headers: standardWebhooksHeaders(provider(answers, 'answerline').secret, `msg_${randomUUID()}`, now, Buffer.from(answerlineBody)),
      },
      {
        url: provider(answers, 'echonova').url,
        body: echonovaBody,
        headers: echonovaHeaders(provider(answers, 'echonova').secret, 'job.completed', now, Buffer.from(echonovaBody)),
      },
      { url: sns.url, body: JSON.stringify(notification), headers: snsHeaders(notification) },
    ];
    for (const delivery of deliveries) {
      const response = await fetch(delivery.url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      // Every first delivery of a verified event: accepted (202), stored before the answer.
      expect({ url: delivery.url, status: response.status }).toEqual({ url: delivery.url, status: 202 });
    }

    // Orders: its processing function was handed each event, as WebhookReceived.
    const recorded = await waitFor('the processing function to record the three events', () => {
      const lines = functionLogLines(ready.logs, STACK, RECORDER).filter((line) => line.includes(MARKER));
      return lines.length >= 3 ? lines : undefined;
    });
    const invocations = recorded.map((line) => JSON.parse(line.slice(line.indexOf(MARKER) + MARKER.length)) as { 'detail-type': string; detail: EffectDetail });
    expect(invocations.map((invocation) => [invocation['detail-type'], invocation.detail.inbox, invocation.detail.provider]).sort()).toEqual([
      [EffectEvent.WEBHOOK_RECEIVED, orders.name, 'github'],
      [EffectEvent.WEBHOOK_RECEIVED, orders.name, 'sns'],
      [EffectEvent.WEBHOOK_RECEIVED, orders.name, 'stripe'],
    ]);

    // Answers: the rule delivered each decided result to the consumer's queue.
    const client = new SQSClient({ ...LOCAL_AWS, endpoint: ready.services.sqs, useQueueUrlAsEndpoint: false });
    try {
      const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: DECIDED_QUEUE }));
      const received: { 'detail-type': string; source: string; detail: EffectDetail }[] = [];
      await waitFor('two decided results on the queue', async () => {
        const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
        received.push(...Messages.map((message) => JSON.parse(message.Body!) as (typeof received)[number]));
        return received.length >= 2 ? received : undefined;
      });
      expect(received.map((event) => [event.source, event['detail-type'], event.detail.inbox, event.detail.provider, event.detail.taskId]).sort()).toEqual(
        [
          [EffectEvent.SOURCE, EffectEvent.JOB_RESULT_DECIDED, answers.name, 'answerline', taskId],
          [EffectEvent.SOURCE, EffectEvent.JOB_RESULT_DECIDED, answers.name, 'echonova', jobId],
        ].sort(),
      );
    } finally {
      client.destroy();
    }

    const stopped = await command.interrupt();
    expect(stopped.iam.enforced).toBe(true);
    expect(stopped.iam.judged).toBeGreaterThan(0);
    expect(stopped.iam.deniedByFunction).toEqual({});
    expect(command.stderr).not.toMatch(/^denied: /m);
  } finally {
    command.kill();
  }
});

test('installed without the optional IAM simulator, it runs and says the calls are not judged', async () => {
  // The package as npm installs it without its optional peer: its files (copied: Node.js resolves from
  // a file's real path), and exactly its dependencies, linked from this repository's node_modules.
  const installed = join(project, 'installed', 'node_modules', 'cdk-webhook-inbox-local');
  for (const entry of ['bin', 'dist', 'package.json']) cpSync(join(PACKAGE, entry), join(installed, entry), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const name of Object.keys(manifest.dependencies)) {
    mkdirSync(dirname(join(installed, 'node_modules', name)), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(installed, 'node_modules', name));
  }
  const command = runCommand(join(installed, 'bin', 'webhook-inbox-local.js'), ['--app', assembly, '--port', '0'], project);
  try {
    const ready = JSON.parse(await command.line(0)) as ReadyLine;
    expect(ready.services.iamGateway).toBeUndefined();
    expect(command.stderr).toMatch(/^warning: IAM is not enforced: @cloud-copilot\/iam-simulate is not installed, so the functions' AWS calls are not judged/m);
    const stopped = await command.interrupt();
    expect(stopped.iam).toEqual({ enforced: false, judged: 0, deniedByFunction: {} });
  } finally {
    command.kill();
  }
});

test.each([
  [['--port', 'eighty'], '--port wants a port number, got "eighty"'],
  [['--app', 'no-such-cdk.out'], '--app no-such-cdk.out: no such file or folder (synthesize first: npx cdk synth)'],
  [['--secret', 'stripe'], '--secret wants NAME=VALUE, got "stripe"'],
  [['--stack', 'Elsewhere', '--port', '0'], `no stack "Elsewhere" in cdk.out; it holds ${STACK}`],
])('a usage error (%j) answers one line, before starting anything, and exits 2', (args, message) => {
  const run = spawnSync(process.execPath, [BIN, '--app', 'cdk.out', ...args], { cwd: project, env: twinEnvironment(), encoding: 'utf8' });
  expect(run.status).toBe(2);
  expect(run.stdout).toBe('');
  // A garbled value is followed by the usage, as in npm start.
  const [first, ...rest] = run.stderr.trimEnd().split('\n');
  expect(first).toBe(message);
  expect(rest.every((line) => line.startsWith('usage: ') || line.startsWith('  --'))).toBe(true);
});

test('a template it cannot run answers one line naming the stack, the resource and the property, without a stack trace, and exits 1', () => {
  // A value imported from another stack: the twin resolves nothing across stacks.
  const template = {
    Resources: {
      Logs: {
        Type: 'AWS::Logs::LogGroup',
        Properties: { LogGroupName: { 'Fn::ImportValue': 'Shared:LogPrefix' } },
        Metadata: { 'aws:cdk:path': 'Imports/Shared/Logs/Resource' },
      },
    },
  };
  writeFileSync(join(project, 'Imports.template.json'), JSON.stringify(template));
  const run = spawnSync(process.execPath, [BIN, '--app', 'Imports.template.json', '--port', '0'], { cwd: project, env: twinEnvironment(), encoding: 'utf8' });
  expect(run.status).toBe(1);
  expect(run.stdout).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines.at(-1)).toBe(
    'error: stack Imports, resource Logs (Shared/Logs, AWS::Logs::LogGroup), property LogGroupName: Fn::ImportValue is not supported locally',
  );
  // The lines before it are the twin's progress, none of them a stack frame.
  expect(lines.filter((line) => /^\s+at /.test(line))).toEqual([]);
});

test('installs only permissively licensed code: every package its dependencies bring in, as the lock file resolves them', () => {
  // Permissive licenses, as their SPDX ids; the AGPL-3.0 IAM simulator is an optional peer, never a dependency.
  const PERMISSIVE = ['MIT', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'Apache-2.0'];
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { license?: string; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }>;
  };
  // Node's resolution: the nearest node_modules folder upwards from the package that requires it.
  const resolve = (from: string, name: string): string | undefined => {
    for (let folder = from; ; folder = folder.includes('/node_modules/') ? folder.slice(0, folder.lastIndexOf('/node_modules/')) : '') {
      const key = `${folder ? `${folder}/` : ''}node_modules/${name}`;
      if (lock.packages[key]) return key;
      if (!folder) return undefined;
    }
  };
  const licenses = new Map<string, string | undefined>();
  const unresolved: string[] = [];
  const visit = (key: string) => {
    if (licenses.has(key)) return;
    const entry = lock.packages[key];
    licenses.set(key, entry.license);
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
      const found = resolve(key, name);
      if (found) visit(found);
      else unresolved.push(`${name} (from ${key})`);
    }
  };
  visit('packages/webhook-inbox-local');
  expect(unresolved).toEqual([]);
  expect([...licenses.keys()]).toEqual(expect.arrayContaining(['node_modules/@peculiar/x509', 'node_modules/reflect-metadata']));
  expect([...licenses].filter(([, license]) => !PERMISSIVE.includes(license ?? '')).map(([key, license]) => `${key}: ${license}`)).toEqual([]);
});
