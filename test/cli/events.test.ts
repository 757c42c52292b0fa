/**
 * `webhook-inbox events`: the local twin's events log parsed and filtered (pure functions), and
 * the command run in-process on a log this test writes, as the twin writes it: events on the
 * inbox's bus and on another, a rule's delivery, and lines that are not records.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EffectEvent, LocalOpsConfig } from '../../lib/contract';
import { OpsClients } from '../../cli/clients';
import { NO_EVENT_HISTORY, parseEventsLog, selectEvents } from '../../cli/commands/events';
import { formatEvents } from '../../cli/format';
import { run } from '../../cli/main';

const INBOX = 'orders';
const BUS = 'orders-effects';
const dir = mkdtempSync(join(tmpdir(), 'webhook-inbox-events-'));

let sequence = 0;
/** One `type: "event"` line as the twin appends it; `detail` overrides the effect detail's fields. */
function eventLine(options: { bus?: string; source?: string; detailType?: string; detail?: Record<string, unknown> } = {}): string {
  sequence++;
  const time = `2026-03-01T10:00:${String(sequence).padStart(2, '0')}Z`;
  const detail = { schemaVersion: 1, inbox: INBOX, provider: 'answerline', eventKey: `answerline#tsk_${sequence}`, ...options.detail };
  return JSON.stringify({
    at: time.replace('Z', '.123Z'),
    type: 'event',
    eventId: `event-${sequence}`,
    bus: options.bus ?? BUS,
    source: options.source ?? EffectEvent.SOURCE,
    detailType: options.detailType ?? EffectEvent.JOB_RESULT_DECIDED,
    detail,
    detailText: JSON.stringify(detail),
    resources: [],
    time,
  });
}

const decided = (n: number, status: string) => ({ detailType: EffectEvent.JOB_RESULT_DECIDED, detail: { jobKey: `answerline#job_${n}`, status } });
const received = { detailType: EffectEvent.WEBHOOK_RECEIVED, detail: { provider: 'stripe', eventKey: 'stripe#evt_1' } };

/** The log: 1-3 and 5 the inbox's effects on its bus, 4 on another bus, 6 another producer's, 7 another inbox's. */
const LOG_LINES = [
  eventLine(decided(1, 'COMPLETED')),
  eventLine(decided(2, 'FAILED')),
  JSON.stringify({ at: '2026-03-01T10:00:02.500Z', type: 'rule-delivery', rule: 'OnJobResult', target: 'ResultsQueue', kind: 'sqs', event: 'event-2' }),
  eventLine(received),
  '{"at": "2026-03-01T10:00:03.900Z", "type": "event", "eventId": "torn',
  eventLine({ ...decided(4, 'COMPLETED'), bus: 'default' }),
  eventLine(decided(5, 'COMPLETED')),
  eventLine({ source: 'billing', detailType: 'InvoicePaid', detail: { invoice: 'in_1' } }),
  eventLine({ ...decided(7, 'COMPLETED'), detail: { inbox: 'returns', jobKey: 'answerline#job_7', status: 'COMPLETED' } }),
  JSON.stringify({ type: 'event', eventId: 'no-bus', detail: {} }),
  '',
];
const LOG = join(dir, 'events.log');
writeFileSync(LOG, LOG_LINES.join('\n'));

const opsConfig = (overrides: Partial<LocalOpsConfig> = {}): LocalOpsConfig => ({
  inboxName: INBOX,
  inboxTable: `${INBOX}-inbox`,
  resultsTable: `${INBOX}-results`,
  workQueueUrl: `http://127.0.0.1:9324/000000000000/${INBOX}-work`,
  reconcilerFunctionName: `${INBOX}-reconciler`,
  providers: ['answerline', 'stripe'],
  eventsLog: LOG,
  eventBus: BUS,
  ...overrides,
});

function configFile(document: LocalOpsConfig): string {
  const path = join(dir, `${randomUUID()}.json`);
  writeFileSync(path, JSON.stringify(document));
  return path;
}

/** Runs the CLI in-process; clients it must never use (the command makes no AWS request). */
async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    io: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    clients: () => ({}) as OpsClients,
    cloudFormation: () => {
      throw new Error('no CloudFormation request expected');
    },
  });
  return { code, stdout, stderr };
}

