/**
 * `webhook-inbox reconcile --until-settled` against a running twin, in a process of its own,
 * whose reconciler polls a fake Answerline task API: the shipped ops CLI invokes the twin's
 * reconciler through its Lambda endpoint, run after run, until the ledger has nothing due and
 * the provider's `GET /v1/async/status` reports no task queued or processing.
 *
 * The rule, stated here on its own: reconciliation is done only when both say nothing is left;
 * the command exits 0 then, and 1 with what is left when its timeout comes first. A task the
 * provider finished without a delivery reaching the inbox is recovered by the polls, once.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SubmissionLedger } from '../../../../client';
import type { TwinProcessReady, TwinProcessRequest } from '../support/twin-process';
import { startTwinProcess, TwinProcessHandle } from '../support/twin-process-handle';
import { DeliveryStatus } from '../../../../lib/contract';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** Completes on the fourth poll: queued, then processing twice. */
const SLOW_TASK = 'tsk_settle_slow';
/** Fails on its second poll. */
const FAILING_TASK = 'tsk_settle_failing';

let twinProcess: TwinProcessHandle;
let twin: TwinProcessReady;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'twin-reconcile-'));
  const request: TwinProcessRequest = {
    // The schedule never fires during the test: only the CLI's runs poll, so each run is one step of the scripts.
    options: { port: 0, providers: ['answerline'], stateDir, timing: { processorTimeoutSeconds: 5, sweepAfterSeconds: 30, reconcileEverySeconds: 3600 } },
    answerlineTasks: [
      { id: SLOW_TASK, idempotencyKey: 'job-settle-slow', status: ['QUEUED', 'PROCESSING', 'PROCESSING', 'COMPLETED'] },
      { id: FAILING_TASK, idempotencyKey: 'job-settle-failing', status: ['PROCESSING', 'FAILED'] },
    ],
  };
  twinProcess = await startTwinProcess(request);
  twin = twinProcess.ready;
  const config = JSON.parse(readFileSync(twin.opsConfigPath, 'utf8')) as { inboxTable: string; endpoints: { dynamodb: string; region: string } };
  const client = new DynamoDBClient({
    endpoint: config.endpoints.dynamodb,
    region: config.endpoints.region,
    credentials: { accessKeyId: 'app', secretAccessKey: 'app' },
  });
  // As the app that submitted the tasks records them, due a second after submission.
  const ledger = new SubmissionLedger({ client, tableName: config.inboxTable, horizonSeconds: { answerline: 1 } });
  const submittedAt = Date.now() - 60_000;
  for (const taskId of [SLOW_TASK, FAILING_TASK]) {
    expect(await ledger.recordSubmission({ provider: 'answerline', taskId, submittedAt })).toMatchObject({ outcome: 'recorded' });
  }
  client.destroy();
}, 120_000);

afterAll(async () => {
  await twinProcess?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The shipped ops CLI against the twin (asynchronously: the twin answers from this process's children). */
function cli(...args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'assets', 'cli', 'webhook-inbox.js'), ...args, '--config', twin.opsConfigPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface UntilSettledJson {
  readonly settled: boolean;
  readonly runs: number;
  readonly left: {
    readonly unsettled: { readonly count: number };
    readonly providers: readonly { readonly provider: string; readonly queuedTasks?: number; readonly processingTasks?: number; readonly error?: string }[];
  };
}

test('a timeout that comes before the provider is done exits 1 and says what is left', async () => {
  // The interval between runs (5 s) is longer than the timeout: one run, then the verdict.
  const run = await cli('reconcile', '--until-settled', '--timeout', '2', '--json');
  expect(run.code).toBe(1);
  const report = JSON.parse(run.stdout) as UntilSettledJson;
  expect(report.settled).toBe(false);
  expect(report.runs).toBe(1);
  // One poll each, both answered "not final yet"; the provider has moved the slow task to processing
  // and finished the failing one, which the next poll learns.
  expect(report.left.providers).toEqual([{ provider: 'answerline', queuedTasks: 0, processingTasks: 1 }]);
  expect(report.left.unsettled.count).toBe(2);
}, 60_000);

test('it runs the reconciler until the ledger and the provider both say nothing is left, then exits 0', async () => {
  const run = await cli('reconcile', '--until-settled', '--timeout', '120');
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  // One progress line per run: the failing task's next poll settles it; the slow task needs three.
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(4);
  expect(lines[0]).toMatch(/^run 1 \(\d+ s\): 1 submission unsettled; answerline: 0 queued, 1 processing$/);
  expect(lines[1]).toMatch(/^run 2 \(\d+ s\): 1 submission unsettled; answerline: 0 queued, 0 processing$/);
  expect(lines[2]).toMatch(/^run 3 \(\d+ s\): 0 submissions unsettled; answerline: 0 queued, 0 processing$/);
  expect(lines[3]).toBe('settled after 3 runs');

  // Both tasks were recovered by the polls, each decided once, with what the provider answered last.
  const inspect = await cli('inspect', `answerline#${SLOW_TASK}`, '--json');
  expect(inspect.code).toBe(0);
  expect(JSON.parse(inspect.stdout)).toMatchObject({ row: { status: DeliveryStatus.PROCESSED, attempts: 1 }, job: { status: 'COMPLETED', taskId: SLOW_TASK } });
  const events = await cli('events', '--limit', '1000', '--json');
  expect(events.code).toBe(0);
  const decided = (JSON.parse(events.stdout) as { detailType: string; detail: { taskId?: string; status?: string; recovered?: boolean } }[])
    .filter((event) => event.detailType === 'JobResultDecided')
    .map(({ detail }) => `${detail.taskId} ${detail.status} recovered=${detail.recovered}`)
    .sort();
  expect(decided).toEqual([`${FAILING_TASK} FAILED recovered=true`, `${SLOW_TASK} COMPLETED recovered=true`]);
}, 180_000);
