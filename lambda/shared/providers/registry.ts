import { AdapterKindName, ProviderRuntimeConfig } from '../../../lib/contract';
import { ConfigurationError } from '../runtime/errors';
import { ProviderAdapter } from './adapter';
import { answerline } from './answerline';
import { discord } from './discord';
import { echonova } from './echonova';
import { github } from './github';
import { hmac } from './hmac';
import { linear } from './linear';
import { messageBatches } from './message-batches';
import { meta } from './meta';
import { twilio } from './twilio';
import { paddle } from './paddle';
import { pagerduty } from './pagerduty';
import { AdapterContext, ProviderModule } from './provider-module';
import { shopify } from './shopify';
import { sns } from './sns';
import { square } from './square';
import { slack } from './slack';
import { standardWebhooks } from './standard-webhooks';
import { stripe } from './stripe';
import { zoom } from './zoom';

/** Every kind of provider the runtime serves: adding one is its folder and a line here (a kind without one fails to typecheck). */
const REGISTRY: { readonly [Kind in AdapterKindName]: ProviderModule } = {
  answerline,
  echonova,
  'standard-webhooks': standardWebhooks,
  stripe,
  github,
  hmac,
  discord,
  square,
  slack,
  zoom,
  meta,
  twilio,
  shopify,
  paddle,
  pagerduty,
  linear,
  sns,
  'message-batches': messageBatches,
};

/** The module of a configured provider's adapter kind. */
export function providerModule(config: Pick<ProviderRuntimeConfig, 'name' | 'adapter'>): ProviderModule {
  if (!isAdapterKind(config.adapter)) throw new ConfigurationError(`provider ${config.name}: unknown adapter "${config.adapter}"`);
  return REGISTRY[config.adapter];
}

function isAdapterKind(kind: string): kind is AdapterKindName {
  return Object.hasOwn(REGISTRY, kind);
}

/** One adapter per configured provider, by provider name. */
export function adaptersFor(providers: readonly ProviderRuntimeConfig[], context: AdapterContext = {}): Map<string, ProviderAdapter> {
  return new Map(providers.map((config) => [config.name, providerModule(config).adapter(config, context)]));
}
