import { Defaults, TASK_ID_PLACEHOLDERS } from '../../../lib/contract';
import { ApiKeySource } from './api-key';
import { errorName } from '../runtime/errors';

/**
 * What polling a provider for one task found. `final`: the body to feed into the inbox as if it
 * had been delivered, with the delivery headers the adapter reads (Echonova's event name);
 * `pending`: not final yet (the provider's status, a reason code); `not_found`: unknown or no
 * longer kept; `rate_limited`: 429, stop polling this provider for the run; `error`: anything
 * else, retried next run (`detail` is a reason code, never content).
 */
export type PollResult =
  | { readonly kind: 'final'; readonly body: Buffer; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: 'pending'; readonly status: string }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds?: number }
  | { readonly kind: 'error'; readonly detail: string };

/** What a provider reports of the tasks it still holds: how many are queued and how many processing; or why it could not say. */
export type ProviderStatus =
  { readonly kind: 'status'; readonly queuedTasks: number; readonly processingTasks: number } | { readonly kind: 'error'; readonly detail: string };

/** A provider's task API, as far as the reconciler needs it. */
export interface ProviderApi {
  fetchTask(taskId: string): Promise<PollResult>;
  /** How many tasks the provider still has queued or processing, for a provider with a status endpoint. */
  fetchStatus?(): Promise<ProviderStatus>;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: Buffer;
  readonly retryAfter?: string;
}

export interface TaskRequestOptions {
  readonly urlTemplate: string;
  readonly apiKeys: ApiKeySource;
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

/** The URL of one task: the id, URL-encoded, in place of `{taskId}` or `{jobId}`. */
export function taskUrl(template: string, taskId: string): string {
  const encoded = encodeURIComponent(taskId);
  return TASK_ID_PLACEHOLDERS.reduce((url, placeholder) => url.replace(placeholder, encoded), template);
}

/**
 * GETs one task with the Bearer key. A refused key (401/403) is read again from Secrets Manager
 * once (it may have been rotated) and the request repeated with it. Redirects are not followed:
 * the key must never travel to another address. Returns the answer, or a PollResult error for
 * what never got one (timeout, network, no key).
 */
export function getTask(taskId: string, options: TaskRequestOptions): Promise<HttpAnswer | PollResult> {
  return getWithKey(taskUrl(options.urlTemplate, taskId), options);
}

/** GETs `url` with the Bearer key, as `getTask` does (the key read again once when refused). */
export async function getWithKey(url: string, options: TaskRequestOptions): Promise<HttpAnswer | PollResult> {
  let key: string;
  try {
    key = await options.apiKeys.key();
  } catch {
    return { kind: 'error', detail: 'api_key_unavailable' };
  }
  let answer = await get(url, key, options);
  if (!isPollResult(answer) && (answer.status === 401 || answer.status === 403)) {
    const fresh = await options.apiKeys.refreshed().catch(() => undefined);
    if (fresh !== undefined && fresh !== key) answer = await get(url, fresh, options);
  }
  return answer;
}

export function isPollResult(value: HttpAnswer | PollResult): value is PollResult {
  return 'kind' in value;
}

/** The PollResult of every status that means the same for every provider; undefined for 200. */
export function commonOutcome(answer: HttpAnswer): PollResult | undefined {
  if (answer.status === 200) return undefined;
  if (answer.status === 404 || answer.status === 410) return { kind: 'not_found' };
  if (answer.status === 429) {
    const seconds = Number(answer.retryAfter);
    return { kind: 'rate_limited', ...(Number.isFinite(seconds) && seconds >= 0 ? { retryAfterSeconds: seconds } : {}) };
  }
  if (answer.status === 401 || answer.status === 403) return { kind: 'error', detail: 'unauthorized' };
  return { kind: 'error', detail: `http_${answer.status}` };
}

async function get(url: string, key: string, options: TaskRequestOptions): Promise<HttpAnswer | PollResult> {
  const maxBytes = options.maxBytes ?? Defaults.MAX_BODY_BYTES;
  try {
    const response = await fetch(url, {
      method: 'GET',
      headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? Defaults.POLL_TIMEOUT_MS),
    });
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > maxBytes) {
      await response.body?.cancel();
      return { kind: 'error', detail: 'too_large' };
    }
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > maxBytes) return { kind: 'error', detail: 'too_large' };
    const retryAfter = response.headers.get('retry-after');
    return { status: response.status, body, ...(retryAfter !== null ? { retryAfter } : {}) };
  } catch (error) {
    const name = errorName(error);
    return { kind: 'error', detail: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network' };
  }
}
