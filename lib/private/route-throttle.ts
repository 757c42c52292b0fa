import { Token } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { Defaults, GET_CHECKED_ADAPTERS, HOOKS_PATH, POLLED_ONLY_ADAPTERS } from '../contract';
import type { WebhookProviderConfig } from '../provider';
import type { WebhookInboxProps } from '../webhook-inbox-props';

/** One route of the endpoint: a provider's path and one method it posts (or checks the endpoint) with. */
export interface ProviderRoute {
  readonly providerName: string;
  readonly method: string;
  /** `/hooks/<name>`. */
  readonly path: string;
  /** The HTTP API route key, `<method> <path>`; also how a REST API method is named in reports. */
  readonly routeKey: string;
}

/** A route with the throttle API Gateway applies to it alone: its own token bucket. */
export interface ThrottledRoute extends ProviderRoute {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** The path a provider posts to: `/hooks/<name>`. */
export function hookPath(providerName: string): string {
  return `${HOOKS_PATH}/${providerName}`;
}

/** What each provider posts with: POST, and GET for a provider that checks the endpoint with one; a polled-only provider sends nothing. */
export function providerRoutes(providers: readonly WebhookProviderConfig[]): ProviderRoute[] {
  return providers
    .filter((provider) => !POLLED_ONLY_ADAPTERS.includes(provider.adapter))
    .flatMap((provider) =>
      (GET_CHECKED_ADAPTERS.includes(provider.adapter) ? ['POST', 'GET'] : ['POST']).map((method) => ({
        providerName: provider.name,
        method,
        path: hookPath(provider.name),
        routeKey: `${method} ${hookPath(provider.name)}`,
      })),
    );
}

/** The account's API Gateway quota in the region, as the app declares it (`accountThrottle`), or AWS's default. */
export function accountThrottleOf(props: WebhookInboxProps): Required<apigwv2.ThrottleSettings> {
  return {
    rateLimit: props.accountThrottle?.rateLimit ?? Defaults.ACCOUNT_THROTTLE_RATE_LIMIT,
    burstLimit: props.accountThrottle?.burstLimit ?? Defaults.ACCOUNT_THROTTLE_BURST_LIMIT,
  };
}

/**
 * Each route's throttle: its provider's `throttle`, else the inbox's `throttle`, else an even
 * share of what the account's quota leaves after the routes given one, at most
 * `Defaults.ROUTE_THROTTLE_*`. API Gateway gives every route (REST: every method) its own token
 * bucket, and all of them draw on the account's: only while the routes' allowances add up to no
 * more than the account's quota does a flood on one route leave every other route its own.
 */
export function routeThrottles(props: WebhookInboxProps, providers: readonly WebhookProviderConfig[]): ThrottledRoute[] {
  const fallback = defaultRouteThrottle(props, providers);
  return providerRoutes(providers).map((route) => {
    const throttle = ownThrottle(props, providers, route);
    return { ...route, rateLimit: throttle?.rateLimit ?? fallback.rateLimit, burstLimit: throttle?.burstLimit ?? fallback.burstLimit };
  });
}

/** The throttle of a route without one of its own: the inbox's `throttle`, else the even share of what the others leave of the account's quota. */
export function defaultRouteThrottle(props: WebhookInboxProps, providers: readonly WebhookProviderConfig[]): Required<apigwv2.ThrottleSettings> {
  const routes = providerRoutes(providers);
  const sized = routes.map((route) => ownThrottle(props, providers, route)).filter((throttle) => throttle !== undefined);
  const account = accountThrottleOf(props);
  const share = (limit: 'rateLimit' | 'burstLimit', most: number) => {
    const taken = sized.reduce((sum, throttle) => sum + (Token.isUnresolved(throttle[limit]) ? 0 : (throttle[limit] ?? 0)), 0);
    return Math.max(0, Math.min(most, Math.floor((account[limit] - taken) / Math.max(1, routes.length - sized.length))));
  };
  return {
    rateLimit: props.throttle?.rateLimit ?? share('rateLimit', Defaults.ROUTE_THROTTLE_RATE_LIMIT),
    burstLimit: props.throttle?.burstLimit ?? share('burstLimit', Defaults.ROUTE_THROTTLE_BURST_LIMIT),
  };
}

/** The throttle given for the route: its provider's, else the inbox's; undefined when neither is set. */
function ownThrottle(props: WebhookInboxProps, providers: readonly WebhookProviderConfig[], route: ProviderRoute): apigwv2.ThrottleSettings | undefined {
  return providers.find((provider) => provider.name === route.providerName)?.throttle ?? props.throttle;
}

/**
 * What API Gateway would make of the routes' throttles: a rate or burst above the account's quota
 * is never reached (the account's bucket empties first), and allowances that add up to more than
 * the quota let one route's flood, within its own allowance, empty the bucket every route shares.
 */
export function routeThrottleProblems(props: WebhookInboxProps, providers: readonly WebhookProviderConfig[]): string[] {
  const problems: string[] = [];
  const account = accountThrottleOf(props);
  for (const [name, value] of [
    ['accountThrottle.rateLimit', account.rateLimit],
    ['accountThrottle.burstLimit', account.burstLimit],
  ] as const) {
    if (!Token.isUnresolved(value) && !(value > 0)) problems.push(`${name}: must be above 0, got ${value}`);
  }
  if (problems.length > 0) return problems;
  const routes = routeThrottles(props, providers);
  const propOf = (route: ThrottledRoute) =>
    providers.find((provider) => provider.name === route.providerName)?.throttle ? `providers["${route.providerName}"].throttle` : 'throttle';
  let unresolved = false;
  // A route without a throttle given gets a share, which the sum below judges.
  for (const route of routes.filter((candidate) => ownThrottle(props, providers, candidate) !== undefined)) {
    for (const [limit, unit, most] of [
      ['rateLimit', 'requests a second', account.rateLimit],
      ['burstLimit', 'requests of burst', account.burstLimit],
    ] as const) {
      const value = route[limit];
      if (Token.isUnresolved(value) || Token.isUnresolved(most)) {
        unresolved = true;
        continue;
      }
      const whole = limit === 'burstLimit' ? Number.isInteger(value) : true;
      if (!whole || value <= 0)
        problems.push(`${propOf(route)}.${limit} (${route.routeKey}): must be ${whole ? 'above 0' : 'a whole number above 0'}, got ${value}`);
      else if (value > most)
        problems.push(
          `${propOf(route)}.${limit} (${route.routeKey}): must be at most the account's ${most.toLocaleString('en-US')} ${unit} (accountThrottle), got ${value}`,
        );
    }
  }
  if (unresolved || problems.length > 0) return problems;
  for (const [limit, unit] of [
    ['rateLimit', 'requests a second'],
    ['burstLimit', 'requests of burst'],
  ] as const) {
    const total = routes.reduce((sum, route) => sum + route[limit], 0);
    if (total > account[limit]) {
      problems.push(
        `throttle: the ${routes.length} routes' ${limit}s add up to ${total.toLocaleString('en-US')} ${unit}, more than the account's ` +
          `${account[limit].toLocaleString('en-US')} (accountThrottle), which every route draws on: a flood on one route within its own ` +
          "allowance could then get other routes 429s. Lower throttle or a provider's throttle, or raise the account's quota and set accountThrottle",
      );
    }
  }
  return problems;
}
