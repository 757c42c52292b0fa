/**
 * An HTTP proxy in front of a service the functions call (DynamoDB, SQS and S3, EventBridge),
 * for the local twin, the fault-injection run and the handler tests: it forwards every request
 * untouched, and injects what AWS does and the emulators never do, at the protocol level, so the
 * functions' real SDK clients see exactly what they would see in AWS:
 *
 * - an outage: `takeDown()` cuts every connection and refuses new ones until `restore()` (the
 *   emulator and its data are untouched);
 * - throttling: `throttle(...)` answers matching calls with the service's own throttling error
 *   (DynamoDB `ProvisionedThroughputExceededException` or `ThrottlingException`, SQS
 *   `RequestThrottled` or `ThrottlingException`, EventBridge `ThrottlingException`), for a number
 *   of calls or a while: more calls than the SDK's attempts and the caller's own handling runs;
 * - a service failing: `fail(...)` answers matching calls with the service's own server error
 *   (a 5xx), for a number of calls or a while, where `takeDown()` would cut every caller;
 * - partial batch results: `refuseEntries(...)` forwards part of a batch and reports the rest as
 *   unprocessed or failed, in the service's shape (`./faults/partial-batches.ts`);
 * - an index that lags its table: `lagIndexes(ms)` (`./faults/index-lag.ts`).
 *
 * Every fault counts the calls it changed (`injected`), so a test or a run shows which path ran.
 */
