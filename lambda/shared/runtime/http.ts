import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** Request headers with lower-case names, as API Gateway HTTP APIs deliver them. */
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
  | 'handshake'
  | 'source_not_allowed'
  | 'subscription_refused'
  | 'bad_signature'
  | 'stale_timestamp'
  | 'malformed'
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
  handshake: 200,
  source_not_allowed: 403,
  subscription_refused: 403,
  bad_signature: 400,
  stale_timestamp: 400,
  malformed: 400,
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

/** Turns an API Gateway (payload 2.0) event into raw bytes, refusing bodies over the limit. */
export function parseApiGatewayEvent(event: APIGatewayProxyEventV2, maxBodyBytes: number): ParsedRequest {
  const provider = HOOK_PATH.exec(event.rawPath ?? '')?.[1];
  if (!provider) {
    return { ok: false, reason: 'unknown_provider', detail: 'path is not /hooks/<provider>' };
  }
  const encoding = event.isBase64Encoded ? 'base64' : 'utf8';
  // API Gateway sends the body and header values as strings; anything else (a direct invocation's
  // null or number) is no body or no header, never an exception.
  const raw = typeof event.body === 'string' ? event.body : '';
  if (Buffer.byteLength(raw, encoding) > maxBodyBytes) {
    return { ok: false, reason: 'too_large', detail: `body exceeds ${maxBodyBytes} bytes`, provider };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  return {
    ok: true,
    request: {
      provider,
      headers,
      body: Buffer.from(raw, encoding),
      requestId: event.requestContext?.requestId ?? '',
      method: event.requestContext?.http?.method ?? 'POST',
      path: event.rawPath ?? '',
      rawQueryString: typeof event.rawQueryString === 'string' ? event.rawQueryString : '',
      sourceIp: event.requestContext?.http?.sourceIp ?? '',
    },
  };
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
