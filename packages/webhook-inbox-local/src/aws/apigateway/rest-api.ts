/**
 * A front door that behaves like an API Gateway REST API with Lambda proxy integrations (payload
 * format 1.0), for the local twin: its stage in the path, its 403 for what no method serves, its
 * binary media types, its 502 for a failed integration and its 504 for a timeout.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { LOCAL_ACCOUNT } from '../local-aws';
import { FrontDoorAnswers, FrontDoorOptions, LocalApiGateway, proxy, responder, startFrontDoor } from './front-door';

/** One method of a REST API: its key (`POST /hooks/x`, the resource path without the stage) and its Lambda proxy integration. */
export interface RestApiRoute {
  readonly routeKey: string;
  readonly invoke: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyStructuredResultV2>;
}

export interface RestApiGatewayOptions extends FrontDoorOptions {
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
  await proxy(req, door, options.routes, path, REST_API_ANSWERS, options.throttles, {
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
