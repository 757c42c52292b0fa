import { Defaults } from '../../../../lib/contract';
import { errorName } from '../../runtime/errors';

/** An answer of a provider's API: its status, the headers a recovery reads, its body. */
export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

/** Why a request got no answer: a reason code, never content. */
export interface ApiFailure {
  readonly failed: 'timeout' | 'network' | 'too_large';
}

export interface ApiRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/**
 * One request to a provider's API. Redirects are not followed: the credentials must never travel
 * to another address. A body larger than the inbox takes is refused unread.
 */
export async function apiRequest(request: ApiRequest): Promise<ApiAnswer | ApiFailure> {
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    if (Number(response.headers.get('content-length') ?? 0) > Defaults.MAX_BODY_BYTES) {
      await response.body?.cancel();
      return { failed: 'too_large' };
    }
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > Defaults.MAX_BODY_BYTES) return { failed: 'too_large' };
    return { status: response.status, headers: response.headers, body };
  } catch (error) {
    const name = errorName(error);
    return { failed: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network' };
  }
}

export function isFailure(answer: ApiAnswer | ApiFailure): answer is ApiFailure {
  return 'failed' in answer;
}

/** The JSON of an answer's body, or undefined when it is not JSON. */
export function jsonOf(answer: ApiAnswer): unknown {
  try {
    return JSON.parse(answer.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Seconds to wait a `retry-after` header asks for (seconds, or an HTTP date); undefined without one. */
export function retryAfterSeconds(headers: Headers, nowMs: number): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
