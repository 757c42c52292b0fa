/**
 * Runs a shipped handler bundle the way Lambda does, for the local twin: each execution
 * environment is its own process (`worker.cjs`) with the function's environment
 * variables, loads the bundle once (cold start), serves one invocation at a time, and is
 * replaced when it crashes or runs past its timeout. A pool of environments gives concurrency.
 */
import { ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

export interface LambdaHostOptions {
  /** The function's name, as handlers see it in their context. */
  readonly functionName: string;
  /** Path of the bundle (`assets/<name>/index.mjs`). */
  readonly bundlePath: string;
  /** The export the bundle's handler is (the part of the function's `Handler` after the last dot). @default 'handler' */
  readonly handlerExport?: string;
  /** The function's memory size: the environment's heap is capped near it. */
  readonly memoryMb?: number;
  /** The function's environment variables (on top of the twin's process environment). */
  readonly environment: Record<string, string>;
  /** How many execution environments may run at once. */
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  /** Where the function's log lines go (CloudWatch Logs, in AWS); the twin's own stdout by default. */
  readonly logs?: NodeJS.WritableStream;
}

/** Fault to inject into one invocation: SIGKILL the environment after the n-th successful call of an AWS operation. */
export interface CrashAfter {
  /** The `X-Amz-Target` of the operation, e.g. `DynamoDB_20120810.PutItem`. */
  readonly target: string;
  readonly count?: number;
}

export class SandboxCrashedError extends Error {
  override readonly name = 'SandboxCrashed';
}

export class InvocationTimeoutError extends Error {
  override readonly name = 'InvocationTimeout';
}

/**
 * The error a handler threw, carried across the process boundary under its own type (`name`), as
 * Lambda reports it in the invocation's `errorType`; `trace` is its stack, line by line.
 */
export class HandlerError extends Error {
  constructor(
    errorType: string,
    message: string,
    readonly trace: readonly string[] = [],
  ) {
    super(message);
    this.name = errorType;
  }
}

interface Sandbox {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  busy: boolean;
  /** Killed (a timeout) but not reaped yet: never handed out again. */
  killed?: boolean;
}

interface Waiter {
  resolve(sandbox: Sandbox): void;
}

const WORKER = join(__dirname, 'worker.cjs');
/** How long after the deadline the host kills an environment that did not kill itself. */
const TIMEOUT_BACKSTOP_MS = 1_000;

export class LambdaHost {
  readonly stats = { invocations: 0, coldStarts: 0, crashes: 0, timeouts: 0 };
  private readonly sandboxes = new Set<Sandbox>();
  private readonly waiting: Waiter[] = [];
  private stopped = false;

  constructor(private readonly options: LambdaHostOptions) {}

  /** How many execution environments may run at once. */
  get concurrency(): number {
    return this.options.concurrency ?? 1;
  }

  /** Invokes the handler with `event` in a free environment (starting one if allowed). */
  async invoke<T = unknown>(event: unknown, fault?: { crashAfter?: CrashAfter }): Promise<T> {
    const sandbox = await this.acquire();
    this.stats.invocations++;
    const id = randomUUID();
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    const started = Date.now();
    const timedOut = () => {
      this.stats.timeouts++;
      return new InvocationTimeoutError(`${this.options.functionName} timed out after ${timeoutMs} ms`);
    };
    try {
      return await new Promise<T>((resolve, reject) => {
        // The environment kills itself at its deadline (worker.cjs); this is the backstop.
        const timer = setTimeout(() => {
          sandbox.killed = true;
          sandbox.process.kill('SIGKILL');
          cleanup();
          reject(timedOut());
        }, timeoutMs + TIMEOUT_BACKSTOP_MS);
        const onMessage = (message: { type: string; id?: string; result?: T; error?: { name?: string; message?: string; stack?: string[] } }) => {
          if (message.id !== id) return;
          cleanup();
          if (message.type === 'result') resolve(message.result as T);
          else reject(new HandlerError(message.error?.name ?? 'Error', message.error?.message ?? '', message.error?.stack));
        };
        const onExit = () => {
          cleanup();
          reject(
            Date.now() - started >= timeoutMs
              ? timedOut()
              : new SandboxCrashedError(`${this.options.functionName}: the execution environment died during the invocation`),
          );
        };
        const cleanup = () => {
          clearTimeout(timer);
          sandbox.process.off('message', onMessage);
          sandbox.process.off('exit', onExit);
        };
        sandbox.process.on('message', onMessage);
        sandbox.process.once('exit', onExit);
        // The environment can die between being handed out and this send (it killed itself after its
        // last invocation's answer); the channel error then fails this invocation like a crash.
        sandbox.process.send({ type: 'invoke', id, event, functionName: this.options.functionName, timeoutMs, crashAfter: fault?.crashAfter }, (error) => {
          if (!error) return;
          cleanup();
          reject(new SandboxCrashedError(`${this.options.functionName}: the execution environment was gone before the invocation started`));
        });
      });
    } finally {
      this.release(sandbox);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.sandboxes].map((sandbox) => this.kill(sandbox)));
  }

  private async acquire(): Promise<Sandbox> {
    for (const sandbox of this.sandboxes) {
      if (!sandbox.busy && this.alive(sandbox)) {
        sandbox.busy = true;
        await sandbox.ready;
        return sandbox;
      }
    }
    if (this.sandboxes.size < (this.options.concurrency ?? 1)) {
      const sandbox = this.spawn();
      sandbox.busy = true;
      await sandbox.ready;
      return sandbox;
    }
    const sandbox = await new Promise<Sandbox>((resolve) => this.waiting.push({ resolve }));
    await sandbox.ready;
    return sandbox;
  }

  private alive(sandbox: Sandbox): boolean {
    return !sandbox.killed && sandbox.process.connected && sandbox.process.exitCode === null && sandbox.process.signalCode === null;
  }

  private release(sandbox: Sandbox): void {
    const alive = this.alive(sandbox);
    const next = this.waiting.shift();
    if (!next) {
      sandbox.busy = false;
      return;
    }
    if (alive) {
      next.resolve(sandbox);
    } else {
      const replacement = this.spawn();
      replacement.busy = true;
      next.resolve(replacement);
    }
  }

  private spawn(): Sandbox {
    if (this.stopped) throw new Error(`${this.options.functionName} is stopped`);
    this.stats.coldStarts++;
    const child = fork(WORKER, [this.options.bundlePath, this.options.handlerExport ?? 'handler'], {
      // A plain Node.js process, as Lambda's: not the parent's flags (ts-node's loader costs ~0.5 s per cold start).
      execArgv: this.options.memoryMb ? [`--max-old-space-size=${this.options.memoryMb}`] : [],
      env: { ...process.env, ...this.options.environment, AWS_LAMBDA_FUNCTION_NAME: this.options.functionName },
      stdio: ['ignore', this.options.logs ? 'pipe' : 'inherit', this.options.logs ? 'pipe' : 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    if (this.options.logs) {
      child.stdout?.pipe(this.options.logs, { end: false });
      child.stderr?.pipe(this.options.logs, { end: false });
    }
    const ready = new Promise<void>((resolve, reject) => {
      child.once('message', (message: { type: string; message?: string }) =>
        message.type === 'ready' ? resolve() : reject(new Error(`${this.options.functionName} failed to start: ${message.message}`)),
      );
      child.once('exit', () => reject(new SandboxCrashedError(`${this.options.functionName}: the environment died while starting`)));
    });
    ready.catch(() => undefined);
    const sandbox: Sandbox = { process: child, ready, busy: false };
    // A send to an environment that just died reports through its callback; the exit handler cleans up.
    child.on('error', () => undefined);
    this.sandboxes.add(sandbox);
    child.once('exit', (_code, signal) => {
      this.sandboxes.delete(sandbox);
      if (signal === 'SIGKILL' && !this.stopped) this.stats.crashes++;
    });
    return sandbox;
  }

  private kill(sandbox: Sandbox): Promise<void> {
    if (sandbox.process.exitCode !== null || sandbox.process.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      sandbox.process.once('exit', () => resolve());
      sandbox.process.kill('SIGKILL');
    });
  }
}
