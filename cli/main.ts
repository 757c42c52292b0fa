/**
 * The ops CLI's argv and IO layer: parse the command line (node:util parseArgs), find the
 * inbox's configuration, build the SDK clients, run one command module, print its report.
 * Everything here is injectable, so tests run it in-process as well as through the bundle.
 */
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { Defaults, LocalOpsConfig } from '../lib/contract';
import { createClients, createCloudFormationClient, destroyClients, OpsClients } from './clients';
import { DEFAULT_EVENTS_LIMIT, DETAIL_TYPES, listEvents, NO_EVENT_HISTORY } from './commands/events';
import { hashReport } from './commands/hash';
import { inspect } from './commands/inspect';
import { DEFAULT_REJECTED_HOURS, DEFAULT_REJECTED_LIMIT, listQuarantine, listRejected } from './commands/quarantine';
import { describeLeft, reconcile, reconcileUntilSettled } from './commands/reconcile';
import { pause, resume } from './commands/flow';
import { redrive } from './commands/redrive';
import { replayBatchChildren, replayEvent, replayRange } from './commands/replay';
import { status } from './commands/status';
import { parseEventRef } from './commands/common';
import { loadConfigFile, OpsEndpoints, selectOpsConfig, stackOutputs } from './config';
import { explainAwsError } from './aws-errors';
import { ExitCode, OpsError, UsageError } from './errors';
import {
  formatEvents,
  formatFlow,
  formatHash,
  formatInspect,
  formatQuarantine,
  formatReconcile,
  formatRedrive,
  formatRejected,
  formatReplay,
  formatResume,
  formatStatus,
  malformedLinesNote,
} from './format';
import { Command, COMMAND_HELP, COMMANDS, USAGE } from './usage';
import { entryOf, formatSearch, readArchive, windowDays } from './commands/archive';

