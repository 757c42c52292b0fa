import { GitHubHookTarget, hookDeliveriesPath, RecoveryFacts, RecoveryRuntimeConfig } from '../../../../lib/contract';
import { ProviderAdapter } from '../adapter';
import { SecretCache, usableVersions } from '../../signatures/secrets';
import { ApiAnswer, ApiFailure, apiRequest, isFailure, jsonOf, retryAfterSeconds } from '../recovery/api-request';
import { alreadyHandled, EntryOutcome, FeedContext, FeedEntry, FeedRun, listingStart, nextPosition, RecoveryFeed } from '../recovery/feed';
import { GitHubCredentials } from './credentials';

/** The REST API version the requests ask for (GitHub answers in it whatever its default becomes). */
const API_VERSION = '2022-11-28';
/** A run leaves this share of the token's hourly budget unused: the token may serve other tools too. */
const RATE_LIMIT_RESERVE = 0.1;

/** One attempt as GitHub lists it: the fields recovery reads. */
interface ListedDelivery extends FeedEntry {
  readonly deliveryId: number;
  readonly guid: string;
  readonly statusCode: number;
}

/** Why a request stopped the run. */
interface Stop {
  readonly stop: Exclude<FeedRun['outcome'], 'complete'>;
  readonly detail: string;
}

/**
 * Recovery of one GitHub hook's deliveries (docs/providers/github.md#recovery). GitHub makes one
 * attempt and never retries, but lists every attempt of the past 3 days with its status code, and
 * serves each attempt's headers and payload. Each run lists the hook's deliveries since its
 * position (newest first, 100 a page, following the `link` header's `next` cursor); a GUID with no
 * 2xx attempt among them was not stored by the inbox (which answers 2xx only once stored). For
 * each, the newest attempt's payload is fetched and serialized again; when the signature GitHub
 * recorded for it verifies over those bytes with the signing secret, they are exactly the bytes
 * GitHub sent, and they are admitted (the event id is their digest, so a later delivery of them
 * is a duplicate). When it does not (a payload sent form-encoded, or serialized otherwise), GitHub
 * is asked to deliver it again, signed, through the endpoint.
 */
export class GitHubDeliveriesFeed implements RecoveryFeed {
  readonly target: string;
  private readonly credentials: GitHubCredentials;
  private readonly deliveriesUrl: string;

  constructor(
    private readonly config: RecoveryRuntimeConfig & { readonly hook: GitHubHookTarget; readonly signingSecretId: string },
    private readonly adapter: ProviderAdapter,
    private readonly secrets: SecretCache,
  ) {
    this.credentials = new GitHubCredentials(secrets, config.credentialsSecretId);
    this.deliveriesUrl = `${config.baseUrl.replace(/\/+$/, '')}${hookDeliveriesPath(config.hook)}`;
    this.target = this.deliveriesUrl;
  }

