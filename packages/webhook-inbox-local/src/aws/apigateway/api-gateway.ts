/**
 * An HTTP front door that behaves like an API Gateway HTTP API with a Lambda proxy integration
 * (payload format 2.0), for the local twin: routes requests by route key as API Gateway does, builds the event
 * (lower-case headers, repeated headers joined by commas, base64 for non-text bodies), enforces
 * the 10 MB request limit and Lambda's 6 MB invocation payload limit, and answers as API Gateway
 * does when the integration fails (500) or times out (503). `startRestApiGateway` is the same for
 * a REST API (payload format 1.0): its stage in the path, its 403 for what no method serves, its
 * binary media types, and its 502 and 504.
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Limits } from '../../../../../lib/contract';
import { InvocationTimeoutError } from '../lambda/host';
import { LOCAL_ACCOUNT } from '../local-aws';
import { closeServer, listenOnLoopback } from '../loopback';

export const API_GATEWAY_MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** Content types API Gateway passes to Lambda as text; any other body arrives base64-encoded. */
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|application\/[\w.+-]+\+(json|xml))/i;

/** One route of the API: its route key (`POST /hooks/x`, `GET /items/{id}`, `ANY /{proxy+}`, `$default`) and its integration. */
export interface ApiRoute {
  readonly routeKey: string;
  readonly invoke: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
}

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

export interface ApiGatewayOptions {
  readonly port?: number;
  readonly routes: readonly ApiRoute[];
  readonly apiId?: string;
  /** Serves requests that are not the API's (the twin's console); true when it answered. */
  readonly fallback?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Every answer, as an access log records it. */
  readonly onResponse?: (record: ApiAccessRecord) => void;
}

export interface LocalApiGateway {
  readonly url: string;
  stop(): Promise<void>;
}

interface MatchedRoute<R = ApiRoute> {
  readonly route: R;
  readonly pathParameters?: Record<string, string>;
}

export function startApiGateway(options: ApiGatewayOptions): Promise<LocalApiGateway> {
  return startFrontDoor(options, (req, res) => serve(req, res, options));
}