const OPTIONS = {
  stack: { type: 'string' },
  inbox: { type: 'string' },
  config: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  limit: { type: 'string' },
  event: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  force: { type: 'boolean' },
  'skip-scan': { type: 'boolean' },
  'detail-type': { type: 'string' },
  'until-settled': { type: 'boolean' },
  timeout: { type: 'string' },
  batch: { type: 'string' },
  children: { type: 'string' },
  rejected: { type: 'boolean' },
  provider: { type: 'string' },
  since: { type: 'string' },
  resource: { type: 'string' },
  tenant: { type: 'string' },
  type: { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;
const GLOBAL_OPTIONS: readonly OptionName[] = ['stack', 'inbox', 'config', 'region', 'json', 'help'];
const COMMAND_OPTIONS: Readonly<Record<Command, readonly OptionName[]>> = {
  status: ['skip-scan'],
  redrive: ['limit'],
  replay: ['event', 'from', 'to', 'batch', 'children', 'force'],
  inspect: [],
  reconcile: ['until-settled', 'timeout'],
  pause: [],
  resume: [],
  quarantine: ['rejected', 'provider', 'since', 'limit'],
  events: ['limit', 'detail-type'],
  search: ['from', 'to', 'provider', 'type'],
  export: ['from', 'to', 'provider', 'type'],
  hash: ['resource', 'tenant'],
};

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export interface RunDependencies {
  readonly io: Io;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: () => number;
  /** Builds the clients for the resolved target; tests may inject their own. */
  readonly clients?: (endpoints: OpsEndpoints | undefined, region: string | undefined) => OpsClients;
  readonly cloudFormation?: (region: string | undefined) => CloudFormationClient;
  /** Waits between two runs of `reconcile --until-settled`; tests pass their own. */
  readonly sleep?: (ms: number) => Promise<void>;
}

type Values = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean };

interface Parsed {
  readonly command?: Command;
  readonly values: Values;
  readonly positionals: readonly string[];
}

/** Parses argv; a UsageError names what is wrong. */
export function parseCommandLine(argv: readonly string[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as Values;
  const [first, ...positionals] = parsed.positionals;
  if (first === undefined || first === 'help') {
    const topic = first === 'help' ? positionals[0] : undefined;
    if (topic !== undefined && !isCommand(topic)) throw new UsageError(`unknown command: ${topic}`);
    return { ...(topic ? { command: topic } : {}), values: { ...values, help: true }, positionals: [] };
  }
  if (!isCommand(first)) throw new UsageError(`unknown command: ${first} (commands: ${COMMANDS.join(', ')})`);
  if (values.help) return { command: first, values, positionals };
  const allowed = new Set<OptionName>([...GLOBAL_OPTIONS, ...COMMAND_OPTIONS[first]]);
  const stray = (Object.keys(values) as OptionName[]).filter((name) => values[name] !== undefined && !allowed.has(name));
  if (stray.length > 0) throw new UsageError(`${first} does not take ${stray.map((name) => `--${name}`).join(', ')}`);
  const expectedPositionals = first === 'inspect' || first === 'hash' ? 1 : 0;
  if (positionals.length > expectedPositionals) throw new UsageError(`${first}: unexpected argument ${positionals[expectedPositionals]}`);
  if (first === 'inspect' && positionals.length === 0) throw new UsageError('inspect needs the event: webhook-inbox inspect <target> <provider>#<eventId>');
  return { command: first, values, positionals };
}

function isCommand(name: string): name is Command {
  return (COMMANDS as readonly string[]).includes(name);
}

/** Runs one command line; returns the exit code. Never throws. */
export async function run(argv: readonly string[], deps: RunDependencies): Promise<number> {
  const { io } = deps;
  let clients: OpsClients | undefined;
  try {
    const { command, values, positionals } = parseCommandLine(argv);
    if (values.help || !command) {
      io.stdout(command ? COMMAND_HELP[command] : USAGE);
      return ExitCode.OK;
    }
    if (command === 'hash') {
      const report = hashReport({ event: positionals[0], resource: values.resource, tenant: values.tenant });
      io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatHash(report));
      return ExitCode.OK;
    }
    const action = prepare(command, values, positionals);
    const target = await resolveTarget(values, deps);
    clients = (deps.clients ?? createClients)(target.endpoints, values.region);
    const report = await action(clients, target.config, deps.now ?? Date.now, io, deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))));
    io.stdout(values.json ? `${JSON.stringify(report.data, null, 2)}\n` : report.text);
    if (values.json && report.jsonNote !== undefined) io.stderr(`webhook-inbox: ${report.jsonNote}\n`);
    return report.exitCode ?? ExitCode.OK;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`webhook-inbox: ${error.message}\nRun 'webhook-inbox --help' for usage.\n`);
      return ExitCode.USAGE;
    }
    io.stderr(`webhook-inbox: ${describe(error)}\n`);
    return ExitCode.FAILURE;
  } finally {
    if (clients && !deps.clients) destroyClients(clients);
  }
}

/** An error for an operator: the CLI's own as it says it, any other with what it means and what to do. */
function describe(error: unknown): string {
  return error instanceof OpsError ? error.message : explainAwsError(error);
}

async function resolveTarget(values: Values, deps: RunDependencies): Promise<{ config: LocalOpsConfig; endpoints?: OpsEndpoints }> {
  if (values.stack !== undefined && values.config !== undefined) throw new UsageError('give either --stack or --config, not both');
  if (values.config !== undefined) {
    if (values.inbox !== undefined) throw new UsageError('--inbox chooses among the inboxes of a --stack; a --config file describes one inbox');
    const { endpoints, ...config } = loadConfigFile(values.config);
    return { config, ...(endpoints ? { endpoints } : {}) };
  }
  if (values.stack === undefined || values.stack === '')
    throw new UsageError('which inbox? give --stack <name> (a deployed stack) or --config <file> (e.g. the local twin)');
  const cloudFormation = (deps.cloudFormation ?? createCloudFormationClient)(values.region);
  try {
    return { config: selectOpsConfig(await stackOutputs(cloudFormation, values.stack), values.stack, values.inbox) };
  } finally {
    if (!deps.cloudFormation) cloudFormation.destroy();
  }
}

interface Report {
  readonly data: unknown;
  readonly text: string;
  readonly exitCode?: number;
  /** With --json, said on stderr: stdout carries the data alone (the text report includes it). */
  readonly jsonNote?: string;
}

