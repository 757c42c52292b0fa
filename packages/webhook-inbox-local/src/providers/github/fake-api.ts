/**
 * A FAKE of GitHub's webhooks as its documentation describes them, for the tests and the local
 * twin: a hook that makes ONE attempt per event (GitHub never retries a failed delivery on its
 * own), signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, and the REST API
 * that lists the hook's deliveries and redelivers one:
 *
 * - `GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries` (and `/orgs/{org}/hooks/{hook_id}/…`,
 *   and `/app/hook/…` as the hook of a GitHub App, read with the App's JWT, not a token):
 *   the attempts, newest first, `per_page` (default 30, at most 100), the next page's `cursor` in
 *   the `link` header (`rel="next"`);
 * - `GET …/deliveries/{delivery_id}`: one attempt with its `request` (`headers`, `payload` as a
 *   JSON object: the bytes are not served) and its `response`;
 * - `POST …/deliveries/{delivery_id}/attempts`: 202, then the same body is sent again, signed,
 *   under the same GUID, as a new attempt marked `redelivery`;
 * - every answer carries `x-ratelimit-limit`, `-remaining`, `-used`, `-reset`, `-resource`; with
 *   none left GitHub answers 403 (`remaining` 0), and a secondary limit 403 or 429 with
 *   `retry-after`; a bad token or JWT 401; a deleted hook 404; errors are `{"message", "documentation_url", "status"}`
 *   (a 5xx without `status`).
 *
 * Not GitHub: only what the reconciler relies on, written from the docs, never from the runtime.
 */
import { createHmac, createVerify, generateKeyPairSync, KeyObject, randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback, readBody } from '../../aws/loopback';

/** One attempt, as GitHub records it. */
export interface FakeGitHubDelivery {
  readonly id: number;
  readonly guid: string;
  readonly deliveredAt: string;
  readonly redelivery: boolean;
  readonly event: string;
  readonly action: string | null;
  /** The exact bytes sent (GitHub serves them only as a parsed `payload`). */
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  /** What the endpoint answered; 0 when the attempt got no answer. */
  statusCode: number;
  status: string;
}

/** A request the fake API answered. */
export interface FakeGitHubRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

export interface FakeGitHubOptions {
  /** The hook's secret (what the inbox's signing secret holds). */
  readonly secret: string;
  /** Where the hook posts; settable later (`hookUrl`). */
  readonly hookUrl?: string;
  /** `owner/repo` of the repository whose hook this is. @default 'octo-org/octo-repo' */
  readonly repository?: string;
  readonly hookId?: number;
  /** The primary rate limit an hour. @default 5000 */
  readonly rateLimit?: number;
  /** GitHub's clock: attempts are made at it, and only those made by it are listed. @default Date.now */
  readonly now?: () => number;
}

const DOCS = 'https://docs.github.com/rest/repos/webhooks';
const MAX_PER_PAGE = 100;
const DEFAULT_PER_PAGE = 30;
const APP_HOOK = '/app/hook/deliveries';

export class FakeGitHub {
  readonly token = `ghp_${randomUUID().replace(/-/g, '')}`;
  readonly deliveries: FakeGitHubDelivery[] = [];
  readonly requests: FakeGitHubRequest[] = [];
  readonly repository: string;
  readonly hookId: number;
  hookUrl?: string;
  /** The hook's secret, what the inbox's signing secret holds (settable once the inbox made one). */
  secret: string;
  /** Whether the hook still exists: a deleted one answers 404. */
  hookExists = true;
  private remaining: number;
  private readonly limit: number;
  private readonly injected: { status: number; retryAfterSeconds?: number; times: number }[] = [];
  private nextId = 1_000_000;
  private server?: Server;
  private base?: string;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly now: () => number;
  private app?: { readonly appId: string; readonly privateKey: string; readonly publicKey: KeyObject };

  constructor(options: FakeGitHubOptions) {
    this.repository = options.repository ?? 'octo-org/octo-repo';
    this.hookId = options.hookId ?? 12_345_678;
    this.hookUrl = options.hookUrl;
    this.secret = options.secret;
    this.now = options.now ?? Date.now;
    this.limit = options.rateLimit ?? 5000;
    this.remaining = this.limit;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.base = await listenOnLoopback(this.server);
    return this.base;
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    this.server?.closeAllConnections();
    await closeServer(this.server);
  }

  /** The API's base URL (what `polling.baseUrl` names). */
  get baseUrl(): string {
    if (!this.base) throw new Error('the fake GitHub is not started');
    return this.base;
  }

