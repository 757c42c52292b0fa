import { readFileSync } from 'node:fs';
import { EffectEvent, LocalOpsConfig } from '../../lib/contract';
import { OpsError, UsageError } from '../errors';

/** An event put on a bus, as the local twin's events log records it (one `type: "event"` line). */
export interface LoggedEvent {
  /** When the twin recorded it, ISO-8601. */
  readonly at?: string;
  readonly eventId: string;
  /** The bus, by name. */
  readonly bus: string;
  readonly source: string;
  readonly detailType: string;
  /** The event's time, ISO-8601 (as EventBridge sets it, to the second). */
  readonly time: string;
  readonly resources: readonly string[];
  readonly detail: Readonly<Record<string, unknown>>;
}

/** The events of a log, and how many of its lines were not records of the twin. */
export interface ParsedEventsLog {
  /** Every `type: "event"` line, in log order (oldest first). */
  readonly events: readonly LoggedEvent[];
  /** Lines that are not a JSON record with a type, or events without their fields: skipped. */
  readonly malformedLines: number;
}

export const DETAIL_TYPES: readonly string[] = [
  EffectEvent.JOB_RESULT_DECIDED,
  EffectEvent.WEBHOOK_RECEIVED,
  EffectEvent.RESOURCE_UNAVAILABLE,
  EffectEvent.BATCH_CHILD_SETTLED,
  EffectEvent.BATCH_SETTLED,
];
export const DEFAULT_EVENTS_LIMIT = 20;

/**
 * A deployed stack has nothing to list: said before any AWS request, and whenever a --config
 * names no log.
 */
export const NO_EVENT_HISTORY =
  "events reads the local twin's eventsLog, and this inbox's configuration names none: EventBridge keeps no history of a bus's events; " +
  "to keep one in AWS, add an archive on the inbox's bus, or a rule with inbox.onJobResult that targets an SQS queue";

/** Parses the twin's events log; lines of other types (rule deliveries) are left out, malformed ones counted. */
export function parseEventsLog(text: string): ParsedEventsLog {
  const events: LoggedEvent[] = [];
  let malformedLines = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const record = parseRecord(line);
    if (record === undefined) malformedLines++;
    else if (record.type === 'event') {
      const event = loggedEvent(record);
      if (event === undefined) malformedLines++;
      else events.push(event);
    }
  }
  return { events, malformedLines };
}

function parseRecord(line: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.type !== 'string') return undefined;
  return value;
}

function loggedEvent(record: Record<string, unknown>): LoggedEvent | undefined {
  const { at, eventId, bus, source, detailType, time, resources, detail } = record;
  if (![eventId, bus, source, detailType, time].every((field) => typeof field === 'string') || !isObject(detail)) return undefined;
  return {
    ...(typeof at === 'string' ? { at } : {}),
    eventId: eventId as string,
    bus: bus as string,
    source: source as string,
    detailType: detailType as string,
    time: time as string,
    resources: Array.isArray(resources) ? resources.filter((resource): resource is string => typeof resource === 'string') : [],
    detail,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface EventFilter {
  readonly inboxName: string;
  /** The inbox's bus (name or ARN); absent: any bus. */
  readonly bus?: string;
  readonly detailType?: string;
  readonly limit: number;
}

export interface SelectedEvents {
  /** The latest `limit` matching events, oldest first. */
  readonly events: readonly LoggedEvent[];
  /** How many events matched before the limit. */
  readonly matched: number;
}

/**
 * The inbox's effect events among a log's events: its source and its inbox name (a bus may carry
 * other producers' events, and other inboxes' effects), on its bus, of the detail type asked.
 */
export function selectEvents(events: readonly LoggedEvent[], filter: EventFilter): SelectedEvents {
  const bus = filter.bus === undefined ? undefined : busName(filter.bus);
  const matching = events.filter(
    (event) =>
      event.source === EffectEvent.SOURCE &&
      event.detail.inbox === filter.inboxName &&
      (bus === undefined || event.bus === bus) &&
      (filter.detailType === undefined || event.detailType === filter.detailType),
  );
  return { events: matching.slice(-filter.limit), matched: matching.length };
}

/** A bus's name, from its name or its ARN (the log names buses by name). */
function busName(nameOrArn: string): string {
  const marker = ':event-bus/';
  return nameOrArn.startsWith('arn:') && nameOrArn.includes(marker) ? nameOrArn.slice(nameOrArn.indexOf(marker) + marker.length) : nameOrArn;
}

export interface EventsReport extends SelectedEvents {
  readonly inboxName: string;
  readonly eventsLog: string;
  readonly bus?: string;
  readonly detailType?: string;
  readonly malformedLines: number;
}

export interface EventsOptions {
  readonly detailType?: string;
  readonly limit: number;
}

/** The effect events the inbox published, from the twin's events log (read once, whole). */
export function listEvents(config: LocalOpsConfig, options: EventsOptions): EventsReport {
  if (config.eventsLog === undefined) throw new UsageError(NO_EVENT_HISTORY);
  let text: string;
  try {
    text = readFileSync(config.eventsLog, 'utf8');
  } catch (error) {
    throw new OpsError(`cannot read the events log ${config.eventsLog}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  const { events, malformedLines } = parseEventsLog(text);
  const selected = selectEvents(events, { inboxName: config.inboxName, bus: config.eventBus, ...options });
  return {
    ...selected,
    inboxName: config.inboxName,
    eventsLog: config.eventsLog,
    ...(config.eventBus === undefined ? {} : { bus: config.eventBus }),
    ...(options.detailType === undefined ? {} : { detailType: options.detailType }),
    malformedLines,
  };
}