/** The config of a deployed stack, or of a --config file (which may add the twin's events log). */
type Action = (clients: OpsClients, config: LocalOpsConfig, now: () => number, io: Io, sleep: (ms: number) => Promise<void>) => Promise<Report>;

/** Checks the command's own arguments (before any AWS request) and returns what running it does. */
export function prepare(command: Exclude<Command, 'hash'>, values: Values, positionals: readonly string[]): Action {
  switch (command) {
    case 'status':
      return async (clients, config, now) => {
        const report = await status(clients, config, { now: now(), skipScan: values['skip-scan'] });
        return { data: report, text: formatStatus(report) };
      };
    case 'redrive': {
      const limit = values.limit === undefined ? undefined : positiveInteger(values.limit, '--limit');
      return async (clients, config, now) => {
        const report = await redrive(clients, config, { now, ...(limit === undefined ? {} : { limit }) });
        return { data: report, text: formatRedrive(report), ...(report.failed > 0 ? { exitCode: ExitCode.FAILURE } : {}) };
      };
    }
    case 'replay':
      return prepareReplay(values);
    case 'inspect': {
      const event = parseEventRef(positionals[0], 'inspect');
      return async (clients, config, now) => {
        const report = await inspect(clients, config, event, now());
        return { data: report, text: formatInspect(report) };
      };
    }
    case 'reconcile': {
      if (values.timeout !== undefined && !values['until-settled']) throw new UsageError('--timeout goes with --until-settled');
      if (values['until-settled']) {
        const timeoutMs = (values.timeout === undefined ? Defaults.UNTIL_SETTLED_TIMEOUT_SECONDS : positiveInteger(values.timeout, '--timeout')) * 1000;
        return async (clients, config, now, io, sleep) => {
          const progress = (line: string) => (values.json ? io.stderr(`webhook-inbox: ${line}\n`) : io.stdout(`${line}\n`));
          const report = await reconcileUntilSettled(clients, config, {
            timeoutMs,
            intervalMs: Defaults.UNTIL_SETTLED_INTERVAL_SECONDS * 1000,
            now,
            sleep,
            progress,
          });
          const text = report.settled
            ? `settled after ${report.runs} run${report.runs === 1 ? '' : 's'}\n`
            : `not settled after ${report.elapsedSeconds} s (${report.runs} run${report.runs === 1 ? '' : 's'}): ${describeLeft(report.left)}\n`;
          return { data: report, text, ...(report.settled ? {} : { exitCode: ExitCode.FAILURE }) };
        };
      }
      return async (clients, config) => {
        const report = await reconcile(clients, config);
        return { data: report, text: formatReconcile(report) };
      };
    }
    case 'pause':
      return async (clients, config, now) => {
        const report = await pause(clients, config, now(), Defaults.LEDGER_COUNT_PER_SHARD);
        return { data: report, text: formatFlow(report) };
      };
    case 'resume':
      return async (clients, config, now, _io, sleep) => {
        const report = await resume(clients, config, { now, sleep, perShardLimit: Defaults.LEDGER_COUNT_PER_SHARD });
        return { data: report, text: formatResume(report) };
      };
    case 'quarantine': {
      if (!values.rejected) {
        const stray = (['provider', 'since', 'limit'] as const).find((name) => values[name] !== undefined);
        if (stray) throw new UsageError(`--${stray} lists rejection records: add --rejected`);
        return async (clients, config) => {
          const report = await listQuarantine(clients, config);
          return { data: report, text: formatQuarantine(report) };
        };
      }
      const limit = values.limit === undefined ? DEFAULT_REJECTED_LIMIT : positiveInteger(values.limit, '--limit');
      const since = values.since === undefined ? undefined : instant(values.since, '--since');
      const provider = values.provider;
      return async (clients, config, now) => {
        const at = now();
        const report = await listRejected(clients, config, { provider, since: since ?? at - DEFAULT_REJECTED_HOURS * 3_600_000, now: at, limit });
        return { data: report, text: formatRejected(report) };
      };
    }
    case 'events': {
      // A stack's outputs never name an events log: no need to ask CloudFormation to say so.
      if (values.stack !== undefined && values.config === undefined) throw new UsageError(NO_EVENT_HISTORY);
      const limit = values.limit === undefined ? DEFAULT_EVENTS_LIMIT : positiveInteger(values.limit, '--limit');
      const detailType = values['detail-type'];
      if (detailType !== undefined && !DETAIL_TYPES.includes(detailType)) {
        throw new UsageError(`--detail-type ${detailType}: expected ${DETAIL_TYPES.join(' or ')}`);
      }
      return async (_clients, config) => {
        const report = listEvents(config, { limit, ...(detailType === undefined ? {} : { detailType }) });
        const note = malformedLinesNote(report);
        return { data: report.events, text: formatEvents(report), ...(note === undefined ? {} : { jsonNote: note }) };
      };
    }
    case 'search':
    case 'export': {
      if (values.from === undefined || values.to === undefined) throw new UsageError(`${command} needs --from <ISO> and --to <ISO>`);
      const query = { from: instant(values.from, '--from'), to: instant(values.to, '--to'), provider: values.provider, eventType: values.type };
      if (query.from >= query.to) throw new UsageError(`--from ${values.from} is not before --to ${values.to}`);
      windowDays(query.from, query.to);
      return async (clients, config) => {
        const records = await readArchive(clients, config, query);
        if (command === 'export') return { data: records, text: records.map((record) => `${JSON.stringify(record)}\n`).join('') };
        const entries = records.map(entryOf);
        return { data: entries, text: formatSearch(entries) };
      };
    }
  }
}

