/**
 * A STAND-IN for Amazon EventBridge's PutEvents, for the tests and the local twin only: no
 * EventBridge emulator exists on npm or Debian. It speaks the real wire protocol (awsJson1_1 over
 * HTTP, `X-Amz-Target: AWSEvents.PutEvents`), so the real EventBridgeClient talks to it
 * unchanged, and it keeps EventBridge's limits: 1 to 10 entries and 256 KB per call, entry sizes
 * counted as EventBridge counts them, a Detail that must be a JSON object, per-entry failures
 * reported through `FailedEntryCount`. It implements PutEvents only (buses are declared in
 * code), records every accepted event in memory and hands it to the listeners `onAccepted`
 * registered (the twin's rules match them).
 *
 * Failure injection: `failNextCalls` answers whole calls with an error (the SDK sees an
 * exception), `failNextEntries` fails single entries inside a successful answer (the partial
 * failure a caller must check for).
 */
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../local-aws';
import { closeServer, listenOnLoopback } from '../loopback';

const MAX_ENTRIES = 10;
const MAX_REQUEST_BYTES = 256 * 1024;

/** An event EventBridge accepted. */
export interface RecordedEvent {
  readonly eventId: string;
  readonly bus: string;
  readonly source: string;
  readonly detailType: string;
  readonly detail: Record<string, unknown>;
  /** The Detail text exactly as sent. */
  readonly detailText: string;
  readonly resources: readonly string[];
  readonly time: string;
}

/** One PutEvents call as received. */
export interface RecordedCall {
  /** The buses the entries name (by name), in order, without repeats. */
  readonly buses: readonly string[];
  readonly entries: number;
  /** The size EventBridge counts for the whole request. */
  readonly bytes: number;
  /** How the call was answered: accepted entries, failed entries, or a whole-call error. */
  readonly accepted: number;
  readonly failed: number;
  readonly error?: string;
}

interface Entry {
  readonly Time?: number | string;
  readonly Source?: string;
  readonly Resources?: string[];
  readonly DetailType?: string;
  readonly Detail?: string;
  readonly EventBusName?: string;
}

class StandInError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export class EventBridgeStandIn {
  /** Every event accepted, in order. */
  readonly events: RecordedEvent[] = [];
  /** Every PutEvents call, in order. */
  readonly calls: RecordedCall[] = [];
  private readonly buses = new Set<string>(['default']);
  private callFailures: { type: string; status: number }[] = [];
  private entryFailures: string[] = [];
  private readonly listeners: ((event: RecordedEvent) => void)[] = [];
  private server?: Server;

  /** Calls `listener` with every event accepted from now on (rules route them). */
  onAccepted(listener: (event: RecordedEvent) => void): void {
    this.listeners.push(listener);
  }

