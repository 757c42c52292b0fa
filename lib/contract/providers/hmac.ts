import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** A generic HMAC sender documents nothing the inbox can rely on: three days, as the common providers. */
export const HMAC_REDELIVERY_SECONDS = 3 * 86_400;

/** A generic HMAC sender: the facts every table by provider kind derives from. */
export const HmacFacts = {
  kind: 'hmac',
  title: 'a generic HMAC sender',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: HMAC_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: { ...SECRET_SIGNED_REQUESTS, configuredScheme: true },
  polling: undefined,
  eventType: undefined,
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
