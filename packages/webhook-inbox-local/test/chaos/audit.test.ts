/**
 * The chaos run's auditor, on evidence made here: it flags what it must (a lost result, a wrong
 * winner, an altered body, an effect sent twice, a denied call, a dead row nobody counted, a batch
 * or a deadline not settled once, an alarm that did not page) and passes what is right. The
 * conflict rule is stated here on its own.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logReference } from '../../../../lambda/shared/runtime/digest';
import { DeliveryStatus, RowOutcome, SubmissionState } from '../../../../lib/contract';
import { audit, Evidence, outranks } from '../../src/chaos/audit';
import { makePlan } from '../../src/chaos/plan';
import { chaosProfile } from '../../src/chaos/profile';

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
    routeFlood: [],
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
    receivedAt: new Map(),
    providerLogs: { github: [], stripe: [] },
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

describe('the auditor', () => {
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
          { key: 'answerline#t1', status: DeliveryStatus.PROCESSED, digest: 'something-else', recovered: false, outcome: RowOutcome.WINNER },
          { key: 'answerline#t2', status: DeliveryStatus.PROCESSED, digest: 'digest-of-t2', recovered: false, outcome: RowOutcome.SUPERSEDED },
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

  it('judges GitHub and Stripe from their own records: every event one row, processed once, none that no event explains', () => {
    const tasks = [task('t1', 'job-1', '2026-01-01T10:00:00.000Z')];
    const lostBody = Buffer.from('{"action":"opened","issue":{"number":1}}');
    const keptBody = Buffer.from('{"action":"opened","issue":{"number":2}}');
    // The auditor's own key: the hex SHA-256 of the bytes GitHub sent.
    const githubKey = (body: Buffer) => `github#${createHash('sha256').update(body).digest('hex')}`;
    const row = (key: string, recovered = false) => ({ key, status: DeliveryStatus.PROCESSED, digest: 'd', recovered, outcome: RowOutcome.WINNER });
    const found = audit(
      evidenceOf(tasks, {
        rows: [
          { key: 'answerline#t1', status: DeliveryStatus.PROCESSED, digest: 'digest-of-t1', recovered: false, outcome: RowOutcome.WINNER },
          row(githubKey(keptBody)),
          row('stripe#evt_kept'),
          row('stripe#evt_nobody_sent', true),
        ],
        providerLogs: {
          github: [
            { guid: 'g-lost', body: lostBody, stored: false },
            { guid: 'g-kept', body: keptBody, stored: true },
          ],
          stripe: [{ id: 'evt_kept', stored: true }],
        },
      }),
    );
    const text = found.violations.join('\n');
    expect(text).toMatch(new RegExp(`1 GitHub or Stripe events have no inbox row.*${githubKey(lostBody)} \\(lost at the endpoint\\)`));
    expect(text).toMatch(/1 GitHub or Stripe rows match no event either provider made.*stripe#evt_nobody_sent/);
    expect(text).not.toMatch(/inbox rows match no completed result/);
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
        rows: [{ key: 'answerline#t1', status: DeliveryStatus.PROCESSED, digest: 'digest-of-t1', recovered: false, outcome: RowOutcome.WINNER }],
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
          rows: poison.map((d) => ({ key: d.eventKey, status: DeliveryStatus.DEAD, digest: d.digest, recovered: false })),
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
});

describe('the auditor, of a downstream outage', () => {
  // The downstream failed every row from 10 s to 70 s; t1 was stored before it and processed after it.
  const outage = { downAt: 10_000, upAt: 70_000 };
  const tasks = [task('t1', 'job-1', '2026-01-01T10:00:00.000Z')];
  const poison = delivery('p1', 'p1', 'poison');
  const line = (fields: object) => JSON.stringify(fields);
  const breakerOpened = (n: number) =>
    line({
      _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'WebhookInbox', Dimensions: [['Inbox']], Metrics: [{ Name: 'BreakerOpened', Unit: 'Count' }] }] },
      Inbox: 'i',
      BreakerOpened: n,
    });
  const auditWith = (t1Status: string, logLines: string[], breaker: Evidence['breaker'], receivedAt: Evidence['receivedAt'] = new Map()) => {
    writeFileSync(
      join(logDir, 'processor.log'),
      `${[line({ message: 'processed', eventRef: logReference('answerline#t1') }), line({ message: 'processing failed; dead-lettered', eventRef: logReference('answerline#p1') }), ...logLines].join('\n')}\n`,
    );
    return audit(
      evidenceOf(tasks, {
        deliveries: [tasks[0].delivery, poison],
        rows: [
          {
            key: 'answerline#t1',
            status: t1Status,
            digest: 'digest-of-t1',
            recovered: false,
            outcome: RowOutcome.WINNER,
            attempts: 1,
            receivedAt: 5_000,
            ...(t1Status === DeliveryStatus.PROCESSED ? { processedAt: 95_000 } : {}),
          },
          { key: 'answerline#p1', status: DeliveryStatus.DEAD, digest: 'digest-of-p1', recovered: false, attempts: 3, receivedAt: 1_000 },
        ],
        results: [{ key: 'answerline#job-1', taskId: 't1', status: 'COMPLETED' }],
        effects: [effectOf('t1', 'job-1')],
        deadLettered: ['answerline#p1'],
        alarms: [{ logicalId: 'InboxAlarmsDeadDeliveries5E984ACD', to: 'ALARM', at: 0 }],
        downstreamOutage: outage,
        receivedAt,
        ...(breaker ? { breaker } : {}),
      }),
    );
  };
  const deadCount = line({
    _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'WebhookInbox', Dimensions: [['Inbox']], Metrics: [{ Name: 'DeadLettered', Unit: 'Count' }] }] },
    Inbox: 'i',
    DeadLettered: 1,
  });

  it('passes a run whose breaker opened and closed, whose rows were only delayed, and whose only dead row is poison', () => {
    const found = auditWith(DeliveryStatus.PROCESSED, [breakerOpened(2), deadCount], { state: 'CLOSED', openings: 2 });
    expect(found.violations).toEqual([]);
    const figure = (name: string) => found.figures.find((f) => f.name === name)?.values.total;
    expect([figure('rows the downstream outage touched'), figure('  delayed past its end'), figure('  DEAD (poison rows only)')]).toEqual([1, 1, 1]);
    expect(figure('breaker openings (BreakerOpened)')).toBe(2);
  });

  it('flags a row that is not poison going DEAD', () => {
    const found = auditWith(DeliveryStatus.DEAD, [breakerOpened(2), deadCount], { state: 'CLOSED', openings: 2 });
    expect(found.violations.join('\n')).toMatch(
      /1 rows are DEAD that are not poison rows: the downstream being down dead-lettered them \(e\.g\. answerline#t1/,
    );
  });

  it('flags a breaker that never opened, or did not close again', () => {
    expect(auditWith(DeliveryStatus.PROCESSED, [deadCount], undefined).violations).toEqual([
      'the downstream failed every row for 60 s and the breaker never opened (BreakerOpened 0, openings on the flow item 0)',
    ]);
    expect(auditWith(DeliveryStatus.PROCESSED, [breakerOpened(1), deadCount], { state: 'OPEN', openings: 1 }).violations).toEqual([
      'the breaker is OPEN at the end, long after the downstream came back',
    ]);
  });

  it('counts the attempts the outage spent before the breaker opened, and flags one spent on a receive handed over after it', () => {
    const opened = line({ time: new Date(20_000).toISOString(), message: 'circuit breaker opened', reason: '10 of 10 rows failed downstream' });
    const spent = (messageId: string, message: string) =>
      line({ message, eventRef: logReference('answerline#t1'), messageId, receiveCount: 1, outboxResult: 'failed', error: 'InternalException' });
    const givenBack = line({
      message: 'processing failed downstream; attempt given back (circuit breaker open)',
      messageId: 'm3',
      receiveCount: 1,
      outboxResult: 'failed',
    });
    const handedOver = new Map([
      ['m1/1', 15_000],
      ['m2/1', 25_000],
      ['m3/1', 26_000],
    ]);
    const figure = (found: ReturnType<typeof auditWith>) =>
      found.figures.find((f) => f.name === 'attempts the outage spent before the breaker opened')?.values.total;
    const run = (...lines: string[]) =>
      auditWith(DeliveryStatus.PROCESSED, [opened, ...lines, breakerOpened(1), deadCount], { state: 'CLOSED', openings: 1 }, handedOver);

    const before = run(spent('m1', 'processing failed'), givenBack);
    expect(before.violations).toEqual([]);
    expect(figure(before)).toBe(1);
    expect(run(spent('m1', 'processing failed'), spent('m2', 'processing failed')).violations).toEqual([
      `1 attempts were spent by the downstream's failures after the breaker had opened (e.g. ${logReference('answerline#t1')}, receive 1 handed over 5000 ms after the opening)`,
    ]);
  });

  it('flags a row the outage touched completed twice', () => {
    const twice = line({ message: 'processed', eventRef: logReference('answerline#t1') });
    expect(auditWith(DeliveryStatus.PROCESSED, [twice, breakerOpened(2), deadCount], { state: 'CLOSED', openings: 2 }).violations.join('\n')).toMatch(
      /1 rows the downstream outage touched were not completed exactly once.*answerline#t1: 2 processed lines/,
    );
  });
});

describe('the auditor, of batches and deadlines', () => {
  const BATCH = 'msgbatch_1';
  const childKey = (customId: string) => `batches#${BATCH}:${customId}`;
  const summaryKey = `batches#${BATCH}:~batch`;
  const row = (key: string) => ({ key, status: DeliveryStatus.PROCESSED, digest: 'd', recovered: true });
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
        evidenceOf([], {
          deadlineTaskIds: ['tsk_late'],
          submissions: [{ key: 'ledger:answerline#tsk_late', state: SubmissionState.UNAVAILABLE }],
          unavailable,
          alarms,
        }),
      ).violations,
    ).toEqual([]);
    const found = audit(
      evidenceOf([], { deadlineTaskIds: ['tsk_late'], submissions: [{ key: 'ledger:answerline#tsk_late', state: SubmissionState.AWAITING }] }),
    );
    expect(found.violations.join('\n')).toMatch(/1 submissions past their deadline were not settled unavailable with one event.*tsk_late: AWAITING/);
    expect(found.violations.join('\n')).toMatch(/the SubmissionsNearDeadline alarm never reached ALARM/);
  });
});

describe('the auditor, of the alarms', () => {
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

describe('the auditor, of the queue outage', () => {
  const T = Date.UTC(2026, 0, 1, 10);
  const sweepAfterMs = makePlan(1, 50, chaosProfile(4)).profile.sweepAfterSeconds * 1000;
  const outage = { downAt: T, upAt: T + 5_000 };
  /** A row admitted at `receivedAt` and processed at its first attempt, its clock last started at `pendingSince`. */
  const row = (id: string, receivedAt: number, pendingSince: number, attempts = 1) => ({
    key: `answerline#${id}`,
    status: DeliveryStatus.PROCESSED,
    digest: `digest-of-${id}`,
    recovered: false,
    attempts,
    receivedAt,
    pendingSince,
  });
  /** The reconciler's log: a `sweep` line at the end of each run's sweep. */
  const sweepsEndedAt = (...times: number[]) =>
    writeFileSync(
      join(logDir, 'LocalTwin-Inbox-Reconciler.log'),
      times.map((at) => JSON.stringify({ level: 'INFO', time: new Date(at).toISOString(), Inbox: 'i', message: 'sweep', swept: 0, steps: 1 })).join('\n'),
    );
  const outageViolations = (rows: ReturnType<typeof row>[]) =>
    audit(evidenceOf([], { queueOutage: outage, rows })).violations.filter((violation) => violation.includes('queue outage'));

  it('passes rows enqueued again by the run under way when they came due or one of the next two, and flags one that waited longer', () => {
    const due = T + 1_000 + sweepAfterMs;
    sweepsEndedAt(due - 1_000, due + 1_000, due + 3_000, due + 5_000, due + 7_000);
    const inTime = [row('t1', T + 1_000, due + 500), row('t2', T + 1_000, due + 4_000)];
    expect(outageViolations(inTime)).toEqual([]);
    const report = audit(evidenceOf([], { queueOutage: outage, rows: inTime }));
    expect(report.notes.join('\n')).toMatch(/queue outage of 5\.0 s: 2 rows stranded, .* each within 2 reconciler runs of coming due/);
    expect(report.figures.find((figure) => figure.name === 'stranded by the queue outage, enqueued again')?.values.answerline).toBe(2);

    expect(outageViolations([...inTime, row('t3', T + 1_000, due + 6_000)])).toEqual([
      '1 of the 3 rows the queue outage stranded were enqueued again only after more than 2 reconciler runs had ended since they came due ' +
        '(e.g. answerline#t3: 3 reconciler runs ended between its coming due and its new message)',
    ]);
  });

  it('leaves out rows admitted outside the outage, never enqueued again, or whose clock a failed attempt restarted later', () => {
    const due = T + 1_000 + sweepAfterMs;
    sweepsEndedAt(due + 1_000, due + 2_000, due + 3_000, due + 4_000);
    expect(
      outageViolations([
        row('before', T - 1_000, due + 9_000),
        row('after', T + 6_000, due + 9_000),
        row('never-stranded', T + 1_000, T + 1_000),
        row('failed-once', T + 1_000, due + 9_000, 2),
      ]),
    ).toEqual([]);
  });
});

