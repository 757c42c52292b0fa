/**
 * A small fixed-seed fault-injection run (`npm run chaos` at a few hundred deliveries, time
 * compressed further): the local twin, three simulated providers and every failure mode the
 * design lists (docs/DESIGN.md#failure-modes); the auditor must find nothing lost, nothing processed twice, no wrong winner, no altered
 * body accepted and nothing sensitive in the logs, and every fault kind must have been injected.
 *
 * The run is the `npm run chaos` entry itself, in its own process: the twin imports its ESM
 * emulators and forks its Lambda environments, which jest's module sandbox does not allow, and the
 * run's load stays out of the test worker.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChaosReport, FAULT_KINDS, formatReport, scanLogs } from '../../src/chaos/audit';
import { makePlan } from '../../src/chaos/plan';
import { chaosProfile } from '../../src/chaos/profile';
import { standardWebhooksSignature } from '../../src/providers/signing';
import { STANDARD_WEBHOOKS_VECTOR } from '../../../../test/support/senders';

const SEED = 20_261_129;
const ROOT = join(__dirname, '..', '..', '..', '..');

/** Runs `npm run chaos` (src/cli.ts chaos) with `args`; its report, and its output for a failure message. */
async function runChaosCli(args: readonly string[]): Promise<{ report?: ChaosReport; output: string; code: number | null }> {
  const dir = mkdtempSync(join(tmpdir(), 'chaos-test-'));
  const reportFile = join(dir, 'report.json');
  // Not the emulator endpoints of the test run: the twin starts its own.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_ENDPOINT_URL')));
  try {
    const child = spawn(
      process.execPath,
      [
        require.resolve('ts-node/dist/bin.js'),
        '--transpile-only',
        '-P',
        'tsconfig.dev.json',
        'packages/webhook-inbox-local/src/cli.ts',
        'chaos',
        ...args,
        '--report',
        reportFile,
      ],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    let report: ChaosReport | undefined;
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as ChaosReport;
    } catch {
      report = undefined;
    }
    return { report, output, code };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('fault-injection run', () => {
  let report: ChaosReport;
  let output = '';

  beforeAll(async () => {
    // Its downstream outage alone lasts 48 s, and the rows it delays come back with the sweep. The drain allowance is for an overloaded machine: three such runs at once
    // on 2 cores (dozens of processor timeouts, each a cold start) settle in 118–138 s, not in 60 s of drain; and for a poison
    // row the breaker deferred, which dies only after the sweep brings it back, and whose message then needs its last receives
    // to reach the DLQ (about 100 s after the drain began, in one run).
    const run = await runChaosCli(['--seed', String(SEED), '--deliveries', '300', '--speed', '4', '--drain-seconds', '120']);
    output = run.output;
    if (!run.report) throw new Error(`the chaos run produced no report (exit ${run.code}):\n${output.slice(-4000)}`);
    report = run.report;
  }, 360_000);

  it('loses nothing, processes nothing twice, picks every winner by rule and leaks nothing', () => {
    // The whole table on failure: the figures say what went wrong.
    expect({ violations: report.violations, table: report.violations.length ? `${formatReport(report)}\n${output.slice(-2000)}` : '' }).toEqual({
      violations: [],
      table: '',
    });
  });

  it('injects every failure mode the design lists (docs/DESIGN.md#failure-modes) at least once', () => {
    // Of AWS's faults, only those on calls some function made: at this speed the processor's lease rarely leaves the
    // third to spare a batched completion needs (the handler tests inject UnprocessedItems on their own).
    const missing = FAULT_KINDS.filter((kind) => !(report.faults[kind] > 0) && !report.uncalled.includes(kind));
    expect(missing).toEqual([]);
    expect(report.uncalled.filter((kind) => kind !== 'unprocessed_items')).toEqual([]);
  });

  it('recovers by polling every result the providers gave up on, and dead-letters the poison rows', () => {
    const figure = (name: string) => report.figures.find((f) => f.name === name)?.values.total ?? 0;
    expect(figure('results the provider gave up on')).toBeGreaterThan(0);
    expect(figure('recovered by polling')).toBeGreaterThanOrEqual(figure('results the provider gave up on') - figure('  stored before the provider gave up'));
    expect(figure('dead-lettered poison rows')).toBe(figure('  poison results'));
    expect(figure('lost')).toBe(0);
  });

  it('holds every row through a downstream outage longer than its retry budget: the breaker opens, nothing but poison is DEAD', () => {
    const figure = (name: string) => report.figures.find((f) => f.name === name)?.values.total ?? 0;
    expect(report.faults.downstream_outage).toBe(1);
    expect(figure('breaker openings (BreakerOpened)')).toBeGreaterThan(0);
    expect(figure('rows the downstream outage touched')).toBeGreaterThan(0);
    expect(figure('  delayed past its end')).toBeGreaterThan(0);
    expect(figure('  DEAD (poison rows only)')).toBe(figure('  poison results'));
  });

  it("pages, from the template's alarms, for the dead deliveries, the signature flood, the overdue submissions and the submission near its deadline", () => {
    const figure = (name: string) => report.figures.find((f) => f.name === name)?.values.total ?? 0;
    expect({
      dead: figure('alarm DeadDeliveries reached ALARM'),
      signatures: figure('alarm SignatureFailures reached ALARM'),
      overdue: figure('alarm OverdueSubmissions reached ALARM'),
      nearDeadline: figure('alarm SubmissionsNearDeadline reached ALARM'),
    }).toEqual({ dead: 1, signatures: 1, overdue: 1, nearDeadline: 1 });
  });

  it('stores every request of every batch once with one effect, settles each batch once, and announces the deadline passed unread', () => {
    const figure = (name: string) => report.figures.find((f) => f.name === name)?.values.total ?? 0;
    const settled = report.figures.filter((f) => f.name.startsWith('batches settled once')).reduce((sum, f) => sum + f.values.total, 0);
    expect(figure('batch requests (children)')).toBeGreaterThan(100);
    expect(figure('  stored once with one BatchChildSettled')).toBe(figure('batch requests (children)'));
    expect(settled).toBe(4);
    expect(figure('deadlines passed unread, announced once')).toBe(1);
  });

  it('ran every function under its own role policy: every AWS call judged, none denied', () => {
    const figure = (name: string) => report.figures.find((f) => f.name === name)?.values.total ?? 0;
    expect(figure('AWS calls judged by the IAM gateway')).toBeGreaterThan(1000);
    expect(figure('AWS calls denied (a grant the template lacks)')).toBe(0);
  });
});

describe("the chaos run's parts", () => {
  it('draws the same plan from the same seed', () => {
    const profile = chaosProfile(4);
    const a = makePlan(7, 500, profile);
    const b = makePlan(7, 500, profile);
    expect(JSON.stringify({ ...a, concurrentCopies: [...a.concurrentCopies], crashAfterWrite: [...a.crashAfterWrite] })).toBe(
      JSON.stringify({ ...b, concurrentCopies: [...b.concurrentCopies], crashAfterWrite: [...b.crashAfterWrite] }),
    );
    expect(makePlan(8, 500, profile).answerlineJobs).not.toEqual(a.answerlineJobs);
  });

  it('signs Standard Webhooks deliveries as the official test vector says', () => {
    const { secret, id, timestamp, payload, signature } = STANDARD_WEBHOOKS_VECTOR;
    expect(standardWebhooksSignature(secret, id, timestamp, Buffer.from(payload))).toBe(signature);
  });

  it('finds a signature, a secret or body content in a log line, and nothing in a clean one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chaos-scan-'));
    try {
      const token = 'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
      writeFileSync(
        join(dir, 'verifier.log'),
        [
          '{"message":"delivery","reason":"bad_signature","detail":"header webhook-signature matches no signing secret"}',
          `{"message":"delivery","note":"${token}"}`,
          '{"message":"delivery","body":"{\\"answer\\":\\"pii_0123456789abcdef\\"}"}',
          '{"message":"delivery","key":"whsec_not-really-a-secret-but-long"}',
          '{"headers":{"webhook-signature":"v1,xyz"}}',
        ].join('\n'),
      );
      const leaks = scanLogs(dir, { texts: ['whsec_not-really-a-secret-but-long'], signatureTokens: new Set([token]) });
      expect(leaks).toEqual([
        'verifier.log:2: a signature',
        'verifier.log:3: body content',
        'verifier.log:4: a secret or API key',
        'verifier.log:5: a signature header',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
