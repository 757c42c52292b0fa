/**
 * The twin runs every stack of an assembly: an app with two stacks, each holding an inbox (Stripe
 * in one, GitHub in the other), is run on the twin in its own process (test/support/template-twin-process.ts);
 * both inboxes are found, each behind its own front door, and each admits a signed delivery.
 * Choosing a stack (`--stack` of `npm start`, the twin's `stacks` option) runs that one alone.
 */
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { App, Stack } from 'aws-cdk-lib';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { ReadyLine, ROOT, startTemplateTwinProcess, twinEnvironment } from '../../../../test/support/template-twin-process';

const PAYMENTS = 'Payments';
const REPOSITORIES = 'Repositories';

type ReadyInbox = ReadyLine['inboxes'][number];

let dir: string;
let outdir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'template-twin-stacks-'));
  outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  new WebhookInbox(new Stack(app, PAYMENTS), 'Charges', { providers: [WebhookProvider.stripe()] });
  new WebhookInbox(new Stack(app, REPOSITORIES), 'Pushes', { providers: [WebhookProvider.github()] });
  app.synth();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function hmacSha256Hex(secret: string, content: string): string {
  return createHmac('sha256', secret).update(content).digest('hex');
}

/** The one provider of an inbox, by name. */
function providerOf(inbox: ReadyInbox, name: string): ReadyInbox['providers'][number] {
  expect(inbox.providers.map((provider) => provider.name)).toEqual([name]);
  return inbox.providers[0];
}

/** A Stripe event, signed as Stripe signs: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` keyed by the secret's text. */
async function deliverStripe(inbox: ReadyInbox): Promise<number> {
  const stripe = providerOf(inbox, 'stripe');
  const timestamp = Math.floor(Date.now() / 1000);
  // The preset keys on the body's id.
  const body = JSON.stringify({ id: `evt_${randomUUID().replace(/-/g, '')}`, object: 'event', type: 'charge.succeeded', created: timestamp });
  const signature = `t=${timestamp},v1=${hmacSha256Hex(stripe.secret, `${timestamp}.${body}`)}`;
  const response = await fetch(stripe.url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body });
  return response.status;
}

/** A GitHub push, signed as GitHub signs: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`. */
async function deliverGitHub(inbox: ReadyInbox): Promise<number> {
  const github = providerOf(inbox, 'github');
  const body = JSON.stringify({ ref: 'refs/heads/main', after: randomUUID(), repository: { full_name: 'octo/inbox' } });
  const response = await fetch(github.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      // A `ping` would be GitHub's test delivery: a push is an event.
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${hmacSha256Hex(github.secret, body)}`,
    },
    body,
  });
  return response.status;
}

function inboxOf(ready: ReadyLine, stack: string): ReadyInbox {
  const inbox = ready.inboxes.find((candidate) => candidate.stack === stack);
  if (!inbox) throw new Error(`no inbox of stack ${stack} among ${ready.inboxes.map((candidate) => candidate.stack).join(', ')}`);
  return inbox;
}

test('every stack runs: both inboxes are found, each admits a signed delivery on its own port', async () => {
  const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'all') });
  try {
    expect(twin.ready.inboxes.map((inbox) => inbox.stack).sort()).toEqual([PAYMENTS, REPOSITORIES]);
    const payments = inboxOf(twin.ready, PAYMENTS);
    const repositories = inboxOf(twin.ready, REPOSITORIES);
    // Each stack's HTTP API is a front door of its own.
    expect(new URL(providerOf(payments, 'stripe').url).port).not.toBe(new URL(providerOf(repositories, 'github').url).port);
    expect(await deliverStripe(payments)).toBe(202);
    expect(await deliverGitHub(repositories)).toBe(202);
  } finally {
    await twin.stop();
  }
});

test('a chosen stack runs alone: npm start --app … --stack NAME', async () => {
  // The twin writes its state under its working folder: a folder of this test's.
  const cwd = join(dir, 'npm-start');
  mkdirSync(cwd);
  const npmStart = [
    require.resolve('ts-node/dist/bin.js'),
    '--transpile-only',
    '-P',
    join(ROOT, 'tsconfig.dev.json'),
    join(ROOT, 'packages', 'webhook-inbox-local', 'src', 'cli.ts'),
  ];
  const child = spawn(process.execPath, [...npmStart, '--app', outdir, '--stack', PAYMENTS, '--no-demo', '--port', '0'], {
    cwd,
    env: twinEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const firstLine = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve)),
      exited.then((code) => Promise.reject(new Error(`npm start exited (${code}) before its ready line:\n${stderr}`))),
    ]);
    const ready = JSON.parse(firstLine) as ReadyLine;
    expect(ready.inboxes.map((inbox) => inbox.stack)).toEqual([PAYMENTS]);
    expect(await deliverStripe(inboxOf(ready, PAYMENTS))).toBe(202);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