  async run(context: FeedContext): Promise<FeedRun> {
    const counts: Record<EntryOutcome, number> = { recovered: 0, held: 0, redelivered: 0, unadmissible: 0 };
    const overlapMs = this.config.overlapSeconds * 1000;
    const since = listingStart(context.position, context.now, overlapMs, this.config.initialLookbackSeconds * 1000);
    const until = context.now - this.config.settleSeconds * 1000;
    const listed = await this.list(since, context);
    if ('stop' in listed)
      return { outcome: listed.stop, counts, beyondRetention: false, detail: listed.detail, ...(listed.stop === 'gone' ? { gone: this.target } : {}) };
    const attempts = listed.attempts.filter((attempt) => attempt.at <= until);
    const beyondRetention = !listed.reachedStart && since < context.now - RecoveryFacts.github.retentionSeconds * 1000;

    const stored = new Set(attempts.filter((attempt) => attempt.statusCode >= 200 && attempt.statusCode < 300).map((attempt) => attempt.guid));
    // One entry per GUID not stored: its newest attempt (its payload is the event's), oldest first.
    const newestByGuid = new Map<string, ListedDelivery>();
    for (const attempt of attempts) {
      if (stored.has(attempt.guid)) continue;
      const known = newestByGuid.get(attempt.guid);
      if (!known || attempt.at > known.at) newestByGuid.set(attempt.guid, attempt);
    }
    const missing = [...newestByGuid.values()].sort((a, b) => a.at - b.at || a.deliveryId - b.deliveryId);
    let handledCount = 0;
    let stop: Stop | undefined;
    for (const delivery of missing) {
      if (!alreadyHandled(context.position, delivery.id)) {
        if (!context.hasTime()) {
          stop = { stop: 'partial', detail: 'time_budget' };
          break;
        }
        const outcome = await this.recover(delivery, context);
        if (typeof outcome !== 'string') {
          stop = outcome;
          break;
        }
        counts[outcome] += 1;
      }
      handledCount += 1;
    }
    const position = nextPosition(context.position, missing, handledCount, until, overlapMs);
    return { outcome: stop?.stop ?? 'complete', position, counts, beyondRetention, ...(stop ? { detail: stop.detail } : {}) };
  }

  /** The hook's attempts delivered since `since` (newest first, as GitHub pages them), or why not. */
  private async list(since: number, context: FeedContext): Promise<{ attempts: ListedDelivery[]; reachedStart: boolean } | Stop> {
    const attempts: ListedDelivery[] = [];
    let url: string | undefined = `${this.deliveriesUrl}?per_page=${RecoveryFacts.github.pageSize}`;
    while (url !== undefined) {
      if (!context.hasTime()) return { stop: 'partial', detail: 'time_budget' };
      const answer = await this.request('GET', url, context.now);
      if ('stop' in answer) return answer;
      const page = jsonOf(answer);
      if (!Array.isArray(page)) return { stop: 'failed', detail: 'malformed_response' };
      for (const item of page) {
        const attempt = listedDelivery(item);
        if (!attempt) return { stop: 'failed', detail: 'malformed_response' };
        if (attempt.at < since) return { attempts, reachedStart: true };
        attempts.push(attempt);
      }
      url = nextLink(answer.headers.get('link'), this.deliveriesUrl);
    }
    return { attempts, reachedStart: false };
  }

  private async recover(delivery: ListedDelivery, context: FeedContext): Promise<EntryOutcome | Stop> {
    const answer = await this.request('GET', `${this.deliveriesUrl}/${delivery.deliveryId}`, context.now);
    if ('stop' in answer) return answer.stop === 'gone' ? { stop: 'failed', detail: 'delivery_not_found' } : answer;
    const recorded = recordedRequest(jsonOf(answer));
    if (recorded && (await this.verifies(recorded.headers, recorded.body, context.now))) return context.admit(recorded.headers, recorded.body);
    // Not the exact bytes GitHub signed: GitHub sends them again, signed, to the endpoint.
    const redelivery = await this.request('POST', `${this.deliveriesUrl}/${delivery.deliveryId}/attempts`, context.now);
    if ('stop' in redelivery) return redelivery.stop === 'gone' ? { stop: 'failed', detail: 'delivery_not_found' } : redelivery;
    return 'redelivered';
  }

  private async verifies(headers: Record<string, string>, body: Buffer, now: number): Promise<boolean> {
    const versions = usableVersions(await this.secrets.versions(this.config.signingSecretId), now, this.adapter.previousSecretGraceSeconds);
    return this.adapter.verify(headers, body, this.adapter.signingKeys(versions), Math.floor(now / 1000)).ok;
  }