import { randomBytes } from 'node:crypto';
import { Agent, createServer, IncomingHttpHeaders, IncomingMessage, request as httpRequest, RequestOptions, Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { crc32 } from 'node:zlib';
import { credentialOf } from '../aws/iam/aws-requests';
import { closeServer, listenOnLoopback, readBody } from '../aws/loopback';
import { AwsCall, AwsService, targetOf, throttledAnswer, ThrottlingError, unavailableAnswer, WireAnswer } from './aws-calls';
import { DynamoDbReader, IndexLag } from './index-lag';
import { refusedByDefault, splitBatch } from './partial-batches';

export type { AwsCall, AwsService, ThrottlingError } from './aws-calls';
export { BATCH_OPERATIONS } from './partial-batches';

export interface FaultProxyOptions {
  /**
   * Where the index lag reads the tables directly (an item's image before a write, a table's
   * indexes): the DynamoDB emulator, or a gateway that forwards an operator's requests. Without
   * it, `lagIndexes` is refused.
   */
  readonly dynamodbEndpoint?: string;
}

/** Which calls a fault changes, and until when. */
export interface FaultScope {
  /** The operations it applies to (`PutItem`, `SendMessage`, `PutEvents`, …). @default every operation */
  readonly operations?: readonly string[];
  /** Only the calls this accepts (a table, a queue, the role that calls). @default every call */
  readonly where?: (call: AwsCall) => boolean;
  /** It ends after changing this many calls (each attempt of the SDK is a call). @default no limit */
  readonly calls?: number;
  /** It ends this long after it was injected, real time. @default no limit */
  readonly forMs?: number;
}

/** A fault while it lasts: how many calls it changed; `stop()` ends it early. */
export interface InjectedFault {
  readonly injected: number;
  readonly active: boolean;
  stop(): void;
}

/** The kinds of faults `injected` counts, each per `<service>.<operation>`. */
export type FaultCounterKind = 'throttled' | 'failed' | 'entries refused' | 'index lagged';

interface Fault extends InjectedFault {
  readonly kind: 'throttle' | 'fail' | 'partial';
  readonly error?: ThrottlingError;
  readonly refuse?: (index: number, count: number) => boolean;
  /** Whether it applies to `call` now. */
  matches(call: AwsCall): boolean;
  /** Whether it may apply to a call of `operation` now (before its body is read). */
  concerns(operation: string): boolean;
  /** Counts one call it changed. */
  took(): void;
}

/** Headers that describe one hop, not the request or the answer. */
const HOP_HEADERS: readonly string[] = ['connection', 'keep-alive', 'expect', 'host'];
/** A body read whole is sent on with its own length, not framed as it came. */
const FRAMING_HEADERS: readonly string[] = ['transfer-encoding', 'content-length'];

export class FaultProxy {
  private server?: Server;
  private down = false;
  private readonly sockets = new Set<Socket>();
  private readonly upstreamAgent = new Agent({ keepAlive: true });
  private readonly faults: Fault[] = [];
  private readonly counts = new Map<string, number>();
  private readonly seen = new Map<string, number>();
  private readonly requested = new Map<string, number>();
  private readonly lag?: IndexLag;

  constructor(
    private readonly target: { host: string; port: number },
    options: FaultProxyOptions = {},
  ) {
    if (options.dynamodbEndpoint) this.lag = new IndexLag(operatorReader(options.dynamodbEndpoint, this.upstreamAgent));
  }

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch(() => {
        // The upstream went away mid-request (an outage): the client sees its connection cut, as from the service itself.
        req.socket.destroy();
      });
    });
    this.server.on('connection', (socket) => {
      if (this.down) {
        socket.destroy();
        return;
      }
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    return listenOnLoopback(this.server, port);
  }

  /** Cuts every connection (requests in flight included) and refuses new ones until `restore()`. */
  takeDown(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
    this.upstreamAgent.destroy();
  }

  restore(): void {
    this.down = false;
  }

  get isDown(): boolean {
    return this.down;
  }

  /** Answers the matching calls with the service's throttling error (its first kind by default). */
  throttle(scope: FaultScope & { readonly error?: ThrottlingError } = {}): InjectedFault {
    return this.add('throttle', scope, { error: scope.error });
  }

  /** Answers the matching calls with the service's own server error (a 5xx): the service failing them, not cut off. */
  fail(scope: FaultScope = {}): InjectedFault {
    return this.add('fail', scope, {});
  }

  /**
   * Forwards part of each matching batch call (BatchWriteItem, BatchGetItem, SendMessageBatch,
   * PutEvents) and reports the entries `refuse` picks (by default the second, fourth, …, or a
   * lone one) as unprocessed or failed. Calls with nothing to refuse are forwarded as they are.
   */
  refuseEntries(scope: FaultScope & { readonly refuse?: (index: number, count: number) => boolean } = {}): InjectedFault {
    return this.add('partial', scope, { refuse: scope.refuse ?? refusedByDefault });
  }

  /**
   * From now on the global indexes of the tables behind the proxy lag their tables by `ms` (0:
   * not at all), measured on `now` (a test's controllable clock, or the real one).
   */
  lagIndexes(ms: number, now: () => number = Date.now): void {
    if (!this.lag) throw new Error('the fault proxy reads no DynamoDB endpoint directly: give it dynamodbEndpoint to lag indexes');
    this.lag.lagBy(ms, now);
  }

  /** Ends every fault and the index lag, and sets the counts back to zero. */
  clear(): void {
    for (const fault of this.faults.splice(0)) fault.stop();
    this.lag?.lagBy(0, Date.now);
    this.counts.clear();
    this.seen.clear();
    this.requested.clear();
  }

  /** Every call that came through so far, changed or not, by `<service>.<operation>`. */
  get calls(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.seen);
  }

  /**
   * The calls among `calls` that were a request's first attempt, by `<service>.<operation>`: what
   * the callers asked for, without an SDK's retries (its `amz-sdk-request` header past attempt 1),
   * whatever the transport cost them.
   */
  get requests(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.requested);
  }

  /** The calls changed so far, by `<kind> <service>.<operation>` (`throttled dynamodb.PutItem`, …). */
  get injected(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.counts);
  }

  /** The calls changed so far of one kind, over every operation. */
  injectedOf(kind: FaultCounterKind): number {
    let total = 0;
    for (const [name, count] of this.counts) if (name.startsWith(`${kind} `)) total += count;
    return total;
  }

  async stop(): Promise<void> {
    this.takeDown();
    this.server?.closeAllConnections();
    await closeServer(this.server);
  }

  private add(kind: Fault['kind'], scope: FaultScope, settings: Pick<Fault, 'error' | 'refuse'>): InjectedFault {
    const until = scope.forMs === undefined ? Infinity : Date.now() + scope.forMs;
    const operations = scope.operations && new Set(scope.operations);
    let injected = 0;
    let stopped = false;
    const fault: Fault = {
      kind,
      ...settings,
      get injected() {
        return injected;
      },
      get active() {
        return !stopped && injected < (scope.calls ?? Infinity) && Date.now() < until;
      },
      stop() {
        stopped = true;
      },
      concerns: (operation) => fault.active && (!operations || operations.has(operation)),
      matches: (call) => fault.concerns(call.operation) && (!scope.where || scope.where(call)),
      took: () => injected++,
    };
    this.faults.push(fault);
    return fault;
  }

  private count(kind: FaultCounterKind, call: AwsCall): void {
    tally(this.counts, `${kind} ${call.service}.${call.operation}`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = targetOf(String(req.headers['x-amz-target'] ?? ''));
    if (target) {
      const operation = `${target.service}.${target.operation}`;
      tally(this.seen, operation);
      if (!isRetry(req)) tally(this.requested, operation);
    }
    // Ended faults are dropped as calls come by.
    for (let i = this.faults.length - 1; i >= 0; i--) if (!this.faults[i].active) this.faults.splice(i, 1);
    // What no fault can change streams through, read by nobody (S3's objects among it).
    const concerned =
      target !== undefined &&
      (this.faults.some((fault) => fault.concerns(target.operation)) || (target.service === 'dynamodb' && this.lag?.concerns(target.operation)));
    if (!concerned) return this.stream(req, res);
    const body = await readBody(req);
    const call = callOf(req.headers, body);
    if (!call) return this.relay(res, await this.forward(req, body));

    const refusal = this.faults.find((fault) => (fault.kind === 'throttle' || fault.kind === 'fail') && fault.matches(call));
    if (refusal) {
      refusal.took();
      this.count(refusal.kind === 'throttle' ? 'throttled' : 'failed', call);
      return answer(res, refusal.kind === 'throttle' ? throttledAnswer(call.service, refusal.error) : unavailableAnswer(call.service));
    }
    for (const fault of this.faults) {
      const split = fault.kind === 'partial' && fault.matches(call) ? splitBatch(call, fault.refuse) : undefined;
      if (!split) continue;
      fault.took();
      this.count('entries refused', call);
      if (split.refusedWhole) return answer(res, split.refusedWhole);
      if (!split.forward) return answer(res, { status: 200, headers: jsonHeaders(call.service), body: JSON.stringify(split.answer()) });
      await this.lag?.beforeWrite({ ...call, input: split.forward });
      const out = await this.forward(req, Buffer.from(JSON.stringify(split.forward)));
      if (out.status !== 200) return this.relay(res, out);
      return this.relay(res, { ...out, body: Buffer.from(JSON.stringify(split.answer(JSON.parse(out.body.toString('utf8')) as Record<string, unknown>))) });
    }
    await this.lag?.beforeWrite(call);
    const out = await this.forward(req, body);
    const lagged = out.status === 200 && call.operation === 'Query' ? await this.lag?.lagQuery(call, JSON.parse(out.body.toString('utf8'))) : undefined;
    if (!lagged) return this.relay(res, out);
    for (let i = 0; i < lagged.changed; i++) this.count('index lagged', call);
    return this.relay(res, { ...out, body: Buffer.from(JSON.stringify(lagged.answer)) });
  }

  /** Sends the request on as it comes, and its answer back as it comes. */
  private stream(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return new Promise((resolve, reject) => {
      const out = httpRequest(this.upstreamRequest(req, without(req.headers, HOP_HEADERS)), (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, without(upstream.headers, HOP_HEADERS));
        upstream.pipe(res);
        upstream.on('end', resolve);
        upstream.on('error', reject);
      });
      out.on('error', reject);
      req.pipe(out);
    });
  }

  /** Sends the request on, with `body` (the client's, or a part of a batch), and reads the whole answer. */
  private forward(req: IncomingMessage, body: Buffer): Promise<Upstream> {
    const headers = without(req.headers, [...HOP_HEADERS, ...FRAMING_HEADERS]);
    return new Promise((resolve, reject) => {
      const out = httpRequest(this.upstreamRequest(req, { ...headers, 'content-length': String(body.length) }), (upstream) => {
        readBody(upstream).then((answerBody) => resolve({ status: upstream.statusCode ?? 502, headers: upstream.headers, body: answerBody }), reject);
      });
      out.on('error', reject);
      out.end(body);
    });
  }

  /** The client's request as sent on to the emulator: its method and path, `headers` and the emulator's host. */
  private upstreamRequest(req: IncomingMessage, headers: IncomingHttpHeaders): RequestOptions {
    const host = `${this.target.host}:${this.target.port}`;
    return { host: this.target.host, port: this.target.port, method: req.method, path: req.url, agent: this.upstreamAgent, headers: { ...headers, host } };
  }

  /** Writes an upstream answer (rewritten or not) to the client, its length and checksum made to match the body. */
  private relay(res: ServerResponse, out: Upstream): void {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(without(out.headers, [...HOP_HEADERS, ...FRAMING_HEADERS]))) if (value !== undefined) headers[name] = value;
    // DynamoDB signs its body with a CRC32 header: a rewritten body gets its own.
    if (headers['x-amz-crc32'] !== undefined) headers['x-amz-crc32'] = String(crc32(out.body));
    res.writeHead(out.status, { ...headers, 'content-length': String(out.body.length) }).end(out.body);
  }
}

