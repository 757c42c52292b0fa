import { Defaults, Env, PollingRuntimeConfig, pollingProblems, ProviderRuntimeConfig } from '../../../lib/contract';
import { providerConfigsFromEnv } from '../runtime/config';
import { ConfigurationError } from '../runtime/errors';
import { SecretCache } from '../signatures/secrets';
import { ProviderAdapter } from './adapter';
import { ApiKeySource } from './api-key';
import { BatchApi } from './message-batches/batch-api';
import { ProviderApi } from './provider-api';
import { LedgerProfile, SAME_ID_PROFILE } from './provider-module';
import { adaptersFor, providerModule } from './registry';

/** How one provider is polled. */
export interface ProviderPoller {
  /** The task API: absent for a batch API. */
  readonly api?: ProviderApi;
  /** The batch API: present for a provider whose submissions are batches. */
  readonly batches?: BatchApi;
  /** After submission, when a submission without a delivery is first polled. */
  readonly horizonMs: number;
  /** Between two checks of a task that is not final yet. */
  readonly recheckMs: number;
  /** One poll request's timeout, to keep a run inside its Lambda timeout. */
  readonly timeoutMs: number;
}

/** What the reconciler knows about one provider of the ledger. */
export interface LedgerProvider {
  readonly profile: LedgerProfile;
  /** Absent for a submission whose provider this inbox does not serve. */
  readonly adapter?: ProviderAdapter;
  /** Absent when the provider is not polled: its submissions are only checked for a delivery. */
  readonly poller?: ProviderPoller;
}

/** The default for providers the inbox serves but does not poll. */
export const LEDGER_ONLY_PROVIDER: LedgerProvider = { profile: SAME_ID_PROFILE };

/** Parses and validates the polling configuration the construct serialized; empty when unset. */
export function pollingFromEnv(env: Record<string, string | undefined>): PollingRuntimeConfig[] {
  return providerConfigsFromEnv<PollingRuntimeConfig>(env, Env.POLLING, pollingProblems);
}

/**
 * The ledger's view of every provider: how its rows are keyed, its adapter (to admit a polled
 * body exactly as a delivery), and its poller when it is polled. `apis` replaces the HTTP
 * client of a provider (tests).
 */
export function ledgerProvidersFor(
  providers: readonly ProviderRuntimeConfig[],
  polling: readonly PollingRuntimeConfig[],
  secrets: SecretCache,
  apis: ReadonlyMap<string, ProviderApi> = new Map(),
): Map<string, LedgerProvider> {
  const adapters = adaptersFor(providers);
  const served = new Map(providers.map((provider) => [provider.name, provider]));
  const ledger = new Map<string, LedgerProvider>(
    providers.map((provider) => [provider.name, { profile: providerModule(provider).ledgerProfile, adapter: adapters.get(provider.name) }]),
  );
  for (const config of polling) {
    const provider = served.get(config.provider);
    if (provider === undefined) throw new ConfigurationError(`${Env.POLLING}: provider ${config.provider} is not served by this inbox`);
    const timeoutMs = config.timeoutMs ?? Defaults.POLL_TIMEOUT_MS;
    const module = providerModule(provider);
    const options = { urlTemplate: config.taskUrlTemplate, apiKeys: new ApiKeySource(secrets, config.apiKeySecretId), timeoutMs };
    const api = apis.get(config.provider) ?? module.taskApi?.(options);
    const batches = module.batchApi?.(options);
    if (!api && !batches)
      throw new ConfigurationError(`${Env.POLLING}: provider ${config.provider} uses the ${provider.adapter} adapter, which cannot be polled`);
    ledger.set(config.provider, {
      ...ledger.get(config.provider)!,
      poller: {
        ...(api ? { api } : {}),
        ...(batches ? { batches } : {}),
        horizonMs: config.horizonSeconds * 1000,
        recheckMs: config.recheckSeconds * 1000,
        timeoutMs,
      },
    });
  }
  return ledger;
}