  /**
   * One request with the credentials (read again once when GitHub refuses them: rotated). Stops the
   * run on a rate limit (primary or secondary: 403 or 429 with `retry-after` or no requests left),
   * when fewer than the reserve are left, on 404 (the hook is gone), and on any other failure.
   */
  private async request(method: 'GET' | 'POST', url: string, now: number): Promise<ApiAnswer | Stop> {
    let authorization: string;
    try {
      authorization = await this.credentials.authorization(now);
    } catch {
      return { stop: 'failed', detail: 'credentials_unavailable' };
    }
    let answer = await this.send(method, url, authorization);
    if (!isFailure(answer) && answer.status === 401) {
      const fresh = await this.credentials.refreshed(now).catch(() => undefined);
      if (fresh !== undefined && fresh !== authorization) answer = await this.send(method, url, fresh);
    }
    if (isFailure(answer)) return { stop: 'failed', detail: answer.failed };
    const remaining = Number(answer.headers.get('x-ratelimit-remaining') ?? NaN);
    const limit = Number(answer.headers.get('x-ratelimit-limit') ?? NaN);
    if (answer.status === 429 || (answer.status === 403 && (remaining === 0 || retryAfterSeconds(answer.headers, now) !== undefined))) {
      return { stop: 'rate_limited', detail: `http_${answer.status}` };
    }
    if (answer.status === 404) return { stop: 'gone', detail: 'not_found' };
    if (answer.status < 200 || answer.status >= 300) return { stop: 'failed', detail: `http_${answer.status}` };
    if (Number.isFinite(remaining) && Number.isFinite(limit) && remaining < limit * RATE_LIMIT_RESERVE) return { stop: 'rate_limited', detail: 'reserve' };
    return answer;
  }

  private send(method: 'GET' | 'POST', url: string, authorization: string): Promise<ApiAnswer | ApiFailure> {
    return apiRequest({
      method,
      url,
      headers: { authorization, accept: 'application/vnd.github+json', 'x-github-api-version': API_VERSION, 'user-agent': 'webhook-inbox-reconciler' },
      timeoutMs: this.config.timeoutMs,
    });
  }
}

/** An attempt of the list, or undefined when the item is not one. */
function listedDelivery(item: unknown): ListedDelivery | undefined {
  const fields = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
  const at = typeof fields.delivered_at === 'string' ? Date.parse(fields.delivered_at) : NaN;
  if (!Number.isSafeInteger(fields.id) || typeof fields.guid !== 'string' || Number.isNaN(at)) return undefined;
  const deliveryId = fields.id as number;
  return {
    id: String(deliveryId),
    deliveryId,
    at,
    guid: fields.guid,
    statusCode: Number.isSafeInteger(fields.status_code) ? (fields.status_code as number) : 0,
  };
}

/** The request GitHub recorded: its headers (lower-cased, as the adapter reads them) and its JSON payload serialized again. */
function recordedRequest(detail: unknown): { headers: Record<string, string>; body: Buffer } | undefined {
  const request = (detail as { request?: { headers?: unknown; payload?: unknown } } | undefined)?.request;
  if (!request || typeof request.headers !== 'object' || request.headers === null || request.payload === undefined || request.payload === null)
    return undefined;
  const headers = Object.fromEntries(
    Object.entries(request.headers as Record<string, unknown>).flatMap(([name, value]) => (typeof value === 'string' ? [[name.toLowerCase(), value]] : [])),
  );
  if (!(headers['content-type'] ?? 'application/json').startsWith('application/json')) return undefined;
  return { headers, body: Buffer.from(JSON.stringify(request.payload)) };
}

/**
 * The `next` page of a `link` header (RFC 8288): only one on the same origin and path as the
 * deliveries' URL is followed, since the credentials go with it.
 */
export function nextLink(link: string | null, deliveriesUrl: string): string | undefined {
  const match = link
    ?.split(',')
    .find((part) => /;\s*rel="?next"?/.test(part))
    ?.match(/<([^>]+)>/);
  if (!match) return undefined;
  const next = new URL(match[1], deliveriesUrl);
  const base = new URL(deliveriesUrl);
  return next.origin === base.origin && next.pathname === base.pathname ? next.toString() : undefined;
}