interface Upstream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Counts one more `key` in `counts`. */
function tally(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Whether an AWS SDK sent this request as a retry: its `amz-sdk-request` header (`attempt=2; max=3`) counts past the first attempt. */
function isRetry(req: IncomingMessage): boolean {
  const attempt = /attempt=(\d+)/.exec(String(req.headers['amz-sdk-request'] ?? ''));
  return attempt !== null && Number(attempt[1]) > 1;
}

/** The AWS JSON-protocol call a request makes; undefined for anything else (S3, a body that is not JSON). */
function callOf(headers: IncomingHttpHeaders, body: Buffer): AwsCall | undefined {
  const target = targetOf(String(headers['x-amz-target'] ?? ''));
  if (!target) return undefined;
  let input: unknown;
  try {
    input = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    return undefined;
  }
  const accessKeyId = credentialOf({ headers, url: '/' })?.accessKeyId;
  return { ...target, input: (input ?? {}) as Record<string, unknown>, ...(accessKeyId ? { accessKeyId } : {}) };
}

function without(headers: IncomingHttpHeaders, names: readonly string[]): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));
}

function jsonHeaders(service: AwsService): Record<string, string> {
  return { 'content-type': `application/x-amz-json-${service === 'events' ? '1.1' : '1.0'}`, 'x-amzn-requestid': randomBytes(16).toString('hex') };
}

