/**
 * Starts packages/webhook-inbox-local/test/support/twin-process.ts in a process of its own (jest cannot load the ESM-only
 * emulators in its workers) and waits for its ready line; `stop` ends it with SIGTERM.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TwinProcessReady, TwinProcessRequest } from './twin-process';

const ROOT = join(__dirname, '..', '..', '..', '..');

export interface TwinProcessHandle {
  readonly ready: TwinProcessReady;
  stop(): Promise<void>;
}

export async function startTwinProcess(request: TwinProcessRequest): Promise<TwinProcessHandle> {
  // Not the emulator endpoints of the test run: the twin starts its own.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_ENDPOINT_URL')));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      require.resolve('ts-node/dist/bin.js'),
      '--transpile-only',
      '-P',
      'tsconfig.dev.json',
      'packages/webhook-inbox-local/test/support/twin-process.ts',
      JSON.stringify(request),
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [line] = await Promise.race([
    createInterface({ input: child.stdout! })
      [Symbol.asyncIterator]()
      .next()
      .then((next) => [next.value as string | undefined]),
    new Promise<never>((_resolve, reject) => child.once('exit', (code) => reject(new Error(`the twin exited (${code}):\n${stderr.slice(-3000)}`)))),
  ]);
  return {
    ready: JSON.parse(line!) as TwinProcessReady,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
