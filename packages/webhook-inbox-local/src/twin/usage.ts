/**
 * What the twin's commands (`npm start`, `npm run chaos`, `webhook-inbox-local`) share for a
 * mistake of the caller's: one clear line and exit code 2, checked before anything starts, instead
 * of a stack trace from deep inside the twin.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs, ParseArgsConfig } from 'node:util';
import { TemplateError } from '../aws/cloudformation/template-error';

/** A mistake in how the command was called: its message is one line that says what to do instead. */
export class UsageError extends Error {
  /** @param usage printed after the message when the options themselves are garbled */
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Runs an entry point: a number it returns is the exit code, nothing keeps the process running
 * (it serves until interrupted). A UsageError exits 2 with its message; a TemplateError (what the
 * app's template holds that cannot run locally, named by stack, resource and property) exits 1
 * with its message, the one line that tells the app's author what to change; anything else exits
 * 1 with its stack.
 */
export function runMain(main: () => Promise<number | void>): void {
  main().then(
    (code) => {
      if (code !== undefined) process.exit(code);
    },
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(error.usage ? `${error.message}\n${error.usage}` : error.message);
        process.exit(2);
      }
      console.error(error instanceof TemplateError ? `error: ${error.message}` : error);
      process.exit(1);
    },
  );
}

/** Fails with a UsageError when 127.0.0.1:port is taken, so the twin does not fail halfway through starting. */
export async function assertPortFree(port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? 'is already in use' : `cannot be listened on (${error.code ?? error.message})`;
      reject(new UsageError(`--port ${port} ${reason} on 127.0.0.1; pick another with --port N, or --port 0 for a free one`));
    });
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

/** The file in a data folder naming the process of the twin that uses it. */
export const DATA_DIR_LOCK_FILE = 'twin.lock';

export interface DataDirLock {
  /** Removes the lock (also done on process exit); once only. */
  release(): void;
}

/**
 * Takes `dir` for this process, so two twins never write one DynamoDB store. A lock whose process
 * is gone (a twin that was killed) is stale and taken over; one held by a live process is a UsageError.
 */
export function lockDataDir(dir: string): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const lockPath = join(dir, DATA_DIR_LOCK_FILE);
  const ownContent = String(process.pid);
  for (;;) {
    try {
      // 'wx' creates the file only if there is none: of twins starting at once, one gets it.
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, ownContent);
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = readLock(lockPath);
    if (held === undefined) continue;
    const holder = Number(held);
    if (Number.isSafeInteger(holder) && holder > 0 && isAlive(holder)) {
      throw new UsageError(`--data ${dir} is in use by a running twin (pid ${holder}, see ${lockPath}); stop it or pick another folder`);
    }
    removeStaleLock(lockPath, held);
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    // Only our own lock: after a takeover the file belongs to another twin.
    if (readLock(lockPath) === ownContent) rmSync(lockPath, { force: true });
  };
  process.once('exit', release);
  return { release };
}

/** The lock's content, or undefined when there is no lock (any more). */
function readLock(lockPath: string): string | undefined {
  try {
    return readFileSync(lockPath, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Removes the lock judged stale with content `staleContent`. Moved aside first and checked: if a
 * twin replaced it since it was read, that twin's lock is put back rather than deleted.
 */
function removeStaleLock(lockPath: string, staleContent: string): void {
  const claimed = `${lockPath}.${process.pid}.stale`;
  try {
    renameSync(lockPath, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (readLock(claimed) === staleContent) rmSync(claimed, { force: true });
  else renameSync(claimed, lockPath);
}

/** Whether a process with this pid exists (EPERM: it does, under another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a strict parse of `O` gives. */
export type StrictValues<O extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>
>['values'];

/** The options of a command line (node:util parseArgs, strict, no positionals): a garbled one is a UsageError, then the usage. */
export function parseCommandLine<O extends NonNullable<ParseArgsConfig['options']>>(options: O, usage: string, args: readonly string[]): StrictValues<O> {
  try {
    return parseArgs({ args: [...args], options, strict: true as const, allowPositionals: false as const }).values;
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}

/** A `--port` value: a port number, 0 for a free one. */
export function portOption(text: string, usage: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port wants a port number, got "${text}"`, usage);
  return port;
}

/** The `--secret NAME=VALUE` pairs, by name. */
export function secretOptions(pairs: readonly string[] | undefined, usage: string): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--secret wants NAME=VALUE, got "${pair}"`, usage);
    secrets[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return secrets;
}

/** A `--time-scale` value: a positive number. */
export function timeScaleOption(text: string, usage: string): number {
  const scale = Number(text);
  if (!(scale > 0)) throw new UsageError(`--time-scale wants a positive number, got "${text}"`, usage);
  return scale;
}
