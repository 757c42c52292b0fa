/**
 * The demo on an inbox that keeps no record of refused requests (`rejectionRecordsPerMinute: 0`,
 * as when the verifier's time budget runs out on a busy machine): its forged delivery is still
 * refused, and the demo says that no rejection record was written, on the line after the forged
 * delivery and in its summary.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatSummary } from '../../src/twin/demo';
import type { TwinProcessReady } from '../support/twin-process';
import { startTwinProcess, TwinProcessHandle } from '../support/twin-process-handle';

let twinProcess: TwinProcessHandle;
let twin: TwinProcessReady;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'twin-demo-'));
  twinProcess = await startTwinProcess({ options: { port: 0, providers: ['answerline'], stateDir, rejectionRecordsPerMinute: 0 }, demo: true });
  twin = twinProcess.ready;
}, 120_000);

afterAll(async () => {
  await twinProcess?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

test('a forged delivery that leaves no rejection record is said so where it is sent and in the summary', () => {
  expect(twin.demo!.answers.bad_signature).toBe(1);
  expect(twin.demo!.forged).toEqual({ refused: 1, recorded: 0 });
  const log = twin.demoLog!;
  const forgedAt = log.findIndex((line) => /bad_signature\s+answerline\s+forged/.test(line));
  expect(forgedAt).toBeGreaterThan(0);
  expect(log[forgedAt + 1]).toMatch(/^\s+no rejection record: .*time budget/);
  expect(formatSummary(twin.demo!)).toMatch(/Forged deliveries: 1 refused, 0 left a rejection record; 1 without one: /);
});
