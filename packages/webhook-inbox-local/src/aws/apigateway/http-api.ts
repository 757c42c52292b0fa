/**
 * An HTTP front door that behaves like an API Gateway HTTP API with a Lambda proxy integration
 * (payload format 2.0), for the local twin: routes requests by route key as API Gateway does, builds the event
 * (lower-case headers, repeated headers joined by commas, base64 for non-text bodies), enforces
 * the 10 MB request limit and Lambda's 6 MB invocation payload limit, and answers as API Gateway
 * does when the integration fails (500) or times out (503). The REST API's is rest-api.ts.
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { LOCAL_ACCOUNT } from '../local-aws';
import { FrontDoorAnswers, FrontDoorOptions, LocalApiGateway, proxy, responder, startFrontDoor } from './front-door';

export { API_GATEWAY_MAX_REQUEST_BYTES, matchRoute, type ApiAccessRecord, type LocalApiGateway } from './front-door';

/** Content types API Gateway passes to Lambda as text; any other body arrives base64-encoded. */
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|application\/[\w.+-]+\+(json|xml))/i;

/** One route of the API: its route key (`POST /hooks/x`, `GET /items/{id}`, `ANY /{proxy+}`, `$default`) and its integration. */
export interface ApiRoute {
  readonly routeKey: string;
  readonly invoke: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
}

export interface ApiGatewayOptions extends FrontDoorOptions {
  readonly routes: readonly ApiRoute[];
}

export function startApiGateway(options: ApiGatewayOptions): Promise<LocalApiGateway> {
  return startFrontDoor(options, (req, res) => serve(req, res, options));
}

async function serve(req: IncomingMessage, res: ServerResponse, options: ApiGatewayOptions): Promise<void> {
  const door = responder(req, res, options, 'apigw-requestid');
  const { url, requestId } = door;
  await proxy(req, door, options.routes, url.pathname, HTTP_API_ANSWERS, options.throttles, {
    eventOf: (matched, body) => toEvent(req, url, matched.route.routeKey, body, requestId, options.apiId, matched.pathParameters),
    headersOf: (result) => (result.headers ?? {}) as Record<string, string>,
  });
}

/** An HTTP API: 404 for no route, 503 for a timeout, 500 for a failed integration. */
const HTTP_API_ANSWERS: FrontDoorAnswers = { noRoute: [404, 'Not Found'], timeout: [503, 'Service Unavailable'], failure: [500, 'Internal Server Error'] };

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
