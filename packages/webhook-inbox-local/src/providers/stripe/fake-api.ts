/**
 * A FAKE of Stripe's webhooks and events API as its documentation describes them, for the tests
 * and the local twin: an endpoint that Stripe tries a few times and then gives up on (Stripe
 * retries for up to 3 days; the fake's `attempts` stand for them), each attempt signed
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`, and `GET /v1/events`:
 *
 * - newest first; `limit` 1–100 (default 10); `starting_after` or `ending_before` an event id;
 *   `created` (or `created[gte|gt|lte|lt]`) Unix seconds; `type` (`*` a wildcard: `invoice.*`),
 *   or up to 20 `types[]`, not both;
 *   `delivery_success` a boolean (false: events not yet delivered to every endpoint); only the
 *   past 30 days; any other malformed value answered 400;
 * - `{"object": "list", "url": "/v1/events", "has_more", "data"}`;
 * - errors `{"error": {"type", "code", "message"}}`: 401 for a bad key, 429 (`rate_limit`) when
 *   told, 400 for a malformed parameter.
 *
 * Not Stripe: only what the reconciler relies on, written from the docs, never from the runtime.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback, readBody } from '../../aws/loopback';

export interface FakeStripeEvent {
  readonly id: string;
  readonly object: 'event';
  readonly api_version: string;
  readonly created: number;
  readonly data: { readonly object: Record<string, unknown> };
  readonly livemode: false;
  pending_webhooks: number;
  readonly request: { readonly id: null; readonly idempotency_key: null };
  readonly type: string;
}

/** One attempt at the endpoint: its status (0: no answer). */
export interface FakeStripeAttempt {
  readonly eventId: string;
  readonly status: number;
}

export interface FakeStripeOptions {
  /** The endpoint's signing secret (`whsec_…`). */
  readonly secret: string;
  readonly endpointUrl?: string;
  /** Attempts before Stripe gives up on an event. @default 3 */
  readonly attempts?: number;
  /** Stripe's clock: only events created by it are listed, and 30 days before it. @default Date.now */
  readonly now?: () => number;
}

const RETENTION_SECONDS = 30 * 86_400;
const API_VERSION = '2024-06-20';

export class FakeStripe {
  readonly apiKey = `rk_test_${randomBytes(12).toString('hex')}`;
  readonly events: FakeStripeEvent[] = [];
  readonly attempts: FakeStripeAttempt[] = [];
  readonly requests: { readonly path: string; readonly query: string; readonly status: number }[] = [];
  endpointUrl?: string;
  /** The endpoint's signing secret (settable once the inbox made one). */
  secret: string;
  private readonly injected: { status: number; times: number }[] = [];
  private server?: Server;
  private base?: string;

  constructor(private readonly options: FakeStripeOptions) {
    this.endpointUrl = options.endpointUrl;
    this.secret = options.secret;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.base = await listenOnLoopback(this.server);
    return this.base;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await closeServer(this.server);
  }

  get baseUrl(): string {
    if (!this.base) throw new Error('the fake Stripe is not started');
    return this.base;
  }

  /** The next `times` requests are answered `status` in Stripe's error shape (429: too many requests). */
  inject(status: number, times = 1): void {
    this.injected.push({ status, times });
  }

