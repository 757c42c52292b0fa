/**
 * A signing secret in the form each provider issues it, to stand in for the provider's own: the
 * local twin stores one for every provider it serves. No handler imports this.
 */
import { ProviderRuntimeConfig, SecretKindName } from '../../../lib/contract';
import { sampleSecret as answerline } from './answerline/sample-secret';
import { sampleSecret as discord } from './discord/sample-secret';
import { sampleSecret as echonova } from './echonova/sample-secret';
import { sampleSecret as github } from './github/sample-secret';
import { sampleSecret as hmac } from './hmac/sample-secret';
import { sampleSecret as linear } from './linear/sample-secret';
import { sampleSecret as meta } from './meta/sample-secret';
import { sampleSecret as paddle } from './paddle/sample-secret';
import { sampleSecret as pagerduty } from './pagerduty/sample-secret';
import { sampleSecret as shopify } from './shopify/sample-secret';
import { sampleSecret as slack } from './slack/sample-secret';
import { sampleSecret as square } from './square/sample-secret';
import { sampleSecret as standardWebhooks } from './standard-webhooks/sample-secret';
import { sampleSecret as stripe } from './stripe/sample-secret';
import { sampleSecret as twilio } from './twilio/sample-secret';
import { sampleSecret as zoom } from './zoom/sample-secret';

/** Makes a new sample secret for a provider of its kind (the generic HMAC scheme reads its secret encoding). */
export type SampleSecretMaker = (config: Pick<ProviderRuntimeConfig, 'hmac'>) => string;

/** Every kind with a signing secret: adding one is its folder's sample-secret.ts and a line here (a kind without one fails to typecheck). */
const SAMPLE_SECRETS: { readonly [Kind in SecretKindName]: SampleSecretMaker } = {
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
};

/**
 * A new sample signing secret for a provider of its kind. A kind without a secret of its own
 * (SNS, a polled-only API) or unknown gets one as a generic HMAC sender's: nothing verifies with it.
 */
export function sampleSigningSecret(config: Pick<ProviderRuntimeConfig, 'adapter' | 'hmac'>): string {
  return (Object.hasOwn(SAMPLE_SECRETS, config.adapter) ? SAMPLE_SECRETS[config.adapter as SecretKindName] : SAMPLE_SECRETS.hmac)(config);
}