  /** Starts serving on 127.0.0.1 and returns the endpoint URL. */
  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    return listenOnLoopback(this.server, port);
  }

  async stop(): Promise<void> {
    await closeServer(this.server);
  }

  /** Declares a custom event bus; returns its ARN (PutEvents accepts the name or the ARN). */
  createBus(name: string): string {
    this.buses.add(name);
    return busArn(name);
  }

  /** The next `count` calls fail as a whole (InternalException, HTTP 500, by default). */
  failNextCalls(count: number, type = 'InternalException', status = 500): void {
    for (let i = 0; i < count; i++) this.callFailures.push({ type, status });
  }

  /** The next `count` entries fail inside their call's answer (InternalFailure by default). */
  failNextEntries(count: number, errorCode = 'InternalFailure'): void {
    for (let i = 0; i < count; i++) this.entryFailures.push(errorCode);
  }

  /** The accepted events of one bus (by name). */
  eventsOn(bus: string): RecordedEvent[] {
    return this.events.filter((event) => event.bus === bus);
  }

  /** The calls whose entries name one bus (by name). */
  callsTo(bus: string): RecordedCall[] {
    return this.calls.filter((call) => call.buses.includes(bus));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const operation = String(req.headers['x-amz-target'] ?? '').replace(/^AWSEvents\./, '');
    try {
      if (operation !== 'PutEvents') throw new StandInError('UnknownOperationException', `the stand-in does not implement ${operation}`);
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { Entries?: Entry[] };
      const output = this.putEvents(input.Entries ?? []);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(output));
    } catch (error) {
      const { type, status, message } = error instanceof StandInError ? error : new StandInError('InternalException', (error as Error).message, 500);
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': type }).end(JSON.stringify({ __type: type, message }));
    }
  }

  private putEvents(entries: Entry[]): unknown {
    const bytes = entries.reduce((sum, entry) => sum + entrySize(entry), 0);
    const buses = [...new Set(entries.map((entry) => busName(entry.EventBusName ?? 'default')))];
    const injected = this.callFailures.shift();
    const refuse = (error: StandInError): never => {
      this.calls.push({ buses, entries: entries.length, bytes, accepted: 0, failed: 0, error: error.type });
      throw error;
    };
    if (injected) refuse(new StandInError(injected.type, 'injected failure', injected.status));
    if (entries.length < 1 || entries.length > MAX_ENTRIES) {
      refuse(
        new StandInError(
          'ValidationException',
          `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${MAX_ENTRIES}`,
        ),
      );
    }
    if (bytes > MAX_REQUEST_BYTES) refuse(new StandInError('ValidationException', 'Total size of the entries in the request is over the limit.'));

    const results = entries.map((entry) => this.accept(entry));
    const failed = results.filter((result) => 'ErrorCode' in result).length;
    this.calls.push({ buses, entries: entries.length, bytes, accepted: entries.length - failed, failed });
    return { FailedEntryCount: failed, Entries: results };
  }

  private accept(entry: Entry): Record<string, string> {
    const injected = this.entryFailures.shift();
    if (injected) return { ErrorCode: injected, ErrorMessage: 'injected failure' };
    if (!entry.Source || !entry.DetailType || entry.Detail === undefined) {
      return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Parameter(s) Source, DetailType and Detail are required.' };
    }
    let detail: unknown;
    try {
      detail = JSON.parse(entry.Detail);
    } catch {
      detail = undefined;
    }
    if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) {
      return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
    }
    const bus = busName(entry.EventBusName ?? 'default');
    // EventBridge reports an unknown bus per entry.
    if (!this.buses.has(bus)) return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: `Event bus ${bus} does not exist.` };
    const time = entry.Time === undefined ? new Date() : new Date(typeof entry.Time === 'number' ? entry.Time * 1000 : entry.Time);
    const recorded = this.record({
      bus,
      source: entry.Source,
      detailType: entry.DetailType,
      detail: detail as Record<string, unknown>,
      detailText: entry.Detail,
      resources: entry.Resources ?? [],
      time,
    });
    return { EventId: recorded.eventId };
  }

  /**
   * An event an AWS service puts on the default bus itself, not through PutEvents (Secrets
   * Manager's CloudTrail service events): recorded and routed to the rules as any other.
   */
  putServiceEvent(event: { readonly source: string; readonly detailType: string; readonly detail: Record<string, unknown> }): RecordedEvent {
    return this.record({ bus: 'default', ...event, detailText: JSON.stringify(event.detail), resources: [], time: new Date() });
  }

  private record(event: Omit<RecordedEvent, 'eventId' | 'time'> & { readonly time: Date }): RecordedEvent {
    const recorded: RecordedEvent = { ...event, eventId: randomUUID(), time: event.time.toISOString().replace(/\.\d{3}Z$/, 'Z') };
    this.events.push(recorded);
    for (const listener of this.listeners) listener(recorded);
    return recorded;
  }
}

/** What EventBridge counts for one entry: Time (14 bytes when set), Source, DetailType, Detail, Resources, as UTF-8. */
function entrySize(entry: Entry): number {
  return (
    (entry.Time !== undefined ? 14 : 0) +
    Buffer.byteLength(entry.Source ?? '') +
    Buffer.byteLength(entry.DetailType ?? '') +
    Buffer.byteLength(entry.Detail ?? '') +
    (entry.Resources ?? []).reduce((sum, resource) => sum + Buffer.byteLength(resource), 0)
  );
}

function busArn(name: string): string {
  return `arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:event-bus/${name}`;
}

/** A bus by its name, whether named or given by ARN (PutEvents and rules accept both). */
export function busName(nameOrArn: string): string {
  return nameOrArn.startsWith('arn:') ? nameOrArn.slice(nameOrArn.indexOf(':event-bus/') + ':event-bus/'.length) : nameOrArn;
}
