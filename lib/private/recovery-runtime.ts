import { Duration, Token } from 'aws-cdk-lib';
import { RECOVERED_KINDS, RecoveryDefaults, RecoveryFacts, RecoveryRuntimeConfig, recoveryProblems } from '../contract';
import type { WebhookProviderConfig } from '../provider';

/** Whether the provider is recovered from its own event log (GitHub, Stripe) rather than polled for recorded submissions. */
export function isRecoveredFromLog(provider: WebhookProviderConfig): boolean {
  return provider.polling !== undefined && RECOVERED_KINDS.includes(provider.adapter);
}

/** The providers the reconciler recovers from their own event logs. */
export function recoveredProviders(providers: readonly WebhookProviderConfig[]): WebhookProviderConfig[] {
  return providers.filter(isRecoveredFromLog);
}

/** How the reconciler recovers a provider from its log, the provider's defaults filled in. */
export function recoveryRuntimeConfig(provider: WebhookProviderConfig, credentialsSecretId: string, signingSecretId?: string): RecoveryRuntimeConfig {
  const polling = provider.polling!;
  const kind = provider.adapter as keyof typeof RecoveryFacts;
  const facts = RecoveryFacts[kind];
  const hook = polling.githubHook;
  return {
    provider: provider.name,
    kind,
    baseUrl: polling.baseUrl ?? facts.baseUrl,
    credentialsSecretId,
    ...(signingSecretId !== undefined && kind === 'github' ? { signingSecretId } : {}),
    ...(hook
      ? { hook: { kind: hook.kind, ...(hook.owner !== undefined ? { owner: hook.owner } : {}), ...(hook.hookId !== undefined ? { hookId: hook.hookId } : {}) } }
      : {}),
    ...(polling.eventTypes !== undefined ? { eventTypes: polling.eventTypes } : {}),
    overlapSeconds: RecoveryDefaults.OVERLAP_SECONDS,
    settleSeconds: facts.settleSeconds,
    initialLookbackSeconds: RecoveryDefaults.INITIAL_LOOKBACK_SECONDS,
    timeoutMs: RecoveryDefaults.TIMEOUT_MS,
  };
}

/** What is wrong with a recovered provider's `polling`, each problem naming the option. */
export function recoveryOptionProblems(provider: WebhookProviderConfig): string[] {
  const polling = provider.polling!;
  const problems: string[] = [];
  const ledgerOnly = (['taskUrlTemplate', 'horizon', 'recheckInterval'] as const).filter((name) => polling[name] !== undefined);
  problems.push(
    ...ledgerOnly.map((name) => `polling.${name}: ${provider.name} is recovered from its own event log, which has no task URL, horizon or recheck`),
  );
  if (polling.baseUrl !== undefined && Token.isUnresolved(polling.baseUrl)) return problems;
  if (polling.githubHook && (Token.isUnresolved(polling.githubHook.owner) || Token.isUnresolved(polling.githubHook.hookId))) return problems;
  const config = recoveryRuntimeConfig(provider, 'secret');
  // The runtime's field names, as the option names them.
  problems.push(...recoveryProblems(config).map((problem) => `polling.${problem.replace(/^hook/, 'githubHook')}`));
  const stalledAfter = polling.stalledAfter;
  if (stalledAfter && !Token.isUnresolved(stalledAfter.toSeconds()) && stalledAfter.toSeconds() < 60) {
    problems.push(`polling.stalledAfter: must be at least 1 minute, got ${stalledAfter.toHumanString()}`);
  }
  return problems;
}

/** The longest a recovery may go without a complete run before the alarm, over all recovered providers. */
export function recoveryStallThreshold(providers: readonly WebhookProviderConfig[]): Duration {
  const seconds = recoveredProviders(providers).map((provider) => provider.polling!.stalledAfter?.toSeconds() ?? RecoveryDefaults.STALLED_AFTER_SECONDS);
  return Duration.seconds(Math.min(...seconds));
}