describe('parseEventsLog', () => {
  test('keeps the event lines in log order, leaves rule deliveries out, counts the malformed lines', () => {
    const { events, malformedLines } = parseEventsLog(LOG_LINES.join('\n'));
    expect(events.map((event) => event.eventId)).toEqual(['event-1', 'event-2', 'event-3', 'event-4', 'event-5', 'event-6', 'event-7']);
    // The torn line and the event without its fields; the blank line is no line at all.
    expect(malformedLines).toBe(2);
    expect(events[0]).toEqual({
      at: '2026-03-01T10:00:01.123Z',
      eventId: 'event-1',
      bus: BUS,
      source: EffectEvent.SOURCE,
      detailType: EffectEvent.JOB_RESULT_DECIDED,
      time: '2026-03-01T10:00:01Z',
      resources: [],
      detail: { schemaVersion: 1, inbox: INBOX, provider: 'answerline', eventKey: 'answerline#tsk_1', jobKey: 'answerline#job_1', status: 'COMPLETED' },
    });
  });

  test('a JSON value that is not a typed record is malformed, never a crash', () => {
    expect(
      parseEventsLog('[1]\nnull\n"text"\n{"no":"type"}\n{"type":"event","eventId":"x","bus":"b","source":"s","detailType":"d","time":"t","detail":[]}\n'),
    ).toEqual({
      events: [],
      malformedLines: 5,
    });
  });
});

describe('selectEvents', () => {
  const { events } = parseEventsLog(LOG_LINES.join('\n'));
  const ids = (selected: { events: readonly { eventId: string }[] }) => selected.events.map((event) => event.eventId);

  test('the inbox’s effects on its bus, named or by ARN; without a bus, on any bus', () => {
    expect(ids(selectEvents(events, { inboxName: INBOX, bus: BUS, limit: 20 }))).toEqual(['event-1', 'event-2', 'event-3', 'event-5']);
    expect(ids(selectEvents(events, { inboxName: INBOX, bus: `arn:aws:events:us-east-1:000000000000:event-bus/${BUS}`, limit: 20 }))).toEqual([
      'event-1',
      'event-2',
      'event-3',
      'event-5',
    ]);
    expect(ids(selectEvents(events, { inboxName: INBOX, limit: 20 }))).toEqual(['event-1', 'event-2', 'event-3', 'event-4', 'event-5']);
  });

  test('--detail-type filters, --limit keeps the latest N, newest last, and the match count is before the limit', () => {
    expect(ids(selectEvents(events, { inboxName: INBOX, bus: BUS, detailType: EffectEvent.WEBHOOK_RECEIVED, limit: 20 }))).toEqual(['event-3']);
    expect(selectEvents(events, { inboxName: INBOX, bus: BUS, detailType: EffectEvent.JOB_RESULT_DECIDED, limit: 2 })).toMatchObject({
      events: [{ eventId: 'event-2' }, { eventId: 'event-5' }],
      matched: 3,
    });
  });
});

