/**
 * What API Gateway's front doors share, for the local twin: a loopback server (the console gets
 * the first look at each request), the request id and access record of every answer, the 10 MB
 * request limit and Lambda's 6 MB invocation payload limit (413 past either), the route a request
 * takes as API Gateway picks it, and the integration's answer as the HTTP answer. The HTTP API
 * (http-api.ts) and the REST API (rest-api.ts) each build their own event and answer their own
 * errors.
 */
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Limits } from '../../../../../lib/contract';
import { InvocationTimeoutError } from '../lambda/host';
import { closeServer, listenOnLoopback } from '../loopback';
import type { RouteThrottles } from './throttle';

export const API_GATEWAY_MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** What the front door answered one request, as its access log would say. */
export interface ApiAccessRecord {
  readonly routeKey?: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The integration's answer body (not the request's), for reports. */
  readonly responseBody: string;
  readonly requestId: string;
  readonly at: number;
}

/** What every front door is started with. */
export interface FrontDoorOptions {
  readonly port?: number;
  readonly apiId?: string;
  /** Serves requests that are not the API's (the twin's console); true when it answered. */
  readonly fallback?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Every answer, as an access log records it. */
  readonly onResponse?: (record: ApiAccessRecord) => void;
  /** The stage's throttles of its routes and the account's; none: nothing is throttled. */
  readonly throttles?: RouteThrottles;
}

export interface LocalApiGateway {
  readonly url: string;
  stop(): Promise<void>;
}

export interface MatchedRoute<R = { readonly routeKey: string }> {
  readonly route: R;
  readonly pathParameters?: Record<string, string>;
}

/** A loopback server that gives the fallback (the console) the first look at each request. */
export async function startFrontDoor(
  options: Pick<FrontDoorOptions, 'port' | 'fallback'>,
  serveRequest: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<LocalApiGateway> {
  const server: Server = createServer((req, res) => {
    if (options.fallback?.(req, res)) return;
    void serveRequest(req, res);
  });
  return { url: await listenOnLoopback(server, options.port), stop: () => closeServer(server) };
}

/** How a front door answers: every answer carries its request id (under the API's own header) and is access-logged. */
export function responder(req: IncomingMessage, res: ServerResponse, options: Pick<FrontDoorOptions, 'onResponse'>, requestIdHeader: string) {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = req.method ?? 'GET';
  const requestId = randomUUID();
  const reply = (status: number, body: Buffer, headers: Record<string, string>, routeKey?: string) => {
    res.writeHead(status, { ...headers, 'content-length': String(body.length), [requestIdHeader]: requestId });
    res.end(body);
    options.onResponse?.({ routeKey, method, path: url.pathname, status, responseBody: body.toString('utf8'), requestId, at: Date.now() });
  };
  const message = (status: number, text: string, routeKey?: string) =>
    reply(status, Buffer.from(JSON.stringify({ message: text })), { 'content-type': 'application/json' }, routeKey);
  return { url, method, requestId, reply, message };
}

/** The request's body, or undefined past API Gateway's request size limit. */
async function requestBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > API_GATEWAY_MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** What a front door answers itself: no route for the request, the integration timed out, or it failed. */
export interface FrontDoorAnswers {
  readonly noRoute: readonly [number, string];
  readonly timeout: readonly [number, string];
  readonly failure: readonly [number, string];
}

/**
 * The way from a request to its answer both front doors take: the route for `path` (or the door's
 * own answer to none), its throttle (429 past it), the body within API Gateway's request limit, the integration's event within
 * Lambda's payload limit (413 past either), the invocation (the door's answers to a timeout and a
 * failure), and the proxy result as the HTTP answer.
 */
export async function proxy<E, T extends APIGatewayProxyStructuredResultV2>(
  req: IncomingMessage,
  door: Pick<ReturnType<typeof responder>, 'method' | 'reply' | 'message'>,
  routes: readonly { readonly routeKey: string; readonly invoke: (event: E) => Promise<T> }[],
  path: string,
  answers: FrontDoorAnswers,
  throttles: RouteThrottles | undefined,
  integration: {
    readonly eventOf: (matched: MatchedRoute<{ readonly routeKey: string }>, body: Buffer) => E;
    readonly headersOf: (result: T) => Record<string, string>;
  },
): Promise<void> {
  const { method, reply, message } = door;
  const matched = matchRoute(routes, method, path);
  if (!matched) {
    req.resume();
    return message(...answers.noRoute);
  }
  const { routeKey } = matched.route;
  if (throttles && !throttles.admit(routeKey)) {
    req.resume();
    return message(429, 'Too Many Requests', routeKey);
  }
  const requestBytes = await requestBody(req);
  if (!requestBytes) return message(413, 'Request Entity Too Large', routeKey);
  const event = integration.eventOf(matched, requestBytes);
  if (Buffer.byteLength(JSON.stringify(event)) > Limits.LAMBDA_SYNC_PAYLOAD_BYTES) return message(413, 'Request Entity Too Large', routeKey);
  let result: T;
  try {
    result = await matched.route.invoke(event);
  } catch (error) {
    return message(...(error instanceof InvocationTimeoutError ? answers.timeout : answers.failure), routeKey);
  }
  const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  reply(result.statusCode ?? 200, body, integration.headersOf(result), routeKey);
}

/** The route API Gateway picks: the most specific match, `ANY` after the method's own, `$default` last. */
export function matchRoute<R extends { readonly routeKey: string }>(routes: readonly R[], method: string, path: string): MatchedRoute<R> | undefined {
  let best: { matched: MatchedRoute<R>; score: number } | undefined;
  for (const route of routes) {
    if (route.routeKey === '$default') {
      if (!best) best = { matched: { route }, score: -1 };
      continue;
    }
    const [routeMethod, routePath] = route.routeKey.split(' ');
    if (routeMethod !== method && routeMethod !== 'ANY') continue;
    const pathParameters = matchPath(routePath, path);
    if (!pathParameters) continue;
    const literal = routePath.split('/').filter((segment) => !segment.startsWith('{')).length;
    const score = literal * 4 + (routePath.includes('+}') ? 0 : 2) + (routeMethod === method ? 1 : 0);
    if (!best || score > best.score) best = { matched: { route, ...(Object.keys(pathParameters).length ? { pathParameters } : {}) }, score };
  }
  return best?.matched;
}

function matchPath(routePath: string, path: string): Record<string, string> | undefined {
  const want = routePath.split('/');
  const got = path.split('/');
  const parameters: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i];
    const greedy = /^\{(.+)\+\}$/.exec(segment);
    if (greedy) {
      if (i >= got.length || got.slice(i).join('/') === '') return undefined;
      parameters[greedy[1]] = decodedOrAsSent(got.slice(i).join('/'));
      return parameters;
    }
    if (i >= got.length) return undefined;
    const parameter = /^\{(.+)\}$/.exec(segment);
    if (parameter) {
      if (got[i] === '') return undefined;
      parameters[parameter[1]] = decodedOrAsSent(got[i]);
    } else if (segment !== got[i]) {
      return undefined;
    }
  }
  return want.length === got.length ? parameters : undefined;
}

/** Percent-decoded, or as sent when it is not valid percent-encoding (a stray `%` must not fail the request). */
function decodedOrAsSent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