describe('the route flood: a 429 is the answer only a sender over its own allowance gets', () => {
  const floodViolations = (rest: Partial<Evidence>, tasks: ReturnType<typeof task>[] = []) =>
    audit(evidenceOf(tasks, rest)).violations.filter((violation) => /429|route flood/.test(violation));

  it('passes a flood answered 429 past its allowance and refused within it, while every genuine delivery was accepted', () => {
    const report = audit(evidenceOf([task('t1', 'job-1', '2026-01-01T10:00:00.000Z')], { routeFlood: [...Array(20).fill(400), ...Array(280).fill(429)] }));
    expect(report.violations.filter((violation) => /429|route flood/.test(violation))).toEqual([]);
    expect(report.notes.join('\n')).toMatch(
      /route flood: 300 forged requests .*280 answered 429, 20 refused by the verifier; genuine deliveries answered 429: 0/,
    );
  });

  it('flags a genuine delivery answered 429, a forged request accepted, and a flood never throttled', () => {
    const throttledTask = task('t2', 'job-2', '2026-01-01T10:00:00.000Z');
    const delivered = {
      ...throttledTask,
      delivery: { ...throttledTask.delivery, attempts: [{ at: 1, status: 429, ms: 1, copies: 1 }, ...throttledTask.delivery.attempts] },
    };
    expect(floodViolations({ routeFlood: [202, ...Array(30).fill(400)] }, [delivered])).toEqual([
      '1 genuine deliveries were answered 429: a sender within its own allowance was throttled (e.g. answerline#t2)',
      '1 forged requests of the route flood were accepted',
      "none of the 31 forged requests of the route flood was answered 429: its route's allowance was not enforced",
    ]);
  });
});