function answer(res: ServerResponse, wire: WireAnswer): void {
  const body = Buffer.from(wire.body);
  const checksum = wire.headers['content-type'] === 'application/x-amz-json-1.0' ? { 'x-amz-crc32': String(crc32(body)) } : {};
  res.writeHead(wire.status, { ...wire.headers, ...checksum, 'content-length': String(body.length) }).end(body);
}

/**
 * DynamoDB calls as an operator, in wire JSON, straight to `endpoint`: the emulator and the IAM
 * gateway read the access key of a request, never its signature.
 */
function operatorReader(endpoint: string, agent: Agent): DynamoDbReader {
  const url = new URL(endpoint);
  return (operation, input) =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(JSON.stringify(input));
      const date = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
      const out = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/',
          agent,
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'content-length': String(body.length),
            'x-amz-target': `DynamoDB_20120810.${operation}`,
            'x-amz-date': date,
            authorization: `AWS4-HMAC-SHA256 Credential=local/${date.slice(0, 8)}/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=local`,
          },
        },
        (response) => {
          readBody(response).then((text) => {
            const parsed = JSON.parse(text.toString('utf8') || '{}') as Record<string, unknown>;
            if (response.statusCode === 200) resolve(parsed);
            else reject(new Error(`DynamoDB ${operation} answered ${response.statusCode}: ${String(parsed.__type ?? '')}`));
          }, reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });
}

/** Host and port of an `http://host:port` endpoint. */
export function endpointTarget(endpoint: string): { host: string; port: number } {
  const url = new URL(endpoint);
  return { host: url.hostname, port: Number(url.port) };
}
