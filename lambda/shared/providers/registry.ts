import { AdapterKind, ProviderRuntimeConfig } from '../../../lib/contract';
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

/** Every kind of provider the runtime serves: adding one is its folder and a line here. */
const REGISTRY: Readonly<Record<string, ProviderModule>> = {
  [AdapterKind.ANSWERLINE]: answerline,
  [AdapterKind.ECHONOVA]: echonova,
  [AdapterKind.STANDARD_WEBHOOKS]: standardWebhooks,
  [AdapterKind.STRIPE]: stripe,
  [AdapterKind.GITHUB]: github,
  [AdapterKind.HMAC]: hmac,
  [AdapterKind.DISCORD]: discord,
  [AdapterKind.SQUARE]: square,
  [AdapterKind.SLACK]: slack,
  [AdapterKind.ZOOM]: zoom,
  [AdapterKind.META]: meta,
  [AdapterKind.TWILIO]: twilio,
  [AdapterKind.SHOPIFY]: shopify,
  [AdapterKind.PADDLE]: paddle,
  [AdapterKind.PAGERDUTY]: pagerduty,
  [AdapterKind.LINEAR]: linear,
  [AdapterKind.SNS]: sns,
  [AdapterKind.MESSAGE_BATCHES]: messageBatches,
};

/** The module of a configured provider's adapter kind. */
export function providerModule(config: Pick<ProviderRuntimeConfig, 'name' | 'adapter'>): ProviderModule {
  const module = REGISTRY[config.adapter];
  if (!module) throw new ConfigurationError(`provider ${config.name}: unknown adapter "${config.adapter}"`);
  return module;
}

/** One adapter per configured provider, by provider name. */
export function adaptersFor(providers: readonly ProviderRuntimeConfig[], context: AdapterContext = {}): Map<string, ProviderAdapter> {
  return new Map(providers.map((config) => [config.name, providerModule(config).adapter(config, context)]));
}
