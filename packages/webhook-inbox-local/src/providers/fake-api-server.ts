/**
 * The common part of the FAKE provider APIs (`<provider>/fake-api.ts`):
 * an HTTP server on 127.0.0.1 that checks the Bearer API key, records every request, and can be
 * told to answer the next requests with a chosen status (429 with Retry-After, 500, ...). For
 * the tests and the local twin only: these are not the providers, only faithful little twins
 * of the endpoints the reconciler polls.
 */
import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from '../aws/loopback';

/** A request the fake received, and what it answered. */
export interface FakeApiRequest {
  readonly method: string;
  readonly path: string;
  /** The task (job) id the path names, when it names one. */
  readonly id?: string;
  /** Whether it carried the right Bearer key. */
  readonly authorized: boolean;
  readonly status: number;
}

/** An answer the fake gives instead of the resource. */
interface Injected {
  /** Requests still to be served normally before this one applies. */
  skip: number;
  remaining: number;
  readonly status: number;
  readonly retryAfterSeconds?: number;
}

export interface Route {
  /** The id captured from the path, or undefined when the route takes none. */
  readonly match: (path: string) => { id?: string } | undefined;
  /** The status and JSON body of a normal answer (`query`: the request's query string). */
  readonly answer: (id: string | undefined, query: URLSearchParams) => { status: number; body: unknown };
}

export abstract class FakeApiServer {
  readonly requests: FakeApiRequest[] = [];
  /**
   * When set, the hex SHA-256 of every 200 answer's body is added here under the id its path
   * names: what an auditor compares a recovered row's digest with.
   */
  servedDigests?: Map<string, Set<string>>;
  private readonly injected: Injected[] = [];
  private server?: Server;
  private base?: string;

  protected constructor(private key: string) {}

  /** The API key the fake accepts as `Authorization: Bearer <key>`. */
  get apiKey(): string {
    return this.key;
  }

  /** A new key, as after a rotation at the provider: the old one is refused (401) from now on. */
  rotateApiKey(key: string): void {
    this.key = key;
  }

  /** The endpoints this fake serves. */
  protected abstract routes(): Route[];

  /** The error body of a status, in the provider's own shape. */
  protected abstract errorBody(status: number): unknown;

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.base = await listenOnLoopback(this.server, port);
    return this.base;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await closeServer(this.server);
  }

  get url(): string {
    if (!this.base) throw new Error('the fake API is not started');
    return this.base;
  }

  /**
   * The `times` requests after the next `after` ones are answered with `status` (and, for 429, a
   * Retry-After header) instead of the resource. Injections queue up in order.
   */
  inject(status: number, options: { after?: number; times?: number; retryAfterSeconds?: number } = {}): void {
    this.injected.push({ skip: options.after ?? 0, remaining: options.times ?? 1, status, retryAfterSeconds: options.retryAfterSeconds });
  }

  /** 429 Too Many Requests for `times` requests after the next `after` ones. */
  rateLimit(options: { after?: number; times?: number; retryAfterSeconds?: number } = {}): void {
    this.inject(429, { retryAfterSeconds: 1, ...options });
  }

  /** The requests that named `id`. */
  requestsFor(id: string): FakeApiRequest[] {
    return this.requests.filter((request) => request.id === id);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const { pathname: path, searchParams } = new URL(req.url ?? '/', 'http://fake');
    const authorized = req.headers.authorization === `Bearer ${this.apiKey}`;
    let route: Route | undefined;
    let id: string | undefined;
    for (const candidate of this.routes()) {
      const matched = candidate.match(path);
      if (matched) {
        route = candidate;
        id = matched.id;
        break;
      }
    }
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ method: req.method ?? '', path, ...(id !== undefined ? { id } : {}), authorized, status });
      const text = JSON.stringify(body);
      if (this.servedDigests && status === 200 && id !== undefined) {
        const digests = this.servedDigests.get(id) ?? new Set<string>();
        digests.add(createHash('sha256').update(text).digest('hex'));
        this.servedDigests.set(id, digests);
      }
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
    };
    req.resume();
    if (!route) return send(404, this.errorBody(404));
    if (req.method !== 'GET') return send(405, this.errorBody(405));
    if (!authorized) return send(401, this.errorBody(401));
    const injection = this.injected[0];
    if (injection && injection.skip > 0) {
      injection.skip -= 1;
    } else if (injection) {
      injection.remaining -= 1;
      if (injection.remaining <= 0) this.injected.shift();
      const headers: Record<string, string> = injection.retryAfterSeconds !== undefined ? { 'retry-after': String(injection.retryAfterSeconds) } : {};
      return send(injection.status, this.errorBody(injection.status), headers);
    }
    const answer = route.answer(id, searchParams);
    send(answer.status, answer.status === 200 ? answer.body : this.errorBody(answer.status));
  }
}

/** A status, or the script of statuses the next polls walk through, as that script. */
export function statusScript(status: string | readonly string[]): string[] {
  return typeof status === 'string' ? [status] : [...status];
}

/** The status the next poll sees: the script moves on one step, and its last status stays. */
export function nextStatus(statuses: string[]): string {
  return statuses.length > 1 ? statuses.shift()! : statuses[0];
}

/** The id in `<prefix><id>` (URL-decoded), when the path has that shape and nothing after. */
export function idAfter(prefix: string): Route['match'] {
  return (path) => {
    if (!path.startsWith(prefix)) return undefined;
    const rest = path.slice(prefix.length);
    if (rest === '' || rest.includes('/')) return undefined;
    return { id: decodeURIComponent(rest) };
  };
}
