import { AdapterKind, ProviderRuntimeConfig } from '../../../lib/contract';
import { ConfigurationError } from '../errors';
import { ProviderAdapter } from './adapter';
import { answerlineAdapter } from './answerline';
import { echonovaAdapter } from './echonova';
import { githubAdapter } from './github';
import { hmacAdapter } from './hmac';
import { standardWebhooksAdapter } from './standard-webhooks';
import { stripeAdapter } from './stripe';

export * from './adapter';

const FACTORIES: Record<string, (config: ProviderRuntimeConfig) => ProviderAdapter> = {
  [AdapterKind.ANSWERLINE]: answerlineAdapter,
  [AdapterKind.ECHONOVA]: echonovaAdapter,
  [AdapterKind.STANDARD_WEBHOOKS]: standardWebhooksAdapter,
  [AdapterKind.STRIPE]: stripeAdapter,
  [AdapterKind.GITHUB]: githubAdapter,
  [AdapterKind.HMAC]: hmacAdapter,
};

/** One adapter per configured provider, by provider name. */
export function adaptersFor(providers: readonly ProviderRuntimeConfig[]): Map<string, ProviderAdapter> {
  return new Map(
    providers.map((config) => {
      const factory = FACTORIES[config.adapter];
      if (!factory) throw new ConfigurationError(`provider ${config.name}: unknown adapter "${config.adapter}"`);
      return [config.name, factory(config)];
    }),
  );
}
