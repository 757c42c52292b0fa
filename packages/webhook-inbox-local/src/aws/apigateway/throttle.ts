/**
 * API Gateway's throttling, for the local twin: a token bucket per route (an HTTP API's route
 * settings, else its stage's default route settings; a REST API's method settings, the most
 * specific first) and one for the whole account in the region, which every route of every API
 * draws on. A request is admitted only when its route's bucket and the account's each hold a
 * token; otherwise it is answered 429 and takes none, so a flood on one route never spends
 * another route's tokens.
 */

/** A throttle as a stage names it: steady requests a second, and the bucket's size. */
export interface ThrottleLimit {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** API Gateway's default quota of an account in a region: 10,000 requests a second, bursts of 5,000. */
export const ACCOUNT_THROTTLE: ThrottleLimit = { rateLimit: 10_000, burstLimit: 5_000 };

/** A bucket of `burstLimit` tokens, refilled at `rateLimit` a second, full at the start. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly limit: ThrottleLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limit.burstLimit;
    this.at = now();
  }

  /** Whether a token is there now (refilled for the time since the last look). */
  public hasToken(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.limit.burstLimit, this.tokens + ((now - this.at) / 1000) * this.limit.rateLimit);
    this.at = now;
    return this.tokens >= 1;
  }

  /** Takes the token `hasToken` found. */
  public take(): void {
    this.tokens -= 1;
  }
}

/** The throttles of one API's routes, by route key (`POST /hooks/x`), drawing on the account's bucket. */
export class RouteThrottles {
  private readonly buckets = new Map<string, TokenBucket | undefined>();

  constructor(
    private readonly account: TokenBucket,
    private readonly limitOf: (routeKey: string) => ThrottleLimit | undefined,
    private readonly now?: () => number,
  ) {}

  /** Whether API Gateway lets a request of the route through; if so, it takes a token from the route's bucket and from the account's. */
  public admit(routeKey: string): boolean {
    if (!this.buckets.has(routeKey)) {
      const limit = this.limitOf(routeKey);
      this.buckets.set(routeKey, limit && new TokenBucket(limit, this.now));
    }
    const route = this.buckets.get(routeKey);
    if ((route && !route.hasToken()) || !this.account.hasToken()) return false;
    route?.take();
    this.account.take();
    return true;
  }
}

/** Settings as a template writes them (`ThrottlingRateLimit`, `ThrottlingBurstLimit`), when both are there. */
export function limitOfSettings(settings: unknown): ThrottleLimit | undefined {
  const { ThrottlingRateLimit: rate, ThrottlingBurstLimit: burst } = (settings ?? {}) as Record<string, unknown>;
  return rate === undefined || burst === undefined ? undefined : { rateLimit: Number(rate), burstLimit: Number(burst) };
}

/** An HTTP API stage's throttle of a route: its `RouteSettings` entry, else the stage's `DefaultRouteSettings`. */
export function httpStageLimits(stage: Record<string, unknown>): (routeKey: string) => ThrottleLimit | undefined {
  const routes = (stage.RouteSettings ?? {}) as Record<string, unknown>;
  const fallback = limitOfSettings(stage.DefaultRouteSettings);
  return (routeKey) => limitOfSettings(routes[routeKey]) ?? fallback;
}

/**
 * A REST API stage's throttle of a method (`POST /hooks/x`): the `MethodSettings` entry that names
 * it most exactly (its path `/~1hooks~1x` and method, over `/*` or `*`).
 */
export function restStageLimits(stage: Record<string, unknown>): (routeKey: string) => ThrottleLimit | undefined {
  const settings = (stage.MethodSettings ?? []) as Record<string, unknown>[];
  return (routeKey) => {
    const [method, path] = routeKey.split(' ');
    const escaped = `/${path.replace(/\//g, '~1')}`;
    const score = (setting: Record<string, unknown>) =>
      (setting.ResourcePath === escaped ? 2 : setting.ResourcePath === '/*' ? 0 : -10) +
      (setting.HttpMethod === method ? 1 : setting.HttpMethod === '*' ? 0 : -10);
    const best = settings
      .map((setting) => ({ setting, score: score(setting) }))
      .filter((candidate) => candidate.score >= 0 && limitOfSettings(candidate.setting))
      .sort((a, b) => b.score - a.score)[0];
    return best && limitOfSettings(best.setting);
  };
}
