import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Env, RecoveryRuntimeConfig, recoveryProblems } from '../../lib/contract';
import { AdmissionStores } from '../shared/admission';
import { GitHubDeliveriesFeed } from '../shared/providers/github/deliveries';
import { ProviderAdapter } from '../shared/providers/adapter';
import { adaptersFor } from '../shared/providers/registry';
import { RecoveryFeed } from '../shared/providers/recovery/feed';
import { StripeEventsFeed } from '../shared/providers/stripe/events';
import { ConfigurationError } from '../shared/runtime/errors';
import { providerConfigsFromEnv, providersFromEnv } from '../shared/runtime/config';
import { SecretCache } from '../shared/signatures/secrets';
import { DynamoDbRecoveryCursorStore } from '../shared/stores/recovery-cursor';
import { RecoveryDependencies } from './recovery';

/** Parses and checks the recoveries the construct serialized; empty when unset. */
export function recoveryConfigFromEnv(env: Record<string, string | undefined>): RecoveryRuntimeConfig[] {
  return providerConfigsFromEnv<RecoveryRuntimeConfig>(env, Env.RECOVERY, recoveryProblems);
}

/** The recovery step's dependencies from the environment; undefined when no provider is recovered from its log. */
export function recoveryFromEnv(
  env: Record<string, string | undefined>,
  dynamodb: DynamoDBClient,
  inboxTable: string,
  secrets: SecretCache,
  storage: Omit<AdmissionStores, 'inbox' | 'queue'>,
): RecoveryDependencies | undefined {
  const configs = recoveryConfigFromEnv(env);
  if (configs.length === 0) return undefined;
  const served = providersFromEnv(env, { signingSecrets: false });
  const adapters = adaptersFor(served);
  const providers = configs.map((config) => {
    const provider = served.find((candidate) => candidate.name === config.provider);
    const adapter = adapters.get(config.provider);
    if (!provider || !adapter) throw new ConfigurationError(`${Env.RECOVERY}: provider ${config.provider} is not served by this inbox`);
    if (provider.adapter !== config.kind)
      throw new ConfigurationError(`${Env.RECOVERY}: provider ${config.provider} uses the ${provider.adapter} adapter, not ${config.kind}`);
    return { provider: config.provider, adapter, feed: feedOf(config, adapter, secrets) };
  });
  return {
    providers,
    cursors: new DynamoDbRecoveryCursorStore(dynamodb, inboxTable),
    requestTimeoutMs: Math.max(...configs.map((config) => config.timeoutMs)),
    storage,
  };
}

function feedOf(config: RecoveryRuntimeConfig, adapter: ProviderAdapter, secrets: SecretCache): RecoveryFeed {
  if (config.kind === 'github') {
    if (config.signingSecretId === undefined) {
      throw new ConfigurationError(`${Env.RECOVERY}: provider ${config.provider} names no signing secret to check recorded deliveries with`);
    }
    return new GitHubDeliveriesFeed({ ...config, hook: config.hook!, signingSecretId: config.signingSecretId }, adapter, secrets);
  }
  return new StripeEventsFeed(config, secrets);
}
