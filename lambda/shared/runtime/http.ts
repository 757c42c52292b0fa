import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** Request headers with lower-case names, as API Gateway HTTP APIs deliver them (and the REST API's are made to look). */
export type Headers = Readonly<Record<string, string | undefined>>;

/** What of a request, beyond its headers and bytes, a signature may cover or an edge check reads. */
export interface RequestContext {
  readonly method: string;
  /** The path as received, e.g. `/hooks/twilio`. */
  readonly path: string;
  /** The query string as received, without `?`; empty when none. */
  readonly rawQueryString: string;
  /** The sender's address as API Gateway saw it. */
  readonly sourceIp: string;
}

/** What the verifier needs of one HTTP request: the exact bytes, their headers, and where they came from. */
export interface InboundRequest extends RequestContext {
  readonly provider: string;
  readonly headers: Headers;
  readonly body: Buffer;
  readonly requestId: string;
}

/** An answer a provider's handshake asks for, given as the provider documents it. */
export interface HandshakeAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** Every answer the endpoint gives; each is also a log reason code. */
export type Reason =
  | 'accepted'
  | 'duplicate'
  | 'quarantined'
  | 'test'
  | 'not_final'
  | 'filtered'
  | 'handshake'
  | 'source_not_allowed'
  | 'subscription_refused'
  | 'bad_signature'
  | 'stale_timestamp'
  | 'malformed'
  | 'body_too_deep'
  | 'too_large'
  | 'unknown_provider'
  | 'store_error'
  | 'secret_unavailable'
  | 'certificate_unavailable'
  | 'confirmation_failed'
  | 'internal_error';

/**
 * The one place reasons become HTTP statuses. 2xx means "durably stored or deliberately
 * ignored, stop retrying"; 4xx means "this request can never succeed"; 5xx means "retry".
 * The endpoint never answers 3xx.
 */
export const HTTP_STATUS: Readonly<Record<Reason, number>> = {
  accepted: 202,
  duplicate: 200,
  quarantined: 200,
  test: 200,
  not_final: 200,
  filtered: 200,
  handshake: 200,
  source_not_allowed: 403,
  subscription_refused: 403,
  bad_signature: 400,
  stale_timestamp: 400,
  malformed: 400,
  body_too_deep: 400,
  too_large: 413,
  unknown_provider: 404,
  store_error: 503,
  secret_unavailable: 503,
  certificate_unavailable: 503,
  confirmation_failed: 502,
  internal_error: 500,
};

const HOOK_PATH = /\/hooks\/([^/]+)\/?$/;

export type ParsedRequest =
  | { readonly ok: true; readonly request: InboundRequest }
  | { readonly ok: false; readonly reason: Reason; readonly detail: string; readonly provider?: string };

/** The event of either ingress: an HTTP API's (payload format 2.0) or a REST API's Lambda proxy event (payload format 1.0). */
export type IngressEvent = APIGatewayProxyEventV2 | APIGatewayProxyEvent;

/**
 * Turns the event of either ingress into raw bytes, refusing bodies over the limit. The shape is
 * the event's own: a REST API's proxy event names its method in `httpMethod`, an HTTP API's does not.
 */
export function parseIngressEvent(event: IngressEvent, maxBodyBytes: number): ParsedRequest {
  return typeof (event as Partial<APIGatewayProxyEvent>).httpMethod === 'string'
    ? parseRestApiEvent(event as APIGatewayProxyEvent, maxBodyBytes)
    : parseApiGatewayEvent(event as APIGatewayProxyEventV2, maxBodyBytes);
}

/** Turns an API Gateway HTTP API (payload 2.0) event into raw bytes, refusing bodies over the limit. */
export function parseApiGatewayEvent(event: APIGatewayProxyEventV2, maxBodyBytes: number): ParsedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  return toRequest(event.body, event.isBase64Encoded, headers, maxBodyBytes, {
    requestId: event.requestContext?.requestId ?? '',
    method: event.requestContext?.http?.method ?? 'POST',
    path: event.rawPath ?? '',
    rawQueryString: typeof event.rawQueryString === 'string' ? event.rawQueryString : '',
    sourceIp: event.requestContext?.http?.sourceIp ?? '',
  });
}

