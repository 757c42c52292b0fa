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
import { audit, ChaosReport, Evidence, FAULT_KINDS, formatReport, outranks, scanLogs } from '../../src/chaos/audit';
import { chaosProfile, makePlan } from '../../src/chaos/plan';
import { standardWebhooksSignature } from '../../src/providers/signing';
import { STANDARD_WEBHOOKS_VECTOR } from '../../../../test/support/senders';
import { logReference } from '../../../../lambda/shared/runtime/digest';

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
    // About 50 s alone. The drain allowance is for an overloaded machine: three such runs at once
    // on 2 cores (dozens of processor timeouts, each a cold start) settle in 118–138 s, not in 60 s of drain.
    const run = await runChaosCli(['--seed', String(SEED), '--deliveries', '300', '--speed', '4', '--drain-seconds', '90']);
    output = run.output;
    if (!run.report) throw new Error(`the chaos run produced no report (exit ${run.code}):\n${output.slice(-4000)}`);
    report = run.report;
  }, 210_000);

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

describe('the auditor', () => {
  let logDir: string;
  beforeEach(() => {
    logDir = mkdtempSync(join(tmpdir(), 'chaos-audit-'));
  });
  afterEach(() => rmSync(logDir, { recursive: true, force: true }));

  const delivery = (id: string, body: string, kind: 'result' | 'poison' = 'result') => ({
    provider: 'answerline',
    id: `msg_${id}`,
    eventKey: `answerline#${id}`,
    kind,
    body: Buffer.from(body),
    digest: `digest-of-${id}`,
    queuedAt: 0,
    state: 'delivered' as const,
    attempts: [{ at: 1, status: 202, ms: 1, copies: 1 }],
  });
  const task = (id: string, idempotencyKey: string, createdAt: string) => ({
    id,
    idempotencyKey,
    jobKey: idempotencyKey.replace(/-r[1-9]\d{0,2}$/, ''),
    createdAt,
    status: 'COMPLETED',
    delivery: delivery(id, id),
  });
  const effectOf = (id: string, jobKey: string) => ({
    detailType: 'JobResultDecided',
    effectKey: `k-${id}`,
    eventKey: `answerline#${id}`,
    jobKey,
    taskId: id,
    status: 'COMPLETED',
    recovered: false,
  });

  /** Evidence of a run that sent `tasks`, with everything else empty unless given. */
  function evidenceOf(tasks: ReturnType<typeof task>[], rest: Partial<Evidence>): Evidence {
    return {
      plan: makePlan(1, 50, chaosProfile(4)),
      faults: {},
      deliveries: tasks.map((t) => t.delivery),
      attempts: tasks.length,
      answerlineTasks: tasks as unknown as Evidence['answerlineTasks'],
      echonovaJobs: [],
      events: [],
      echonovaWebhook: { enabled: true, consecutiveFailures: 0, disabledAt: [], enabledAt: [] },
      adversary: [],
      alteredSkipped: 0,
      rows: [],
      quarantined: [],
      submissions: [],
      results: [],
      deadLettered: [],
      effects: [],
      unavailable: [],
      batches: [],
      deadlineTaskIds: [],
      interruptedRows: new Set(),
      killedRows: new Set(),
      servedDigests: {},
      rateLimitedPolls: 0,
      logDir,
      sensitive: { texts: [], signatureTokens: new Set() },
      iam: { denials: [], evaluated: {} },
      awsCalls: { made: {}, changed: {} },
      uncalled: [],
      alarms: [],
      appStats: {},
      hostStats: {},
      errors: [],
      elapsedMs: 0,
      ...rest,
    };
  }

  it('flags a lost result, a wrong winner, an altered body and an effect sent twice', () => {
    const tasks = [
      task('t1', 'job-1', '2026-01-01T10:00:00.000Z'),
      task('t2', 'job-1-r1', '2026-01-01T10:01:00.000Z'),
      task('t3', 'job-2', '2026-01-01T10:02:00.000Z'),
    ];
    const effect = effectOf('t1', 'job-1');
    const found = audit(
      evidenceOf(tasks, {
        // t1 holds other bytes than the provider sent; t3 was never stored.
        rows: [
          { key: 'answerline#t1', status: 'PROCESSED', digest: 'something-else', recovered: false, outcome: 'winner' },
          { key: 'answerline#t2', status: 'PROCESSED', digest: 'digest-of-t2', recovered: false, outcome: 'superseded' },
        ],
        // The rule says t2 (the newer COMPLETED task); the store says t1.
        results: [{ key: 'answerline#job-1', taskId: 't1', status: 'COMPLETED' }],
        effects: [effect, effect],
      }),
    );
    const text = found.violations.join('\n');
    expect(text).toMatch(/1 completed results have no inbox row \(lost\).*answerline#t3/);
    expect(text).toMatch(/jobs have the wrong winner.*answerline#job-1: stored t1\/COMPLETED, rule says t2\/COMPLETED/);
    expect(text).toMatch(/1 rows hold a body the provider never sent.*answerline#t1/);
    expect(text).toMatch(/1 rows were processed twice.*answerline#t1/);
  });

  it('states the conflict rule on its own: COMPLETED over FAILED whatever the times, then the later created, then the greater task id', () => {
    const at = (minute: number) => Date.UTC(2026, 0, 1, 10, minute);
    const completed = (taskId: string, minute: number) => ({ taskId, status: 'COMPLETED' as const, createdMs: at(minute) });
    const failed = (taskId: string, minute: number) => ({ taskId, status: 'FAILED' as const, createdMs: at(minute) });
    expect(outranks(completed('a', 0), failed('b', 59))).toBe(true);
    expect(outranks(failed('b', 59), completed('a', 0))).toBe(false);
    expect(outranks(completed('a', 2), completed('b', 1))).toBe(true);
    expect(outranks(failed('a', 2), failed('b', 1))).toBe(true);
    expect(outranks(completed('b', 1), completed('a', 1))).toBe(true);
    expect(outranks(completed('a', 1), completed('a', 1))).toBe(false);
  });

  it('flags any AWS call the IAM gateway denied a function', () => {
    const tasks = [task('t1', 'job-1', '2026-01-01T10:00:00.000Z')];
    const denial = { principal: 'processor', message: 'User: … is not authorized to perform: dynamodb:GetItem on resource: …' };
    const found = audit(
      evidenceOf(tasks, {
        rows: [{ key: 'answerline#t1', status: 'PROCESSED', digest: 'digest-of-t1', recovered: false, outcome: 'winner' }],
        iam: { denials: [denial], evaluated: { processor: 3 } },
      }),
    );
    expect(found.violations.join('\n')).toMatch(/1 AWS calls were denied by the functions' own role policies.*dynamodb:GetItem/);
    expect(found.figures.find((figure) => figure.name.startsWith('AWS calls denied'))?.values.total).toBe(1);
  });

  it('flags a dead row the processor never counted, unless its invocation was killed before it could', () => {
    const poison = [delivery('p1', 'p1', 'poison'), delivery('p2', 'p2', 'poison')];
    const deadLine = (id: string) =>
      JSON.stringify({ level: 'ERROR', message: 'processing failed; dead-lettered', eventRef: logReference(`answerline#${id}`) });
    const deadCount = (n: number) =>
      JSON.stringify({
        _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'WebhookInbox', Dimensions: [['Inbox']], Metrics: [{ Name: 'DeadLettered', Unit: 'Count' }] }] },
        Inbox: 'i',
        DeadLettered: n,
      });
    const auditWith = (lines: string[], killedRows: Set<string>) => {
      writeFileSync(join(logDir, 'processor.log'), `${lines.join('\n')}\n`);
      return audit(
        evidenceOf([], {
          deliveries: poison,
          rows: poison.map((d) => ({ key: d.eventKey, status: 'DEAD', digest: d.digest, recovered: false })),
          deadLettered: poison.map((d) => d.eventKey),
          killedRows,
          alarms: [{ logicalId: 'InboxAlarmsDeadDeliveries5E984ACD', to: 'ALARM', at: 0 }],
        }),
      );
    };

    expect(auditWith([deadLine('p1'), deadCount(1), deadLine('p2'), deadCount(1)], new Set()).violations).toEqual([]);
    // p2 is DEAD and in the DLQ, but nothing counted it, and nothing killed its invocation.
    expect(auditWith([deadLine('p1'), deadCount(1)], new Set()).violations.join('\n')).toMatch(
      /1 poison rows died without the processor counting them.*answerline#p2/,
    );
    const killed = auditWith([deadLine('p1'), deadCount(1)], new Set(['answerline#p2']));
    expect(killed.violations).toEqual([]);
    expect(killed.notes).toContain('1 poison rows died in an invocation killed before it counted them');
    // The metric and the log lines are written together: they must agree.
    expect(auditWith([deadLine('p1'), deadLine('p2'), deadCount(1)], new Set()).violations).toEqual([
      'the processor counted 1 rows dead-lettered but logged 2',
    ]);
  });

  describe('batches and deadlines', () => {
    const BATCH = 'msgbatch_1';
    const childKey = (customId: string) => `batches#${BATCH}:${customId}`;
    const summaryKey = `batches#${BATCH}:~batch`;
    const row = (key: string) => ({ key, status: 'PROCESSED', digest: 'd', recovered: true });
    const childEffect = (customId: string, childState: string, effectKey = `k-${customId}`) => ({
      detailType: 'BatchChildSettled',
      effectKey,
      eventKey: childKey(customId),
      batchId: BATCH,
      customId,
      childState,
      recovered: true,
    });
    const summaryEffect = (batchOutcome: string) => ({
      detailType: 'BatchSettled',
      effectKey: 'k-summary',
      eventKey: summaryKey,
      batchId: BATCH,
      batchOutcome,
      recovered: true,
    });
    const batches = [
      {
        provider: 'batches',
        batchId: BATCH,
        requests: [
          { customId: 'a', state: 'succeeded' },
          { customId: 'b', state: 'canceled' },
        ],
      },
    ];
    const counts = (children: number, settled: number) =>
      writeFileSync(
        join(logDir, 'reconciler.log'),
        ['BatchChildrenRecorded', 'BatchesSettled']
          .map((name, i) =>
            JSON.stringify({
              _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'WebhookInbox', Dimensions: [['Inbox']], Metrics: [{ Name: name, Unit: 'Count' }] }] },
              Inbox: 'i',
              [name]: i === 0 ? children : settled,
            }),
          )
          .join('\n'),
      );

    it('passes a batch whose every request has one row and one effect of its state, and one partial summary', () => {
      counts(2, 1);
      const found = audit(
        evidenceOf([], {
          batches,
          rows: [row(childKey('a')), row(childKey('b')), row(summaryKey)],
          effects: [childEffect('a', 'succeeded'), childEffect('b', 'canceled'), summaryEffect('partial')],
        }),
      );
      expect(found.violations).toEqual([]);
    });

    it('flags a request without its row, one whose effect went twice or names another state, and a summary with the wrong outcome', () => {
      counts(1, 1);
      const found = audit(
        evidenceOf([], {
          batches,
          rows: [row(childKey('a')), row(summaryKey)],
          effects: [childEffect('a', 'errored'), summaryEffect('succeeded')],
        }),
      );
      const text = found.violations.join('\n');
      expect(text).toMatch(/batch requests or summaries not stored and settled exactly once/);
      expect(text).toMatch(/batches#msgbatch_1:a: effect says errored, the provider succeeded/);
      expect(text).toMatch(/batches#msgbatch_1:b: no row/);
      expect(text).toMatch(/batches#msgbatch_1:~batch: outcome succeeded, the rule says partial/);
      const twice = audit(
        evidenceOf([], {
          batches,
          rows: [row(childKey('a')), row(childKey('b')), row(summaryKey)],
          effects: [childEffect('a', 'succeeded'), childEffect('b', 'canceled'), childEffect('b', 'canceled', 'other-key'), summaryEffect('partial')],
        }),
      );
      expect(twice.violations.join('\n')).toMatch(/batches#msgbatch_1:b: 2 BatchChildSettled effects/);
    });

    it('flags a deadline passed unread that was not settled unavailable with one event, and owes the near-deadline page', () => {
      const alarms = [{ logicalId: 'InboxAlarmsSubmissionsNearDeadline0123ABCD', to: 'ALARM', at: 0 }];
      const unavailable = [{ submissionKey: 'ledger:answerline#tsk_late', effectKey: 'k', reason: 'deadline_passed' }];
      expect(
        audit(
          evidenceOf([], { deadlineTaskIds: ['tsk_late'], submissions: [{ key: 'ledger:answerline#tsk_late', state: 'UNAVAILABLE' }], unavailable, alarms }),
        ).violations,
      ).toEqual([]);
      const found = audit(evidenceOf([], { deadlineTaskIds: ['tsk_late'], submissions: [{ key: 'ledger:answerline#tsk_late', state: 'AWAITING' }] }));
      expect(found.violations.join('\n')).toMatch(/1 submissions past their deadline were not settled unavailable with one event.*tsk_late: AWAITING/);
      expect(found.violations.join('\n')).toMatch(/the SubmissionsNearDeadline alarm never reached ALARM/);
    });
  });

  it('flags an alarm that did not page for what the handlers counted', () => {
    const metricLine = (name: string, value: number) =>
      JSON.stringify({
        _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'WebhookInbox', Dimensions: [['Inbox']], Metrics: [{ Name: name, Unit: 'Count' }] }] },
        Inbox: 'i',
        [name]: value,
      });
    writeFileSync(join(logDir, 'verifier.log'), `${metricLine('AuthenticationFailed', 12)}\n`);
    writeFileSync(join(logDir, 'reconciler.log'), `${metricLine('OverdueSubmissions', 2)}\n`);
    const alarmsOf = (...ids: string[]) => ids.map((logicalId) => ({ logicalId: `InboxAlarms${logicalId}0123ABCD`, to: 'ALARM', at: 0 }));
    expect(audit(evidenceOf([], { alarms: alarmsOf('SignatureFailures', 'OverdueSubmissions') })).violations).toEqual([]);
    expect(audit(evidenceOf([], { alarms: alarmsOf('SignatureFailures') })).violations).toEqual([
      'the OverdueSubmissions alarm never reached ALARM though the reconciler counted overdue submissions',
    ]);
    // Nine refusals are not a flood: no page is owed.
    writeFileSync(join(logDir, 'verifier.log'), `${metricLine('AuthenticationFailed', 9)}\n`);
    expect(audit(evidenceOf([], { alarms: alarmsOf('OverdueSubmissions') })).violations).toEqual([]);
  });
});