  /** The GitHub App whose own hook this also is (`/app/hook/deliveries`): its id and private key (PEM), made when first asked for. */
  get appCredentials(): { appId: string; privateKey: string } {
    if (!this.app) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      this.app = { appId: '424242', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), publicKey };
    }
    return { appId: this.app.appId, privateKey: this.app.privateKey };
  }

  /** Requests left this hour; 0 makes every request a 403 until `resetRateLimit`. */
  setRemaining(remaining: number): void {
    this.remaining = remaining;
  }

  /** The next `times` API requests are answered `status` (403 or 429: a secondary rate limit, with `retry-after`; 5xx). */
  inject(status: number, options: { times?: number; retryAfterSeconds?: number } = {}): void {
    this.injected.push({ status, times: options.times ?? 1, retryAfterSeconds: options.retryAfterSeconds });
  }

  /**
   * An event: one attempt to the hook's URL, signed. `serialize` writes the body (GitHub's own is
   * compact JSON; another serialization stands for bytes the payload cannot reproduce).
   */
  async emit(
    event: string,
    payload: Record<string, unknown>,
    serialize: (payload: unknown) => string = (value) => JSON.stringify(value),
  ): Promise<FakeGitHubDelivery> {
    return this.attempt(randomUUID(), event, Buffer.from(serialize(payload)), false);
  }

  /** The attempts of one GUID, oldest first. */
  attemptsOf(guid: string): FakeGitHubDelivery[] {
    return this.deliveries.filter((delivery) => delivery.guid === guid);
  }

  /** Waits for the redeliveries asked for so far. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async attempt(guid: string, event: string, body: Buffer, redelivery: boolean): Promise<FakeGitHubDelivery> {
    const headers: Record<string, string> = {
      Accept: '*/*',
      'content-type': 'application/json',
      'User-Agent': 'GitHub-Hookshot/fake',
      'X-GitHub-Delivery': guid,
      'X-GitHub-Event': event,
      'X-GitHub-Hook-ID': String(this.hookId),
      'X-GitHub-Hook-Installation-Target-ID': '1',
      'X-GitHub-Hook-Installation-Target-Type': 'repository',
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', this.secret).update(body).digest('hex')}`,
    };
    const payload = JSON.parse(body.toString('utf8')) as { action?: unknown };
    const delivery: FakeGitHubDelivery = {
      id: this.nextId++,
      guid,
      deliveredAt: new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      redelivery,
      event,
      action: typeof payload.action === 'string' ? payload.action : null,
      body,
      headers,
      statusCode: 0,
      status: 'failed to connect to host',
    };
    this.deliveries.push(delivery);
    if (!this.hookUrl) return delivery;
    try {
      const response = await fetch(this.hookUrl, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
      await response.arrayBuffer();
      delivery.statusCode = response.status;
      delivery.status = response.status >= 200 && response.status < 300 ? 'OK' : `Invalid HTTP Response: ${response.status}`;
    } catch {
      delivery.status = 'We couldn’t deliver this payload: timed out or refused';
    }
    return delivery;
  }

  private hookPaths(): string[] {
    const [owner] = this.repository.split('/');
    return [`/repos/${this.repository}/hooks/${this.hookId}/deliveries`, `/orgs/${owner}/hooks/${this.hookId}/deliveries`, APP_HOOK];
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const path = url.pathname;
    await readBody(req);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ method: req.method ?? '', path, status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...this.rateHeaders(), ...headers }).end(JSON.stringify(body));
    };
    // A server error (503's described shape has no `status`) carries only the message and the link to the docs.
    const error = (status: number, message: string, headers: Record<string, string> = {}) =>
      send(status, { message, documentation_url: DOCS, ...(status < 500 ? { status: String(status) } : {}) }, headers);

    // The App's own hook takes the App's JWT only; everything else a token.
    const appHook = path === APP_HOOK || path.startsWith(`${APP_HOOK}/`);
    const authorization = req.headers.authorization ?? '';
    if (appHook && !this.isAppJwt(authorization)) return error(401, 'A JSON web token could not be decoded');
    if (!appHook && authorization !== `Bearer ${this.token}` && authorization !== `token ${this.token}`) return error(401, 'Bad credentials');
    if (this.remaining <= 0) return error(403, 'API rate limit exceeded for user ID 1.');
    this.remaining -= 1;
    const injected = this.injected[0];
    if (injected) {
      if (--injected.times <= 0) this.injected.shift();
      const headers: Record<string, string> = injected.retryAfterSeconds !== undefined ? { 'retry-after': String(injected.retryAfterSeconds) } : {};
      return error(injected.status, injected.status === 403 || injected.status === 429 ? 'You have exceeded a secondary rate limit.' : 'Server Error', headers);
    }
    const base = this.hookPaths().find((candidate) => path === candidate || path.startsWith(`${candidate}/`));
    if (!base || !this.hookExists) return error(404, 'Not Found');
    const origin = `http://${req.headers.host ?? new URL(this.baseUrl).host}`;
    const rest = path.slice(base.length).split('/').filter(Boolean);
    if (rest.length === 0 && req.method === 'GET') return this.list(url, `${origin}${base}`, send);
    const delivery = this.deliveries.find((candidate) => String(candidate.id) === rest[0]);
    if (!delivery) return error(404, 'Not Found');
    if (rest.length === 1 && req.method === 'GET') return send(200, detail(delivery));
    if (rest.length === 2 && rest[1] === 'attempts' && req.method === 'POST') {
      const redelivered = this.attempt(delivery.guid, delivery.event, delivery.body, true);
      this.pending.add(redelivered);
      void redelivered.finally(() => this.pending.delete(redelivered));
      return send(202, {});
    }
    return error(404, 'Not Found');
  }

  /** One page of the list; the next page's link names `listUrl`, the URL the request was made to (its host as the client named it). */
  private list(url: URL, listUrl: string, send: (status: number, body: unknown, headers?: Record<string, string>) => void): void {
    const perPage = Math.min(MAX_PER_PAGE, Math.max(1, Number(url.searchParams.get('per_page') ?? DEFAULT_PER_PAGE) || DEFAULT_PER_PAGE));
    const now = this.now();
    const newestFirst = this.deliveries.filter((delivery) => Date.parse(delivery.deliveredAt) <= now).sort((a, b) => b.id - a.id);
    const cursor = url.searchParams.get('cursor');
    const start = cursor ? newestFirst.findIndex((delivery) => `v1_${delivery.id}` === cursor) : 0;
    const page = newestFirst.slice(Math.max(0, start), Math.max(0, start) + perPage);
    const following = newestFirst[Math.max(0, start) + perPage];
    const headers: Record<string, string> = following ? { link: `<${listUrl}?per_page=${perPage}&cursor=v1_${following.id}>; rel="next"` } : {};
    send(200, page.map(item), headers);
  }

  /**
   * Whether `authorization` is `Bearer <JWT>` signed RS256 by the App's key, issued by the App's id,
   * not issued in the future (60 s of drift allowed), not expired, and expiring at most 10 minutes
   * after it was issued, as GitHub requires.
   */
  private isAppJwt(authorization: string): boolean {
    const [header, claims, signature] = /^Bearer (\S+)$/.exec(authorization)?.[1].split('.') ?? [];
    if (!this.app || signature === undefined) return false;
    try {
      const alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown }).alg;
      const { iss, iat, exp } = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as { iss?: unknown; iat?: unknown; exp?: unknown };
      const now = Math.floor(this.now() / 1000);
      const signed = createVerify('RSA-SHA256').update(`${header}.${claims}`).verify(this.app.publicKey, Buffer.from(signature, 'base64url'));
      const timely = typeof iat === 'number' && typeof exp === 'number' && iat <= now + 60 && exp > now && exp - iat <= 600;
      return signed && alg === 'RS256' && String(iss) === this.app.appId && timely;
    } catch {
      return false;
    }
  }

  private rateHeaders(): Record<string, string> {
    return {
      'x-ratelimit-limit': String(this.limit),
      'x-ratelimit-remaining': String(Math.max(0, this.remaining)),
      'x-ratelimit-used': String(this.limit - Math.max(0, this.remaining)),
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      'x-ratelimit-resource': 'core',
    };
  }
}

/** A delivery as the list shows it: without its request and response. */
function item(delivery: FakeGitHubDelivery) {
  return {
    id: delivery.id,
    guid: delivery.guid,
    delivered_at: delivery.deliveredAt,
    redelivery: delivery.redelivery,
    duration: 0.03,
    status: delivery.status,
    status_code: delivery.statusCode,
    event: delivery.event,
    action: delivery.action,
    installation_id: null,
    repository_id: 1,
    throttled_at: null,
  };
}

/** One delivery with the request GitHub made: its headers, and its payload parsed (the bytes are not served). */
function detail(delivery: FakeGitHubDelivery) {
  return {
    ...item(delivery),
    url: '',
    request: { headers: delivery.headers, payload: JSON.parse(delivery.body.toString('utf8')) as unknown },
    response: { headers: {}, payload: null },
  };
}
