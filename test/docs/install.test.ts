/**
 * docs/DEPLOY.md's install commands work as written: its "1. Install" block is run by bash from a
 * fresh clone of this repository (the clone URL replaced by this checkout's committed HEAD) into a
 * new app beside it, npm preferring its cache (packages come from the cache `npm ci` filled; the
 * registry is asked only for what the cache lacks, such as a package's metadata). Both
 * tarballs are packed and installed, and in the new app the construct loads, the ops CLI and the
 * local twin's command answer, and the twin's command runs the app's synthesized template until
 * its ready line. Slow by nature (a clone, `npm ci`, `npm run build`): minutes, on one worker.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { codeBlocks, projectDocuments } from '../support/markdown';
import { ASSEMBLY_METADATA_CONTEXT } from '../../packages/webhook-inbox-local/src/twin/synth';

const ROOT = join(__dirname, '..', '..');
const CLONE_URL = 'https://github.com/cdk-webhook-inbox/cdk-webhook-inbox.git';
const manifest = (path: string) =>
  JSON.parse(readFileSync(path, 'utf8')) as { version: string; peerDependencies: Record<string, string>; devDependencies: Record<string, string> };

/** The shell block of docs/DEPLOY.md's "1. Install" section. */
function installCommands(): string {
  const deploy = projectDocuments(ROOT).find((document) => document.name === join('docs', 'DEPLOY.md'))!;
  const section = /^## 1\. Install\n([\s\S]*?)^## /m.exec(deploy.text)![1];
  const block = codeBlocks({ ...deploy, text: section }).find((each) => each.language === 'sh');
  if (!block) throw new Error('docs/DEPLOY.md#1-install has no sh block');
  return block.code;
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'install-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

test('the install commands of docs/DEPLOY.md build and install both packages from a fresh clone into a new app', async () => {
  const commands = installCommands();
  expect(commands).toContain(CLONE_URL);
  const root = manifest(join(ROOT, 'package.json'));
  // The new app: what `cdk init` gives it, from the versions this repository pins.
  const app = join(work, 'my-app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'my-app',
      version: '0.1.0',
      private: true,
      dependencies: { 'aws-cdk-lib': root.devDependencies['aws-cdk-lib'], constructs: root.devDependencies.constructs },
    }),
  );
  writeFileSync(
    join(app, 'app.js'),
    [
      "const { App, Stack } = require('aws-cdk-lib');",
      "const { WebhookInbox, WebhookProvider } = require('cdk-webhook-inbox');",
      // What `npx cdk synth` adds to the app's context: the metadata naming assets and construct paths.
      `const app = new App({ outdir: 'cdk.out', context: ${JSON.stringify(ASSEMBLY_METADATA_CONTEXT)} });`,
      "new WebhookInbox(new Stack(app, 'Answers'), 'Inbox', { providers: [WebhookProvider.answerline()] });",
      'app.synth();',
    ].join('\n'),
  );
  // The clone is of the committed HEAD, as a clone of the repository would be.
  const script = commands.replace(CLONE_URL, `${ROOT} cdk-webhook-inbox`);
  const env = { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: work, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  expect({ status: run.status, tail: run.status === 0 ? '' : `${run.stdout.slice(-2000)}\n${run.stderr.slice(-3000)}` }).toEqual({ status: 0, tail: '' });

  const installed = manifest(join(app, 'package.json')) as unknown as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  expect(installed.dependencies['cdk-webhook-inbox']).toMatch(/cdk-webhook-inbox-\d+\.\d+\.\d+\.tgz$/);
  expect(installed.devDependencies['cdk-webhook-inbox-local']).toMatch(/cdk-webhook-inbox-local-\d+\.\d+\.\d+\.tgz$/);

  // The construct synthesizes in the new app, and the twin's command runs the result.
  const synth = spawnSync(process.execPath, ['app.js'], { cwd: app, encoding: 'utf8' });
  expect({ status: synth.status, stderr: synth.stderr }).toEqual({ status: 0, stderr: '' });
  const twin = spawn(join(app, 'node_modules', '.bin', 'webhook-inbox-local'), ['--app', 'cdk.out', '--port', '0'], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  twin.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const line = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: twin.stdout }).once('line', resolve)),
      new Promise<never>((_resolve, reject) => twin.once('exit', (code) => reject(new Error(`webhook-inbox-local exited (${code}):\n${stderr}`)))),
    ]);
    const ready = JSON.parse(line) as { ready: boolean; endpoints: Record<string, string> };
    expect(ready.ready).toBe(true);
    expect(Object.keys(ready.endpoints)).toEqual(['answerline']);
    expect((ready as unknown as { inboxes: { path: string }[] }).inboxes.map((inbox) => inbox.path)).toEqual(['Answers/Inbox']);
  } finally {
    twin.kill('SIGINT');
  }
}, 1_800_000);