/** `replay`: one event, a time range, or children of a message batch. */
function prepareReplay(values: Values): Action {
  const force = values.force ?? false;
  const hasRange = values.from !== undefined || values.to !== undefined;
  const selectors = [values.event !== undefined, hasRange, values.batch !== undefined].filter(Boolean).length;
  if (selectors > 1) throw new UsageError('replay takes one of --event, --from/--to or --batch/--children');
  if (values.batch !== undefined || values.children !== undefined) {
    const batch = parseEventRef(values.batch, '--batch');
    const customIds = (values.children ?? '').split(',').filter((id) => id !== '');
    if (customIds.length === 0) throw new UsageError('replay --batch needs --children <customId>[,<customId>...]');
    return async (clients, config, now) => {
      const report = await replayBatchChildren(clients, config, { provider: batch.provider, batchId: batch.eventId }, customIds, { force, now: now() });
      return { data: report, text: formatReplay(report), ...(report.notFound > 0 ? { exitCode: ExitCode.FAILURE } : {}) };
    };
  }
  if (values.event !== undefined) {
    const event = parseEventRef(values.event);
    return async (clients, config, now) => {
      const report = await replayEvent(clients, config, event, { force, now: now() });
      if (report.notFound > 0) throw new OpsError(`unknown event ${event.key}: no row in ${config.inboxTable}`);
      return { data: report, text: formatReplay(report) };
    };
  }
  if (!hasRange) throw new UsageError('replay needs --event <provider>#<eventId>, or --from <ISO> and --to <ISO>');
  if (values.from === undefined || values.to === undefined) throw new UsageError('replay by time needs both --from and --to');
  const from = instant(values.from, '--from');
  const to = instant(values.to, '--to');
  if (from >= to) throw new UsageError(`--from ${values.from} is not before --to ${values.to}`);
  return async (clients, config, now) => {
    const report = await replayRange(clients, config, { from, to }, { force, now: now() });
    return { data: report, text: formatReplay(report) };
  };
}

function positiveInteger(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) throw new UsageError(`${option} ${text}: expected a positive whole number`);
  return value;
}

/** An ISO-8601 instant with a date and a time (a bare date or a zone-less time is ambiguous: refused). */
function instant(text: string, option: string): number {
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(text) || Number.isNaN(ms)) {
    throw new UsageError(`${option} ${text}: expected an ISO-8601 instant with a zone, e.g. 2026-09-18T10:00:00Z`);
  }
  return ms;
}
