import { RecoveryFacts, RecoveryRuntimeConfig } from '../../../../lib/contract';
import { ApiKeySource } from '../api-key';
import { ApiAnswer, apiRequest, isFailure, jsonOf } from '../recovery/api-request';
import { alreadyHandled, EntryOutcome, FeedContext, FeedEntry, FeedRun, listingStart, nextPosition, RecoveryFeed } from '../recovery/feed';

/** The events list, below the API's base URL. Each event is rendered in the API version it was created with. */
const LIST_PATH = '/v1/events';

interface ListedEvent extends FeedEntry {
  readonly event: Record<string, unknown>;
}

interface Stop {
  readonly stop: 'partial' | 'rate_limited' | 'failed';
  readonly detail: string;
}

/**
 * Recovery of a Stripe account's events (docs/providers/stripe.md#recovery). Stripe retries a
 * failed delivery for up to 3 days, then stops; it lists every event of the past 30 days. Each run
 * lists the events created between its position (less the overlap) and the run's start less the
 * settle time, not yet delivered to every endpoint (`delivery_success=false`), of the endpoint's
 * types, newest first, 100 a page (`starting_after` the last one's id while `has_more`), and admits
 * each the inbox does not hold, by its id, as Stripe would deliver it.
 */
export class StripeEventsFeed implements RecoveryFeed {
  readonly target: string;
  private readonly apiKeys: ApiKeySource;

  constructor(
    private readonly config: RecoveryRuntimeConfig,
    secrets: ConstructorParameters<typeof ApiKeySource>[0],
  ) {
    this.apiKeys = new ApiKeySource(secrets, config.credentialsSecretId);
    this.target = `${config.baseUrl.replace(/\/+$/, '')}${LIST_PATH}`;
  }

  async run(context: FeedContext): Promise<FeedRun> {
    const counts: Record<EntryOutcome, number> = { recovered: 0, held: 0, redelivered: 0, unadmissible: 0 };
    const overlapMs = this.config.overlapSeconds * 1000;
    const retentionStart = context.now - RecoveryFacts.stripe.retentionSeconds * 1000;
    const wanted = listingStart(context.position, context.now, overlapMs, this.config.initialLookbackSeconds * 1000);
    // Events older than Stripe keeps cannot be listed: reported, and the listing starts where Stripe's log does.
    const beyondRetention = wanted < retentionStart;
    const since = Math.max(wanted, retentionStart);
    const until = context.now - this.config.settleSeconds * 1000;
    const listed = await this.list(since, until, context);
    if ('stop' in listed) return { outcome: listed.stop, counts, beyondRetention, detail: listed.detail };
    // Oldest first; Stripe lists the newest first.
    const events = listed.reverse();
    let handledCount = 0;
    let stop: Stop | undefined;
    for (const entry of events) {
      if (!alreadyHandled(context.position, entry.id)) {
        counts[await context.admit({}, Buffer.from(JSON.stringify(entry.event, null, 2)))] += 1;
      }
      handledCount += 1;
      if (handledCount < events.length && !context.hasTime()) {
        stop = { stop: 'partial', detail: 'time_budget' };
        break;
      }
    }
    const position = nextPosition(context.position, events, handledCount, until, overlapMs);
    return { outcome: stop?.stop ?? 'complete', position, counts, beyondRetention, ...(stop ? { detail: stop.detail } : {}) };
  }

  private async list(since: number, until: number, context: FeedContext): Promise<ListedEvent[] | Stop> {
    const events: ListedEvent[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      if (!context.hasTime()) return { stop: 'partial', detail: 'time_budget' };
      const query = new URLSearchParams({
        'created[gte]': String(Math.floor(since / 1000)),
        'created[lte]': String(Math.floor(until / 1000)),
        delivery_success: 'false',
        limit: String(RecoveryFacts.stripe.pageSize),
      });
      for (const type of this.config.eventTypes ?? []) query.append('types[]', type);
      if (startingAfter !== undefined) query.set('starting_after', startingAfter);
      const answer = await this.get(`${this.target}?${query.toString()}`);
      if ('stop' in answer) return answer;
      const page = jsonOf(answer) as { data?: unknown; has_more?: unknown } | undefined;
      if (!page || !Array.isArray(page.data) || typeof page.has_more !== 'boolean') return { stop: 'failed', detail: 'malformed_response' };
      for (const item of page.data) {
        const event = listedEvent(item);
        if (!event) return { stop: 'failed', detail: 'malformed_response' };
        events.push(event);
      }
      if (!page.has_more || page.data.length === 0) return events;
      startingAfter = events[events.length - 1].id;
    }
  }

  /** One GET with the key (read again once when Stripe refuses it: rotated). A 429 stops the run; so does any other failure. */
  private async get(url: string): Promise<ApiAnswer | Stop> {
    let key: string;
    try {
      key = await this.apiKeys.key();
    } catch {
      return { stop: 'failed', detail: 'credentials_unavailable' };
    }
    const send = (bearer: string) =>
      apiRequest({ method: 'GET', url, headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' }, timeoutMs: this.config.timeoutMs });
    let answer = await send(key);
    if (!isFailure(answer) && answer.status === 401) {
      const fresh = await this.apiKeys.refreshed().catch(() => undefined);
      if (fresh !== undefined && fresh !== key) answer = await send(fresh);
    }
    if (isFailure(answer)) return { stop: 'failed', detail: answer.failed };
    if (answer.status === 429) return { stop: 'rate_limited', detail: 'http_429' };
    if (answer.status !== 200) return { stop: 'failed', detail: stripeErrorDetail(answer) };
    return answer;
  }
}

function listedEvent(item: unknown): ListedEvent | undefined {
  const event = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
  if (typeof event.id !== 'string' || event.id === '' || !Number.isSafeInteger(event.created)) return undefined;
  return { id: event.id, at: (event.created as number) * 1000, event };
}

/** Stripe's error body is `{"error": {"type": …, "code": …, "message": …}}`: the status and the type (a reason code), never the message. */
function stripeErrorDetail(answer: ApiAnswer): string {
  const type = (jsonOf(answer) as { error?: { type?: unknown } } | undefined)?.error?.type;
  return typeof type === 'string' && /^[a-z_]{1,40}$/.test(type) ? `http_${answer.status}:${type}` : `http_${answer.status}`;
}
