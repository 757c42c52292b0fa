/**
 * Runs a template twin outside the test worker, as the twin's own tests must: it imports its ESM
 * emulators, which jest's module sandbox does not load. `startTemplateTwinProcess` runs
 * `startTemplateTwin` itself (test/support/template-twin-child.ts) and asks it for the IAM gateway's
 * record; the ready line's shape and the waits are shared with the tests of the companion package's
 * command.
 */
import { ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { standardWebhooksHeaders, unixSeconds } from '#twin/testing';
import type { TemplateTwinOptions } from '#twin/testing/twin';
import type { ChildMessage, ChildRequest, IamRecord, SnsConfirmation } from './template-twin-child';

export type { IamRecord, SnsConfirmation } from './template-twin-child';

export const ROOT = join(__dirname, '..', '..');

/** The parts of the twin's ready line (packages/webhook-inbox-local/src/twin/twin.ts `readyLine`) the tests read. */
export interface ReadyLine {
  readonly ready: true;
  /** Every inbox's webhook URLs and secrets by provider name (`<inbox path>/<provider>` for a name several inboxes have). */
  readonly endpoints: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly services: { readonly dynamodb: string; readonly sqs: string; readonly sns: string; readonly iamGateway?: string };
  readonly snsCaFile: string;
  readonly region: string;
  readonly inboxes: readonly {
    readonly stack: string;
    /** The inbox's construct path. */
    readonly path: string;
    readonly name: string;
    readonly providers: readonly {
      readonly name: string;
      readonly adapter: string;
      readonly url: string;
      readonly secret: string;
      readonly topicArns?: readonly string[];
    }[];
    readonly tables: { readonly inbox: string; readonly results: string };
    readonly queues: { readonly work: string; readonly deadLetter?: string };
    readonly bus?: string;
    /** Its ops CLI configuration file. */
    readonly opsConfig: string;
  }[];
  readonly logs: string;
  readonly events: string;
  /** The local console's page; its snapshot is at `<console>/api/snapshot`. */
  readonly console?: string;
}

/** The environment of a twin's process: not the endpoints of the emulators the test run started, since a twin starts its own. */
/**
 * Posts a completed Answerline result for `taskId`, signed as Answerline signs (Standard Webhooks),
 * to the first inbox's `answerline` provider of a running twin; returns the answer.
 */
export function postAnswerlineResult(ready: ReadyLine, taskId = `tsk_${randomUUID().slice(0, 8)}`): Promise<Response> {
  const answerline = ready.inboxes[0].providers.find((provider) => provider.name === 'answerline')!;
  const body = JSON.stringify({
    task: { id: taskId, status: 'COMPLETED', idempotencyKey: 'report-1', createdAt: new Date().toISOString() },
    response: { result: { answer: 'forty-two' } },
  });
  const headers = standardWebhooksHeaders(answerline.secret, `msg_${randomUUID()}`, unixSeconds(), Buffer.from(body));
  return fetch(answerline.url, { method: 'POST', headers, body });
}

export function twinEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_ENDPOINT_URL')));
}

export interface TemplateTwinProcess {
  readonly ready: ReadyLine;
  /** What the IAM gateway judged so far. */
  iam(): Promise<IamRecord>;
  /** What the twin printed on stderr so far (progress, warnings, denials). */
  printed(): string;
  /** The subscription confirmations the SNS stand-in's host was asked for so far, in order. */
  snsConfirmations(): Promise<readonly SnsConfirmation[]>;
  stop(): Promise<void>;
}

export async function startTemplateTwinProcess(options: Omit<TemplateTwinOptions, 'log'>): Promise<TemplateTwinProcess> {
  const child = fork(join(__dirname, 'template-twin-child.ts'), [JSON.stringify(options)], {
    cwd: ROOT,
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    env: { ...twinEnvironment(), TS_NODE_PROJECT: join(ROOT, 'tsconfig.dev.json') },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const first = await nextMessage(child, () => stderr);
  if (first.type !== 'ready') {
    child.kill('SIGKILL');
    throw new Error(`the twin did not start: ${first.type === 'failed' ? first.error : first.type}\n${stderr}`);
  }
  const ask = (request: ChildRequest) => {
    child.send(request);
    return nextMessage(child, () => stderr);
  };
  return {
    ready: first.ready as unknown as ReadyLine,
    printed: () => stderr,
    async iam() {
      const answer = await ask({ type: 'iam' });
      if (answer.type !== 'iam') throw new Error(`the twin answered ${answer.type} to a question about IAM`);
      return answer.record;
    },
    async snsConfirmations() {
      const answer = await ask({ type: 'snsConfirmations' });
      if (answer.type !== 'snsConfirmations') throw new Error(`the twin answered ${answer.type} to a question about SNS confirmations`);
      return answer.confirmations;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const request: ChildRequest = { type: 'stop' };
      child.send(request);
      await exited;
    },
  };
}

function nextMessage(child: ChildProcess, output: () => string): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      reject(new Error(`the twin's process exited (${code}):\n${output()}`));
    };
    const onMessage = (message: ChildMessage) => {
      child.off('exit', onExit);
      resolve(message);
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Polls `probe` until it returns a value, at most `timeoutMs`; then fails with `what`. */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The lines of a function's log file (`<logs>/<stack>-<function path>.log`), none while it does not exist. */
export function functionLogLines(logDir: string, stack: string, functionPath: string): string[] {
  const file = join(logDir, `${stack}-${functionPath.replace(/[^\w.-]+/g, '-')}.log`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}
