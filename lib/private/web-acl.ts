import { Duration, Token } from 'aws-cdk-lib';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { HOOKS_PATH } from '../contract';
import type { WebAclRateLimit } from '../ingress';
import { hookPath } from './route-throttle';

/** What AWS WAF takes of a rate-based rule (docs/CAPACITY.md#quotas). */
export const WAF_RATE_LIMIT = {
  /** The lowest request limit of a rate-based rule. */
  MIN_LIMIT: 10,
  /** The largest request limit of a rate-based rule. */
  MAX_LIMIT: 2_000_000_000,
  /** The evaluation windows a rate-based rule may look back over, in seconds. */
  WINDOWS_SECONDS: [60, 120, 300, 600],
  /** Rate-based rules one web ACL may hold. */
  RULES_PER_WEB_ACL: 10,
} as const;

const NO_TRANSFORMATION = [{ priority: 0, type: 'NONE' }];

/** Requests whose path ends with `/hooks/<name>`: the route, through the `execute-api` host (after the stage) or a custom domain. */
function routeOf(providerName: string): wafv2.CfnWebACL.StatementProperty {
  return {
    byteMatchStatement: {
      fieldToMatch: { uriPath: {} },
      positionalConstraint: 'ENDS_WITH',
      searchString: hookPath(providerName),
      textTransformations: NO_TRANSFORMATION,
    },
  };
}

/**
 * The inbox's web ACL of a REST API ingress: allows by default, and blocks (403) a source address
 * that sends one route more than its limit within the evaluation window. One rule counts every
 * route by source address and path together; each provider given a limit of its own has its own
 * rule, and the shared rule leaves its route alone.
 */
export function createRateLimitWebAcl(scope: Construct, rateLimit: WebAclRateLimit, providerNames: readonly string[]): wafv2.CfnWebACL {
  const window = (rateLimit.evaluationWindow ?? Duration.minutes(5)).toSeconds();
  const own = Object.entries(rateLimit.providerLimits ?? {}).filter(([name]) => providerNames.includes(name));
  const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
  const allRoutes: wafv2.CfnWebACL.StatementProperty = {
    byteMatchStatement: {
      fieldToMatch: { uriPath: {} },
      positionalConstraint: 'CONTAINS',
      searchString: `${HOOKS_PATH}/`,
      textTransformations: NO_TRANSFORMATION,
    },
  };
  const others = own.map(([name]) => routeOf(name));
  const sharedScope: wafv2.CfnWebACL.StatementProperty =
    others.length === 0
      ? allRoutes
      : {
          andStatement: { statements: [allRoutes, { notStatement: { statement: others.length === 1 ? others[0] : { orStatement: { statements: others } } } }] },
        };
  const rules: wafv2.CfnWebACL.RuleProperty[] = [
    ...own.map(([name, limit], index) => ({
      name: `rate-${name}`,
      priority: index,
      action: { block: {} },
      statement: { rateBasedStatement: { limit, evaluationWindowSec: window, aggregateKeyType: 'IP', scopeDownStatement: routeOf(name) } },
      visibilityConfig: visibility(`rate-${name}`),
    })),
    {
      name: 'rate-per-route',
      priority: own.length,
      action: { block: {} },
      statement: {
        rateBasedStatement: {
          limit: rateLimit.limit,
          evaluationWindowSec: window,
          // Counted per source address and path: one route's flood never counts against another route.
          aggregateKeyType: 'CUSTOM_KEYS',
          customKeys: [{ ip: {} }, { uriPath: { textTransformations: NO_TRANSFORMATION } }],
          scopeDownStatement: sharedScope,
        },
      },
      visibilityConfig: visibility('rate-per-route'),
    },
  ];
  return new wafv2.CfnWebACL(scope, 'WebAcl', {
    scope: 'REGIONAL',
    defaultAction: { allow: {} },
    rules,
    visibilityConfig: visibility('webhook-inbox'),
  });
}

/** What AWS WAF would refuse of the rate limits, naming the prop. */
export function webAclRateLimitProblems(rateLimit: WebAclRateLimit, webAclArn: string | undefined, providerNames: readonly string[]): string[] {
  const problems: string[] = [];
  if (webAclArn !== undefined) {
    problems.push('ingress.rateLimit: not allowed with ingress.webAclArn (a stage takes one web ACL): add rate-based rules to your web ACL instead');
  }
  const limits: [string, number][] = [
    ['ingress.rateLimit.limit', rateLimit.limit],
    ...Object.entries(rateLimit.providerLimits ?? {}).map(([name, limit]): [string, number] => [`ingress.rateLimit.providerLimits["${name}"]`, limit]),
  ];
  for (const [name, limit] of limits) {
    if (Token.isUnresolved(limit)) continue;
    if (!Number.isInteger(limit) || limit < WAF_RATE_LIMIT.MIN_LIMIT || limit > WAF_RATE_LIMIT.MAX_LIMIT) {
      problems.push(
        `${name}: must be a whole number from ${WAF_RATE_LIMIT.MIN_LIMIT} to ${WAF_RATE_LIMIT.MAX_LIMIT.toLocaleString('en-US')} requests a window, got ${limit}`,
      );
    }
  }
  for (const name of Object.keys(rateLimit.providerLimits ?? {})) {
    if (!providerNames.includes(name)) problems.push(`ingress.rateLimit.providerLimits: "${name}" is no provider with a route here`);
  }
  const window = rateLimit.evaluationWindow?.toSeconds();
  if (window !== undefined && !Token.isUnresolved(window) && !(WAF_RATE_LIMIT.WINDOWS_SECONDS as readonly number[]).includes(window)) {
    problems.push(`ingress.rateLimit.evaluationWindow: must be 1, 2, 5 or 10 minutes, got ${rateLimit.evaluationWindow!.toHumanString()}`);
  }
  const rules = Object.keys(rateLimit.providerLimits ?? {}).length + 1;
  if (rules > WAF_RATE_LIMIT.RULES_PER_WEB_ACL) {
    problems.push(
      `ingress.rateLimit.providerLimits: ${rules - 1} providers with limits of their own make ${rules} rate-based rules, more than the ${WAF_RATE_LIMIT.RULES_PER_WEB_ACL} a web ACL holds; give at most ${WAF_RATE_LIMIT.RULES_PER_WEB_ACL - 1}`,
    );
  }
  return problems;
}