/**
 * Turns a REST API Lambda proxy (payload 1.0) event into the request an HTTP API event makes of the
 * same bytes: header names lower-cased and a repeated header's values joined with commas (from
 * `multiValueHeaders`, in the order received), the query string rebuilt from its decoded
 * parameters (the event has no raw one), the path without the stage.
 */
export function parseRestApiEvent(event: APIGatewayProxyEvent, maxBodyBytes: number): ParsedRequest {
  const values = new Map<string, string[]>();
  const multi = event.multiValueHeaders ?? {};
  // A name in `headers` only (a direct invocation's) still counts; `multiValueHeaders` has every repeat.
  const single = Object.entries(event.headers ?? {}).filter(([name]) => !Array.isArray(multi[name]));
  const entries: [string, unknown][] = [...Object.entries(multi), ...single.map(([name, value]): [string, unknown] => [name, [value]])];
  for (const [name, list] of entries) {
    if (!Array.isArray(list)) continue;
    const lowered = name.toLowerCase();
    // A nameless entry (AWS's own documented example has one) is no header.
    if (lowered === '') continue;
    values.set(lowered, [...(values.get(lowered) ?? []), ...list.filter((value): value is string => typeof value === 'string')]);
  }
  const headers: Record<string, string> = {};
  for (const [name, list] of values) if (list.length > 0) headers[name] = list.join(',');
  const query = new URLSearchParams();
  const parameters = event.multiValueQueryStringParameters ?? mapValues(event.queryStringParameters, (value) => [value]);
  for (const [name, list] of Object.entries(parameters ?? {})) {
    for (const value of Array.isArray(list) ? list : []) if (typeof value === 'string') query.append(name, value);
  }
  return toRequest(event.body, event.isBase64Encoded, headers, maxBodyBytes, {
    requestId: event.requestContext?.requestId ?? '',
    method: event.httpMethod,
    path: typeof event.path === 'string' ? event.path : '',
    rawQueryString: query.toString(),
    sourceIp: event.requestContext?.identity?.sourceIp ?? '',
  });
}

function mapValues<T, U>(record: Readonly<Record<string, T | undefined>> | null | undefined, map: (value: T) => U): Record<string, U> | undefined {
  if (!record) return undefined;
  const mapped: Record<string, U> = {};
  for (const [name, value] of Object.entries(record)) if (value !== undefined) mapped[name] = map(value);
  return mapped;
}

/** The request of either shape: the provider from the path, the body as bytes within the limit. */
function toRequest(
  body: unknown,
  isBase64Encoded: unknown,
  headers: Record<string, string>,
  maxBodyBytes: number,
  context: RequestContext & { readonly requestId: string },
): ParsedRequest {
  const provider = HOOK_PATH.exec(context.path)?.[1];
  if (!provider) {
    return { ok: false, reason: 'unknown_provider', detail: 'path is not /hooks/<provider>' };
  }
  const encoding = isBase64Encoded === true ? 'base64' : 'utf8';
  // API Gateway sends the body and header values as strings; anything else (a direct invocation's
  // null or number) is no body or no header, never an exception.
  const raw = typeof body === 'string' ? body : '';
  if (Buffer.byteLength(raw, encoding) > maxBodyBytes) {
    return { ok: false, reason: 'too_large', detail: `body exceeds ${maxBodyBytes} bytes`, provider };
  }
  return { ok: true, request: { provider, headers, body: Buffer.from(raw, encoding), ...context } };
}

/**
 * The HTTP answer for a reason; the body names the reason and, for rejections, the field at fault.
 * `status` overrides the reason's own where a provider documents another (Discord: 401 for a bad signature).
 */
export function respond(reason: Reason, detail?: string, status = HTTP_STATUS[reason]): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(detail ? { result: reason, detail } : { result: reason }),
  };
}

/** A handshake's answer, exactly as the provider asks for it. */
export function respondToHandshake(answer: HandshakeAnswer): APIGatewayProxyStructuredResultV2 {
  return { statusCode: answer.status, headers: { 'content-type': answer.contentType }, body: answer.body };
}