/** A loopback server that gives the fallback (the console) the first look at each request. */
async function startFrontDoor(
  options: Pick<ApiGatewayOptions, 'port' | 'fallback'>,
  serveRequest: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<LocalApiGateway> {
  const server: Server = createServer((req, res) => {
    if (options.fallback?.(req, res)) return;
    void serveRequest(req, res);
  });
  return { url: await listenOnLoopback(server, options.port), stop: () => closeServer(server) };
}

/** How a front door answers: every answer carries its request id (under the API's own header) and is access-logged. */
function responder(req: IncomingMessage, res: ServerResponse, options: Pick<ApiGatewayOptions, 'onResponse'>, requestIdHeader: string) {
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

async function serve(req: IncomingMessage, res: ServerResponse, options: ApiGatewayOptions): Promise<void> {
  const door = responder(req, res, options, 'apigw-requestid');
  const { url, requestId } = door;
  await proxy(req, door, options.routes, url.pathname, HTTP_API_ANSWERS, {
    eventOf: (matched, body) => toEvent(req, url, matched.route.routeKey, body, requestId, options.apiId, matched.pathParameters),
    headersOf: (result) => (result.headers ?? {}) as Record<string, string>,
  });
}

/** What a front door answers itself: no route for the request, the integration timed out, or it failed. */
interface FrontDoorAnswers {
  readonly noRoute: readonly [number, string];
  readonly timeout: readonly [number, string];
  readonly failure: readonly [number, string];
}

/** An HTTP API: 404 for no route, 503 for a timeout, 500 for a failed integration. */
const HTTP_API_ANSWERS: FrontDoorAnswers = { noRoute: [404, 'Not Found'], timeout: [503, 'Service Unavailable'], failure: [500, 'Internal Server Error'] };

/**
 * The way from a request to its answer both front doors take: the route for `path` (or the door's
 * own answer to none), the body within API Gateway's request limit, the integration's event within
 * Lambda's payload limit (413 past either), the invocation (the door's answers to a timeout and a
 * failure), and the proxy result as the HTTP answer.
 */
async function proxy<E, T extends APIGatewayProxyStructuredResultV2>(
  req: IncomingMessage,
  door: Pick<ReturnType<typeof responder>, 'method' | 'reply' | 'message'>,
  routes: readonly { readonly routeKey: string; readonly invoke: (event: E) => Promise<T> }[],
  path: string,
  answers: FrontDoorAnswers,
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
export function matchRoute<R extends { readonly routeKey: string } = ApiRoute>(
  routes: readonly R[],
  method: string,
  path: string,
): MatchedRoute<R> | undefined {
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

function toEvent(
  req: IncomingMessage,
  url: URL,
  routeKey: string,
  body: Buffer,
  requestId: string,
  apiId: string | undefined,
  pathParameters: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    headers[name] = name in headers ? `${headers[name]},${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1];
  }
  return httpApiEvent({
    routeKey,
    method: req.method ?? 'GET',
    path: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    body,
    protocol: `HTTP/${req.httpVersion}`,
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    requestId,
    apiId,
    pathParameters,
  });
}

/** A request as the front door sees it: headers with lower-case names (repeats joined with commas, as API Gateway joins them). */
export interface HttpApiRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** @default `POST <path>` */
  readonly routeKey?: string;
  /** @default 'POST' */
  readonly method?: string;
  readonly requestId?: string;
  readonly apiId?: string;
  readonly pathParameters?: Record<string, string>;
  readonly rawQueryString?: string;
  readonly protocol?: string;
  readonly sourceIp?: string;
}

/**
 * The event API Gateway (HTTP API, payload format 2.0) hands a Lambda integration: the body as
 * text when it is UTF-8 text of a textual content type, base64 (`isBase64Encoded`) otherwise.
 */
export function httpApiEvent(request: HttpApiRequest): APIGatewayProxyEventV2 {
  const { headers, body } = request;
  const asText = TEXT_TYPES.test(headers['content-type'] ?? '') && isUtf8(body);
  const now = new Date();
  const method = request.method ?? 'POST';
  const routeKey = request.routeKey ?? `${method} ${request.path}`;
  const query = new URLSearchParams(request.rawQueryString ?? '');
  const queryStringParameters: Record<string, string> = {};
  // API Gateway joins repeated query parameters with commas, as it joins repeated headers.
  for (const [name, value] of query) queryStringParameters[name] = name in queryStringParameters ? `${queryStringParameters[name]},${value}` : value;
  return {
    version: '2.0',
    routeKey,
    rawPath: request.path,
    rawQueryString: request.rawQueryString ?? '',
    headers: { ...headers },
    ...(Object.keys(queryStringParameters).length ? { queryStringParameters } : {}),
    ...(request.pathParameters ? { pathParameters: request.pathParameters } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT,
      apiId: request.apiId ?? 'local',
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: '127',
      http: {
        method,
        path: request.path,
        protocol: request.protocol ?? 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: request.requestId ?? randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : body.toString(asText ? 'utf8' : 'base64'),
    isBase64Encoded: body.length > 0 && !asText,
  };
}

/** One method of a REST API: its key (`POST /hooks/x`, the resource path without the stage) and its Lambda proxy integration. */
export interface RestApiRoute {
  readonly routeKey: string;
  readonly invoke: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyStructuredResultV2>;
}

export interface RestApiGatewayOptions extends Omit<ApiGatewayOptions, 'routes'> {
  readonly routes: readonly RestApiRoute[];
  /** The stage every path starts with, as in `https://<id>.execute-api.<region>.amazonaws.com/<stage>/...`. */
  readonly stageName: string;
  /** Content types passed to the integration base64-encoded (`*` / `*`: every one); any other body is passed as text. */
  readonly binaryMediaTypes: readonly string[];
}

/** A REST API's front door; its `url` is the host's, the stage is part of every path. */
export function startRestApiGateway(options: RestApiGatewayOptions): Promise<LocalApiGateway> {
  return startFrontDoor(options, (req, res) => serveRest(req, res, options));
}

async function serveRest(req: IncomingMessage, res: ServerResponse, options: RestApiGatewayOptions): Promise<void> {
  const door = responder(req, res, options, 'x-amzn-requestid');
  const { url, method, requestId, message } = door;
  const prefix = `/${options.stageName}`;
  // A path outside the stage names no deployed stage; inside it, no method answers with this token message.
  if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) {
    req.resume();
    return message(403, 'Forbidden');
  }
  const path = url.pathname.slice(prefix.length) || '/';
  await proxy(req, door, options.routes, path, REST_API_ANSWERS, {
    eventOf: (matched, body) => {
      const multiValueHeaders: Record<string, string[]> = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) (multiValueHeaders[req.rawHeaders[i]] ??= []).push(req.rawHeaders[i + 1]);
      const query: Record<string, string[]> = {};
      for (const [name, value] of url.searchParams) (query[name] ??= []).push(value);
      return restApiEvent({
        resource: matched.route.routeKey.split(' ')[1],
        method,
        path,
        stage: options.stageName,
        multiValueHeaders,
        query,
        body,
        binaryMediaTypes: options.binaryMediaTypes,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        requestId,
        apiId: options.apiId,
        pathParameters: matched.pathParameters,
      });
    },
    headersOf: (result: APIGatewayProxyStructuredResultV2 & { multiValueHeaders?: Record<string, readonly string[]> }) => {
      // Values in multiValueHeaders win over the same name in headers, as API Gateway merges them.
      const headers: Record<string, string> = { ...((result.headers ?? {}) as Record<string, string>) };
      for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.join(', ');
      return headers;
    },
  });
}

/** A REST API: 403 for no method, 504 for a timeout, 502 for a failed integration. */
const REST_API_ANSWERS: FrontDoorAnswers = {
  noRoute: [403, 'Missing Authentication Token'],
  timeout: [504, 'Endpoint request timed out'],
  failure: [502, 'Internal server error'],
};

/** A request as a REST API front door sees it: header names as sent, every value of each. */
export interface RestApiRequest {
  /** The resource path of the method, e.g. `/hooks/answerline`. */
  readonly resource: string;
  readonly method: string;
  /** The path without the stage. */
  readonly path: string;
  readonly stage: string;
  readonly multiValueHeaders: Readonly<Record<string, readonly string[]>>;
  readonly query: Readonly<Record<string, readonly string[]>>;
  readonly body: Buffer;
  readonly binaryMediaTypes: readonly string[];
  readonly sourceIp: string;
  readonly requestId: string;
  readonly apiId?: string;
  readonly pathParameters?: Record<string, string>;
}

/**
 * The event a REST API hands a Lambda proxy integration (payload format 1.0), as AWS documents it:
 * headers in `multiValueHeaders` with every value and in `headers` with the last, names as sent;
 * the query decoded in the same two forms; the path without the stage; the body base64-encoded
 * when its content type is one of the binary media types, as text otherwise, `null` when empty.
 */
export function restApiEvent(request: RestApiRequest): APIGatewayProxyEvent {
  const { multiValueHeaders, query, body } = request;
  const last = (values: Readonly<Record<string, readonly string[]>>) =>
    Object.fromEntries(Object.entries(values).map(([name, list]) => [name, list[list.length - 1]]));
  const contentType = Object.entries(multiValueHeaders).find(([name]) => name.toLowerCase() === 'content-type')?.[1][0];
  const binary = request.binaryMediaTypes.some((type) => isMediaType(contentType, type));
  const hasQuery = Object.keys(query).length > 0;
  const now = new Date();
  const userAgent = Object.entries(multiValueHeaders).find(([name]) => name.toLowerCase() === 'user-agent')?.[1][0] ?? null;
  return {
    resource: request.resource,
    path: request.path,
    httpMethod: request.method,
    headers: last(multiValueHeaders),
    multiValueHeaders: Object.fromEntries(Object.entries(multiValueHeaders).map(([name, list]) => [name, [...list]])),
    queryStringParameters: hasQuery ? last(query) : null,
    multiValueQueryStringParameters: hasQuery ? Object.fromEntries(Object.entries(query).map(([name, list]) => [name, [...list]])) : null,
    pathParameters: request.pathParameters ?? null,
    stageVariables: null,
    requestContext: {
      accountId: LOCAL_ACCOUNT,
      apiId: request.apiId ?? 'local',
      authorizer: null,
      domainName: '127.0.0.1',
      domainPrefix: '127',
      extendedRequestId: request.requestId,
      httpMethod: request.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user: null,
        userAgent,
        userArn: null,
      },
      path: `/${request.stage}${request.path}`,
      protocol: 'HTTP/1.1',
      requestId: request.requestId,
      requestTimeEpoch: now.getTime(),
      resourceId: 'local',
      resourcePath: request.resource,
      stage: request.stage,
    },
    body: body.length === 0 ? null : body.toString(binary ? 'base64' : 'utf8'),
    isBase64Encoded: body.length > 0 && binary,
  };
}

/** Whether a content type is of a binary media type (`*` / `*`, `image/*`, or itself); without one, only `*` / `*` matches. */
function isMediaType(contentType: string | undefined, type: string): boolean {
  if (type === '*/*') return true;
  const own = contentType?.split(';')[0].trim().toLowerCase();
  if (!own) return false;
  const [major, minor] = type.toLowerCase().split('/');
  return minor === '*' ? own.startsWith(`${major}/`) : own === type.toLowerCase();
}
