/**
 * An HTTP front door that behaves like an API Gateway HTTP API with a Lambda proxy integration
 * (payload format 2.0), for the local twin: routes `POST /hooks/<provider>`, builds the event
 * (lower-case headers, repeated headers joined by commas, base64 for non-text bodies), enforces
 * the 10 MB request limit and Lambda's 6 MB invocation payload limit, and answers as API Gateway
 * does when the integration fails (500) or times out (503).
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Limits } from '../lib/contract';
import { InvocationTimeoutError } from './lambda-host';
import { LOCAL_ACCOUNT } from './local-aws';
import { closeServer, listenOnLoopback } from './loopback';

export const API_GATEWAY_MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** Content types API Gateway passes to Lambda as text; any other body arrives base64-encoded. */
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|application\/[\w.+-]+\+(json|xml))/i;

export interface ApiGatewayOptions {
  readonly port?: number;
  /** Provider names served at `/hooks/<name>`. */
  readonly routes: readonly string[];
  readonly invoke: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
}

export interface LocalApiGateway {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startApiGateway(options: ApiGatewayOptions): Promise<LocalApiGateway> {
  const routes = new Set(options.routes);
  const server: Server = createServer((req, res) => void serve(req, res, routes, options.invoke));
  return { url: await listenOnLoopback(server, options.port), stop: () => closeServer(server) };
}

async function serve(req: IncomingMessage, res: ServerResponse, routes: ReadonlySet<string>, invoke: ApiGatewayOptions['invoke']): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const provider = /^\/hooks\/([^/]+)$/.exec(url.pathname)?.[1];
  if (req.method !== 'POST' || !provider || !routes.has(provider)) {
    req.resume();
    return answer(res, 404, { message: 'Not Found' });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > API_GATEWAY_MAX_REQUEST_BYTES) return answer(res, 413, { message: 'Request Entity Too Large' });
    chunks.push(chunk as Buffer);
  }
  const event = toEvent(req, url, provider, Buffer.concat(chunks));
  if (Buffer.byteLength(JSON.stringify(event)) > Limits.LAMBDA_SYNC_PAYLOAD_BYTES) {
    return answer(res, 413, { message: 'Request Entity Too Large' });
  }
  let result: APIGatewayProxyStructuredResultV2;
  try {
    result = await invoke(event);
  } catch (error) {
    return error instanceof InvocationTimeoutError
      ? answer(res, 503, { message: 'Service Unavailable' })
      : answer(res, 500, { message: 'Internal Server Error' });
  }
  const body = result.body === undefined ? '' : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  res.writeHead(result.statusCode ?? 200, { ...(result.headers as Record<string, string>), 'content-length': body.length });
  res.end(body);
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function toEvent(req: IncomingMessage, url: URL, provider: string, body: Buffer): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    headers[name] = name in headers ? `${headers[name]},${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1];
  }
  return httpApiEvent({
    routeKey: `POST /hooks/${provider}`,
    path: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    body,
    protocol: `HTTP/${req.httpVersion}`,
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
  });
}

/** A request as the front door sees it: headers with lower-case names (repeats joined with commas, as API Gateway joins them). */
export interface HttpApiRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** @default `POST <path>` */
  readonly routeKey?: string;
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
  const routeKey = request.routeKey ?? `POST ${request.path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: request.path,
    rawQueryString: request.rawQueryString ?? '',
    headers: { ...headers },
    requestContext: {
      accountId: LOCAL_ACCOUNT,
      apiId: 'local',
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: '127',
      http: {
        method: 'POST',
        path: request.path,
        protocol: request.protocol ?? 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : body.toString(asText ? 'utf8' : 'base64'),
    isBase64Encoded: body.length > 0 && !asText,
  };
}
