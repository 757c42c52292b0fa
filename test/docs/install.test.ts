/**
 * docs/DEPLOY.md's install commands work as written. Its "1. Install" block clones the repository,
 * builds it (`npm ci && npm run build`), packs both packages and installs them into a new app.
 * The clone and the build are what CI itself runs on every change (.ci/run: `npm ci`, then
 * `npm test`, which builds first), and the first test holds the block to exactly those commands;
 * the second runs the rest of the block as written: in a clone of this checkout's committed HEAD
 * given the build's outputs of this checkout (lib/'s JavaScript, .jsii, assets/), both tarballs
 * are packed (the local twin's by its own prepack build) and installed into a new app beside it,
 * npm preferring its cache (packages come from the cache `npm ci` filled; the registry is asked
 * only for what the cache lacks, such as a package's metadata). In the new app the construct
 * loads, the ops CLI and the local twin's command answer, and the twin's command runs the app's
 * synthesized template until its ready line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
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

/** The lines of the block that clone and build: the rest packs and installs. */
const BUILD_LINES = [`git clone ${CLONE_URL}`, 'cd cdk-webhook-inbox', 'npm ci && npm run build'];

/** A shell line without its comment. */
const command = (line: string) => line.replace(/\s+#.*$/, '').trim();

/** What the build leaves in a checkout that the construct's tarball carries (package.json `files`), untracked by git. */
function buildOutputs(): string[] {
  const lib = readdirSync(join(ROOT, 'lib'), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(js|d\.ts)$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
  return [...lib, '.jsii', 'assets'];
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'install-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

test('the install block clones and builds with the commands CI runs from a fresh clone on every change', () => {
  const lines = installCommands().split('\n').map(command).filter(Boolean);
  expect(lines.slice(0, BUILD_LINES.length)).toEqual(BUILD_LINES);
  // CI: a fresh clone, `npm ci`, then `npm test`, whose first step is `npm run build`.
  const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8')
    .split('\n')
    .map(command);
  expect(ci.filter((line) => line.startsWith('npm '))).toEqual(['npm ci', 'npm test']);
  expect((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.test).toMatch(/^npm run build && /);
});

test('the install commands of docs/DEPLOY.md pack and install both packages from a built clone into a new app', async () => {
  const commands = installCommands();
  const root = manifest(join(ROOT, 'package.json'));
  // The clone, of the committed HEAD as a clone of the repository would be, and built: the build's
  // outputs of this checkout (whose `npm test` built them) and its installed packages.
  const clone = join(work, 'cdk-webhook-inbox');
  const cloned = spawnSync('git', ['clone', '--quiet', ROOT, clone], { encoding: 'utf8' });
  expect({ status: cloned.status, stderr: cloned.stderr }).toEqual({ status: 0, stderr: '' });
  for (const output of buildOutputs()) cpSync(join(ROOT, output), join(clone, output), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
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
  // The block from its first line after the build, in the clone.
  const lines = commands.split('\n');
  const afterBuild = lines.findIndex((line) => command(line) === BUILD_LINES.at(-1)) + 1;
  const script = ['cd cdk-webhook-inbox', ...lines.slice(afterBuild)].join('\n');
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
}, 600_000);
