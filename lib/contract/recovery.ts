/**
 * Recovery through a provider's own event log (GitHub's hook deliveries, Stripe's events): what
 * the construct tells the reconciler, the checks of it run at synth and at cold start, and the
 * documented facts each provider's recovery rests on (docs/providers/github.md#recovery,
 * docs/providers/stripe.md#recovery).
 */

/** The kinds of hook whose deliveries GitHub lists: a repository's, an organization's, or a GitHub App's own. */
export type GitHubHookKindName = 'repository' | 'organization' | 'app';

/** Which GitHub hook a recovery reads: `owner` is `owner/repo` for a repository hook, the organization's login for one of its hooks, absent for an App's. */
export interface GitHubHookTarget {
  readonly kind: GitHubHookKindName;
  readonly owner?: string;
  readonly hookId?: number;
}

/** How the reconciler recovers one provider from its event log (JSON array in `Env.RECOVERY`). */
export interface RecoveryRuntimeConfig {
  /** The provider's name, as in `ProviderRuntimeConfig.name`. */
  readonly provider: string;
  /** Its adapter kind: `github` or `stripe`. */
  readonly kind: string;
  /** The API's origin (and base path for GitHub Enterprise Server), https, or http on loopback. */
  readonly baseUrl: string;
  /** ARN (or name) of the secret holding the API credentials: a token (text or `{"apiKey": "…"}`), or for GitHub `{"appId", "privateKey"}`. */
  readonly credentialsSecretId: string;
  /** GitHub: ARN (or name) of the signing secret, to check the signature GitHub recorded over the payload it serves. */
  readonly signingSecretId?: string;
  /** GitHub: the hook whose deliveries are listed. */
  readonly hook?: GitHubHookTarget;
  /** Stripe: the event types the endpoint receives (the events list's `types[]`); empty or absent: every type. */
  readonly eventTypes?: readonly string[];
  /** How far back each run lists again before its cursor, for the provider's clock and its listing's lag, seconds. */
  readonly overlapSeconds: number;
  /** How long after it was made an event is first taken (the provider's own attempt goes first), seconds. */
  readonly settleSeconds: number;
  /** How far back the first run looks, seconds. */
  readonly initialLookbackSeconds: number;
  /** Timeout of one request, milliseconds. */
  readonly timeoutMs: number;
}

/** What each provider's recovery defaults to, from its documentation. */
export const RecoveryFacts = {
  github: {
    baseUrl: 'https://api.github.com',
    /** GitHub lists a hook's deliveries of the past 3 days; redelivery is refused for older ones. */
    retentionSeconds: 3 * 86_400,
    /** GitHub makes one attempt: a failed delivery is final when it is listed. */
    settleSeconds: 0,
    /** Deliveries listed per request, GitHub's maximum. */
    pageSize: 100,
  },
  stripe: {
    baseUrl: 'https://api.stripe.com',
    /** Stripe lists events of the past 30 days. */
    retentionSeconds: 30 * 86_400,
    /** Stripe's first attempt follows the event within seconds; its retries run for 3 days. Let its first attempt and one retry go first. */
    settleSeconds: 15 * 60,
    /** Events listed per request, Stripe's maximum. */
    pageSize: 100,
    /** The most `types[]` a list request takes. */
    maxEventTypes: 20,
  },
} as const;

/** Defaults every recovery shares. */
export const RecoveryDefaults = {
  OVERLAP_SECONDS: 5 * 60,
  INITIAL_LOOKBACK_SECONDS: 3600,
  TIMEOUT_MS: 10_000,
  /** A recovery that has not completed a run for this long pages (the RecoveryStalled alarm). */
  STALLED_AFTER_SECONDS: 3600,
} as const;

/** The adapter kinds that can be recovered from their own event log. */
export const RECOVERED_KINDS: readonly string[] = Object.keys(RecoveryFacts);

/** A recovery's cursor item: `pk` `recovery:<provider>`, `sk` `cursor` (no delivery row's partition holds `:`). */
export const RecoveryCursorKey = {
  PARTITION_PREFIX: 'recovery:',
  SORT: 'cursor',
} as const;

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

/** What is wrong with an API base URL the credentials are sent to: https, or plain http only on a loopback address (a local fake). */
export function recoveryBaseUrlProblems(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return ['baseUrl is not a URL'];
  }
  if (parsed.search !== '' || parsed.hash !== '') return ['baseUrl must have no query and no fragment'];
  const loopback = parsed.protocol === 'http:' && LOOPBACK_HOSTS.includes(parsed.hostname);
  return parsed.protocol === 'https:' || loopback ? [] : ['baseUrl must be an https:// URL (plain http only on a loopback address)'];
}

const REPOSITORY = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/;
const LOGIN = /^[A-Za-z0-9-]+$/;

/** What is wrong with a recovery's configuration, each problem naming its field; empty when usable. Checked at synth and at cold start. */
export function recoveryProblems(config: RecoveryRuntimeConfig): string[] {
  const problems: string[] = [];
  if (!RECOVERED_KINDS.includes(config.kind)) problems.push(`kind ${String(config.kind)} cannot be recovered from an event log`);
  problems.push(...recoveryBaseUrlProblems(String(config.baseUrl)));
  if (typeof config.credentialsSecretId !== 'string' || config.credentialsSecretId === '') problems.push('credentialsSecretId is missing');
  for (const field of ['overlapSeconds', 'settleSeconds', 'initialLookbackSeconds', 'timeoutMs'] as const) {
    const value = config[field];
    if (!Number.isSafeInteger(value) || value < 0) problems.push(`${field} must be a whole number, 0 or more`);
  }
  if (config.kind === 'github') problems.push(...hookProblems(config.hook));
  if (config.kind !== 'github' && config.hook !== undefined) problems.push('hook: only GitHub has hooks to read');
  if (config.eventTypes !== undefined) {
    if (config.kind !== 'stripe') problems.push('eventTypes: only Stripe lists events by type');
    else if (config.eventTypes.length > RecoveryFacts.stripe.maxEventTypes)
      problems.push(`eventTypes: Stripe takes at most ${RecoveryFacts.stripe.maxEventTypes}`);
  }
  return problems;
}

function hookProblems(hook: GitHubHookTarget | undefined): string[] {
  if (!hook) return ['hook is required: the repository, organization or App hook whose deliveries are read'];
  if (hook.kind === 'app') return hook.owner === undefined && hook.hookId === undefined ? [] : ['hook: an App hook has no owner and no hook id'];
  const problems: string[] = [];
  if (hook.kind === 'repository' && !REPOSITORY.test(hook.owner ?? '')) problems.push('hook: a repository is written owner/name');
  else if (hook.kind === 'organization' && !LOGIN.test(hook.owner ?? '')) problems.push('hook: an organization is its login');
  else if (hook.kind !== 'repository' && hook.kind !== 'organization') problems.push(`hook: kind ${String(hook.kind)} is not a GitHub hook`);
  if (!Number.isSafeInteger(hook.hookId) || (hook.hookId ?? 0) <= 0) problems.push("hook: hookId must be a positive whole number (the hook's id in GitHub)");
  return problems;
}

/** The path of a hook's deliveries below the API's base URL. */
export function hookDeliveriesPath(hook: GitHubHookTarget): string {
  switch (hook.kind) {
    case 'app':
      return '/app/hook/deliveries';
    case 'organization':
      return `/orgs/${encodeURIComponent(hook.owner!)}/hooks/${hook.hookId}/deliveries`;
    case 'repository': {
      const [owner, repo] = hook.owner!.split('/');
      return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/hooks/${hook.hookId}/deliveries`;
    }
  }
}