describe('formatEvents', () => {
  test('an event stays on its line whatever its detail holds: control characters replaced, non-strings shown as -', () => {
    const [event] = parseEventsLog(eventLine({ detail: { eventKey: 'answerline#tsk\n\u001b[31mforged', jobKey: 42 } })).events;
    const text = formatEvents({ events: [event], matched: 1, inboxName: INBOX, eventsLog: LOG, bus: BUS, malformedLines: 0 });
    expect(text.split('\n')[2]).toMatch(/^\S+ +JobResultDecided +answerline#tsk\?\?\[31mforged +- +-$/);
    expect(text.split('\n')).toHaveLength(4);
  });
});

describe('webhook-inbox events', () => {
  test('text: one line per event with its time, detail type, event key, job key and status; the skipped lines counted', async () => {
    const result = await cli('events', '--config', configFile(opsConfig()));
    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `4 of 4 effect events of inbox ${INBOX} (bus ${BUS}), newest last, from ${LOG}`,
        'TIME                  DETAIL TYPE       EVENT KEY         JOB KEY           STATUS',
        '2026-03-01T10:00:01Z  JobResultDecided  answerline#tsk_1  answerline#job_1  COMPLETED',
        '2026-03-01T10:00:02Z  JobResultDecided  answerline#tsk_2  answerline#job_2  FAILED',
        '2026-03-01T10:00:03Z  WebhookReceived   stripe#evt_1      -                 -',
        '2026-03-01T10:00:05Z  JobResultDecided  answerline#tsk_5  answerline#job_5  COMPLETED',
        `skipped 2 malformed lines of ${LOG}`,
        '',
      ].join('\n'),
    });
  });

  test('--detail-type takes every effect the processor and the reconciler send: an unavailable resource, a batch child, a batch summary', async () => {
    const log = join(dir, `${randomUUID()}.log`);
    const types = ['ResourceUnavailable', 'BatchChildSettled', 'BatchSettled'];
    writeFileSync(log, [eventLine(decided(1, 'COMPLETED')), ...types.map((detailType) => eventLine({ detailType }))].join('\n'));
    const config = configFile(opsConfig({ eventsLog: log }));
    for (const detailType of types) {
      const json = await cli('events', '--config', config, '--detail-type', detailType, '--json');
      expect(json).toMatchObject({ code: 0, stderr: '' });
      expect((JSON.parse(json.stdout) as { detailType: string }[]).map((event) => event.detailType)).toEqual([detailType]);
    }
  });

  test('--limit and --detail-type; --json prints the array alone, the skipped lines said on stderr', async () => {
    const config = configFile(opsConfig());
    const text = await cli('events', '--config', config, '--limit', '1', '--detail-type', 'JobResultDecided');
    expect(text.stdout.split('\n').slice(0, 3)).toEqual([
      `1 of 3 effect events of inbox ${INBOX} (bus ${BUS}, JobResultDecided), newest last, from ${LOG}`,
      'TIME                  DETAIL TYPE       EVENT KEY         JOB KEY           STATUS',
      '2026-03-01T10:00:05Z  JobResultDecided  answerline#tsk_5  answerline#job_5  COMPLETED',
    ]);

    const json = await cli('events', '--config', config, '--limit', '2', '--json');
    expect(json).toMatchObject({ code: 0, stderr: `webhook-inbox: skipped 2 malformed lines of ${LOG}\n` });
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        eventId: 'event-3',
        bus: BUS,
        detailType: EffectEvent.WEBHOOK_RECEIVED,
        detail: expect.objectContaining({ eventKey: 'stripe#evt_1' }),
      }),
      expect.objectContaining({
        eventId: 'event-5',
        time: '2026-03-01T10:00:05Z',
        detail: expect.objectContaining({ jobKey: 'answerline#job_5', status: 'COMPLETED' }),
      }),
    ]);
  });

  test('a config without eventBus lists the inbox’s effects on every bus; none matching says so', async () => {
    const { eventBus: _bus, ...anyBus } = opsConfig();
    const all = await cli('events', '--config', configFile(anyBus), '--json');
    expect(JSON.parse(all.stdout).map((event: { eventId: string }) => event.eventId)).toEqual(['event-1', 'event-2', 'event-3', 'event-4', 'event-5']);
    const none = await cli('events', '--config', configFile(opsConfig({ eventBus: 'elsewhere' })));
    expect(none).toMatchObject({
      code: 0,
      stdout: `0 of 0 effect events of inbox ${INBOX} (bus elsewhere), newest last, from ${LOG}\nskipped 2 malformed lines of ${LOG}\n`,
    });
  });

  test('without an eventsLog (a deployed stack, or a config that names none) it is a usage error saying how to keep a history in AWS', async () => {
    const { eventsLog: _log, ...withoutLog } = opsConfig();
    const expected = { code: 2, stdout: '', stderr: `webhook-inbox: ${NO_EVENT_HISTORY}\nRun 'webhook-inbox --help' for usage.\n` };
    // The stack is never looked up: its outputs cannot name a log.
    expect(await cli('events', '--stack', 'Shop')).toEqual(expected);
    expect(await cli('events', '--config', configFile(withoutLog))).toEqual(expected);
    expect(NO_EVENT_HISTORY).not.toContain('\n');
    expect(NO_EVENT_HISTORY).toMatch(/EventBridge keeps no history.*archive on the inbox's bus.*onJobResult.*SQS queue/);
  });

  test('bad arguments are usage errors; an unreadable log is exit 1 naming it', async () => {
    const config = configFile(opsConfig());
    for (const [argv, message] of [
      [['--limit', '0'], '--limit 0: expected a positive whole number'],
      [
        ['--detail-type', 'jobresultdecided'],
        '--detail-type jobresultdecided: expected JobResultDecided or WebhookReceived or ResourceUnavailable or BatchChildSettled or BatchSettled',
      ],
      [['--force'], 'events does not take --force'],
    ] as const) {
      expect(await cli('events', '--config', config, ...argv)).toMatchObject({ code: 2, stderr: expect.stringContaining(message) });
    }
    expect(await cli('events', '--config', configFile({ ...opsConfig(), eventsLog: 42 } as unknown as LocalOpsConfig))).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('eventsLog is not a string'),
    });
    const missing = join(dir, 'absent.log');
    expect(await cli('events', '--config', configFile(opsConfig({ eventsLog: missing })))).toEqual({
      code: 1,
      stdout: '',
      stderr: `webhook-inbox: cannot read the events log ${missing}: ENOENT\n`,
    });
  });

  test('the usage and the command’s help describe it', async () => {
    expect((await cli('--help')).stdout).toMatch(/^ {2}events +the effect events the inbox published, newest last/m);
    const help = (await cli('events', '--help')).stdout;
    expect(help).toContain('Usage: webhook-inbox events --config <file> [--limit N] [--detail-type T] [--json]');
    expect(help).toContain('EventBridge keeps no history');
  });
});