  /** An event: created now (or at `created`), then tried at the endpoint until one attempt gets a 2xx or Stripe gives up. */
  async emit(type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)): Promise<FakeStripeEvent> {
    const event: FakeStripeEvent = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'event',
      api_version: API_VERSION,
      created,
      data: { object },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    };
    this.events.push(event);
    for (let attempt = 0; attempt < (this.options.attempts ?? 3) && event.pending_webhooks > 0; attempt++) await this.attempt(event);
    return event;
  }

  private async attempt(event: FakeStripeEvent): Promise<void> {
    if (!this.endpointUrl) {
      this.attempts.push({ eventId: event.id, status: 0 });
      return;
    }
    const body = Buffer.from(JSON.stringify(event, null, 2));
    const t = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', this.secret).update(`${t}.`).update(body).digest('hex');
    let status = 0;
    try {
      const response = await fetch(this.endpointUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'stripe-signature': `t=${t},v1=${signature}`,
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      status = response.status;
    } catch {
      // No answer: a failed attempt.
    }
    this.attempts.push({ eventId: event.id, status });
    if (status >= 200 && status < 300) event.pending_webhooks = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    await readBody(req);
    const send = (status: number, body: unknown) => {
      this.requests.push({ path: url.pathname, query: url.search, status });
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(7).toString('hex')}` }).end(JSON.stringify(body));
    };
    const error = (status: number, type: string, message: string, code?: string) => send(status, { error: { type, ...(code ? { code } : {}), message } });
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return error(401, 'invalid_request_error', 'Invalid API Key provided.');
    const injected = this.injected[0];
    if (injected) {
      if (--injected.times <= 0) this.injected.shift();
      return injected.status === 429
        ? error(429, 'invalid_request_error', 'Too many requests hit the API too quickly.', 'rate_limit')
        : error(injected.status, 'api_error', 'An unknown error occurred.');
    }
    if (url.pathname !== '/v1/events' || req.method !== 'GET')
      return error(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname}).`);
    const query = url.searchParams;
    const limit = Number(query.get('limit') ?? 10);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return error(400, 'invalid_request_error', 'Invalid integer: limit', 'parameter_invalid_integer');
    const filters = eventFilters(query);
    if (typeof filters === 'string') return error(400, 'invalid_request_error', filters, 'parameter_invalid');
    const { gte, gt, lte, lt, types, deliverySuccess } = filters;
    const nowSeconds = Math.floor((this.options.now ?? Date.now)() / 1000);
    const oldest = nowSeconds - RETENTION_SECONDS;
    // Newest first; events of the same second in the reverse order of their creation.
    let ordered = [...this.events].reverse().sort((a, b) => b.created - a.created);
    const [after, before] = [query.get('starting_after'), query.get('ending_before')];
    if (after !== null && before !== null)
      return error(400, 'invalid_request_error', 'You may only specify one of these parameters: ending_before, starting_after.', 'parameter_invalid');
    const cursor = after ?? before;
    if (cursor !== null) {
      // A cursor is an event's place in the order, whatever the filters say of it now.
      const at = ordered.findIndex((event) => event.id === cursor);
      if (at < 0) return error(400, 'invalid_request_error', `No such event: '${cursor}'`, 'resource_missing');
      ordered = after !== null ? ordered.slice(at + 1) : ordered.slice(0, at);
    }
    const listed = ordered.filter(
      (event) =>
        event.created >= oldest &&
        event.created <= nowSeconds &&
        (gte === undefined || event.created >= gte) &&
        (gt === undefined || event.created > gt) &&
        (lte === undefined || event.created <= lte) &&
        (lt === undefined || event.created < lt) &&
        (types.length === 0 || types.some((type) => typeMatches(type, event.type))) &&
        (deliverySuccess === undefined || deliverySuccess === (event.pending_webhooks === 0)),
    );
    // Before a cursor: the `limit` events just newer than it, still newest first.
    const page = before !== null ? listed.slice(-limit) : listed.slice(0, limit);
    send(200, { object: 'list', url: '/v1/events', has_more: listed.length > limit, data: page });
  }
}

/** Stripe takes at most this many `types[]`. */
const MAX_TYPES = 20;

interface EventFilters {
  readonly gte?: number;
  readonly gt?: number;
  readonly lte?: number;
  readonly lt?: number;
  readonly types: readonly string[];
  readonly deliverySuccess?: boolean;
}

/** The list's filters, as Stripe documents them, or what is wrong with them. */
function eventFilters(query: URLSearchParams): EventFilters | string {
  const seconds = (name: string) => {
    const value = query.get(name);
    return value === null ? undefined : /^\d+$/.test(value) ? Number(value) : NaN;
  };
  const exact = seconds('created');
  const [gte, gt, lte, lt] = ['gte', 'gt', 'lte', 'lt'].map((bound) => seconds(`created[${bound}]`));
  if ([exact, gte, gt, lte, lt].some((value) => Number.isNaN(value))) return 'Invalid integer: created';
  const types = query.getAll('types[]');
  if (types.length > 0 && query.has('type')) return 'You may pass either type or types, but not both.';
  if (types.length > MAX_TYPES) return `Invalid array: types may have at most ${MAX_TYPES} items`;
  const success = query.get('delivery_success');
  if (success !== null && success !== 'true' && success !== 'false') return 'Invalid boolean: delivery_success';
  return {
    gte: exact ?? gte,
    gt,
    lte: exact ?? lte,
    lt,
    types: query.has('type') ? [query.get('type')!] : types,
    ...(success !== null ? { deliverySuccess: success === 'true' } : {}),
  };
}

/** Whether an event's type is the one asked for, or matches it where it has `*` (a wildcard). */
function typeMatches(asked: string, type: string): boolean {
  if (!asked.includes('*')) return asked === type;
  const parts = asked.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`).test(type);
}
