import { AdapterKind, ProviderRuntimeConfig } from '../../../lib/contract';
import { ConfigurationError } from '../runtime/errors';
import { ProviderAdapter } from './adapter';
import { answerline } from './answerline';
import { echonova } from './echonova';
import { github } from './github';
import { hmac } from './hmac';
import { meta } from './meta';
import { ProviderModule } from './provider-module';
import { standardWebhooks } from './standard-webhooks';
import { stripe } from './stripe';

/** Every kind of provider the runtime serves: adding one is its folder and a line here. */
const REGISTRY: Readonly<Record<string, ProviderModule>> = {
  [AdapterKind.ANSWERLINE]: answerline,
  [AdapterKind.ECHONOVA]: echonova,
  [AdapterKind.STANDARD_WEBHOOKS]: standardWebhooks,
  [AdapterKind.STRIPE]: stripe,
  [AdapterKind.GITHUB]: github,
  [AdapterKind.HMAC]: hmac,
  [AdapterKind.META]: meta,
};

/** The module of a configured provider's adapter kind. */
export function providerModule(config: Pick<ProviderRuntimeConfig, 'name' | 'adapter'>): ProviderModule {
  const module = REGISTRY[config.adapter];
  if (!module) throw new ConfigurationError(`provider ${config.name}: unknown adapter "${config.adapter}"`);
  return module;
}

/** One adapter per configured provider, by provider name. */
export function adaptersFor(providers: readonly ProviderRuntimeConfig[]): Map<string, ProviderAdapter> {
  return new Map(providers.map((config) => [config.name, providerModule(config).adapter(config)]));
}
