/**
 * A usage error of `npm start` or `npm run chaos` answers one clear line on stderr and exits 2,
 * without a stack trace and before anything starts: an unknown option, an unknown provider, a
 * port in use, a data folder another twin holds. The data folder's lock is taken over when its
 * twin is gone and released when its own twin is.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeServer, listenOnLoopback } from '../src/aws/loopback';
import { assertPortFree, DATA_DIR_LOCK_FILE, lockDataDir, UsageError } from '../src/twin/usage';

const ROOT = join(__dirname, '..', '..', '..');
const CLI = join(__dirname, '..', 'src', 'cli.ts');
const STACK_FRAME = /^\s+at /m;

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderrLines: readonly string[];
}

/** The command as `npm start` runs it (ts-node, transpile only); `npm run chaos` runs it with `chaos` first. */
async function runCommand(args: readonly string[]): Promise<CliRun> {
  // Not the emulator endpoints of the test run: a twin would start its own.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_ENDPOINT_URL')));
  const child = spawn(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--transpile-only', '-P', 'tsconfig.dev.json', CLI, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderrLines: stderr.split('\n').filter(Boolean) };
}

function expectOneLineUsageError(run: CliRun, ...mentions: string[]): void {
  expect(run).toMatchObject({ code: 2, stdout: '' });
  expect(run.stderrLines).toHaveLength(1);
  for (const mention of mentions) expect(run.stderrLines[0]).toContain(mention);
  expect(run.stderrLines[0]).not.toMatch(STACK_FRAME);
}

/** A pid no process has: a child's, once it has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'usage-test-'));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('npm start', () => {
  it('refuses an unknown provider, naming the ones the twin serves', async () => {
    expectOneLineUsageError(await runCommand(['--provider', 'nope', '--port', '0']), '--provider nope', 'answerline', 'echonova');
  });

  it('refuses a provider scheme the construct refuses, with its reasons on one line', async () => {
    const file = join(tempDir(), 'providers.json');
    writeFileSync(file, JSON.stringify([{ name: 'shop', preset: 'hmac', signatureHeader: 'X-Sig', signedContent: 'no body' }]));
    expectOneLineUsageError(await runCommand(['--providers', file, '--port', '0']), 'shop', 'signedContent must contain {body}');
  });

  it('refuses the hmac scheme named on the command line, which has no settings there', async () => {
    expectOneLineUsageError(await runCommand(['--provider', 'slack=hmac', '--port', '0']), '--provider slack', '--providers');
  });

  describe('with a port that is taken', () => {
    const holder = createServer();
    let port: number;
    beforeAll(async () => {
      await listenOnLoopback(holder);
      port = (holder.address() as AddressInfo).port;
    });
    afterAll(() => closeServer(holder));

    it('refuses it, saying how to pick another', async () => {
      expectOneLineUsageError(await runCommand(['--port', String(port), '--no-demo']), `--port ${port}`, 'in use', '--port 0');
    });
  });

  it('refuses a data folder a running twin holds, and leaves its lock alone', async () => {
    const dir = tempDir();
    const lockPath = join(dir, DATA_DIR_LOCK_FILE);
    writeFileSync(lockPath, String(process.pid));
    expectOneLineUsageError(await runCommand(['--data', dir, '--port', '0']), dir, `pid ${process.pid}`);
    expect(readFileSync(lockPath, 'utf8')).toBe(String(process.pid));
  });

  it('answers an unknown option with one line naming it, then the usage', async () => {
    const run = await runCommand(['--nope']);
    expect(run.code).toBe(2);
    expect(run.stderrLines[0]).toContain('--nope');
    expect(run.stderrLines[1]).toMatch(/^usage: npm start/);
    expect(run.stderrLines.join('\n')).not.toMatch(STACK_FRAME);
  });
});

describe('npm start before it starts anything (scripts/start.ts)', () => {
  const start = (args: readonly string[]) =>
    spawnSync(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--transpile-only', '-P', 'tsconfig.dev.json', 'scripts/start.ts', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
    });

  it('answers --help with the usage alone: nothing bundled, the twin not loaded', () => {
    const run = start(['--help']);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.stdout).toMatch(/^usage: npm start -- /);
    expect(run.stdout).toContain('--provider NAME[=PRESET]');
  });

  it('answers an unknown option with one line naming it, then the usage, before it bundles or loads anything', () => {
    const run = start(['--nope']);
    expect(run.status).toBe(2);
    const lines = run.stderr.split('\n').filter(Boolean);
    expect(lines[0]).toContain('--nope');
    expect(lines[1]).toMatch(/^usage: npm start/);
    expect(run.stderr).not.toMatch(/bundling|loading the twin/);
  });
});

describe('npm run chaos', () => {
  it('answers an unknown option with one line naming it, then the usage', async () => {
    const run = await runCommand(['chaos', '--nope']);
    expect(run.code).toBe(2);
    expect(run.stderrLines[0]).toContain('--nope');
    expect(run.stderrLines[1]).toMatch(/^usage: npm run chaos/);
    expect(run.stderrLines.join('\n')).not.toMatch(STACK_FRAME);
  });

  it('answers every bad value on one line, then the usage', async () => {
    const run = await runCommand(['chaos', '--deliveries', '3', '--speed', '0']);
    expect(run.code).toBe(2);
    expect(run.stderrLines[0]).toMatch(/--deliveries .*; --speed /);
    expect(run.stderrLines[1]).toMatch(/^usage: npm run chaos/);
  });
});

describe('assertPortFree', () => {
  let held: Server | undefined;
  afterEach(() => closeServer(held));

  it('passes a free port and refuses a taken one', async () => {
    held = createServer();
    await listenOnLoopback(held);
    const port = (held.address() as AddressInfo).port;
    await expect(assertPortFree(port)).rejects.toThrow(UsageError);
    await closeServer(held);
    held = undefined;
    await expect(assertPortFree(port)).resolves.toBeUndefined();
  });
});

describe('lockDataDir', () => {
  it('takes a free folder (creating it) with this pid; release removes the lock', () => {
    const dir = join(tempDir(), 'data');
    const lockPath = join(dir, DATA_DIR_LOCK_FILE);
    const lock = lockDataDir(dir);
    expect(readFileSync(lockPath, 'utf8')).toBe(String(process.pid));
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
  });

  it('refuses a folder whose lock names a live process', () => {
    const dir = tempDir();
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), String(process.ppid));
    expect(() => lockDataDir(dir)).toThrow(UsageError);
    expect(() => lockDataDir(dir)).toThrow(`pid ${process.ppid}`);
  });

  it.each([
    ['a process that is gone', () => String(deadPid())],
    ['no pid (a twin killed while taking it)', () => ''],
  ])('takes over a stale lock naming %s', (_case, staleContent) => {
    const dir = tempDir();
    const lockPath = join(dir, DATA_DIR_LOCK_FILE);
    writeFileSync(lockPath, staleContent());
    const lock = lockDataDir(dir);
    expect(readFileSync(lockPath, 'utf8')).toBe(String(process.pid));
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
  });

  it('does not remove a lock another twin has since taken over', () => {
    const dir = tempDir();
    const lockPath = join(dir, DATA_DIR_LOCK_FILE);
    const lock = lockDataDir(dir);
    writeFileSync(lockPath, String(process.ppid));
    lock.release();
    expect(readFileSync(lockPath, 'utf8')).toBe(String(process.ppid));
  });

  it('is released when its process exits', () => {
    const dir = tempDir();
    const script = `require(${JSON.stringify(join(ROOT, 'packages/webhook-inbox-local', 'src', 'twin', 'usage.ts'))}).lockDataDir(${JSON.stringify(dir)});`;
    const child = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, TS_NODE_PROJECT: 'tsconfig.dev.json' },
      encoding: 'utf8',
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(false);
  });
});
