import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/**
 * Meta's documented webhook behaviour (docs/providers/meta.md), for Facebook Pages, Instagram,
 * Messenger and the WhatsApp Cloud API: a failed notification is retried, with decreasing
 * frequency, for up to 36 hours (Graph API) and up to 7 days (WhatsApp); the longer one bounds
 * how long a row must outlive its event.
 */
export const META_REDELIVERY_SECONDS = 7 * 86_400;

/** The query parameters of Meta's subscription check: `GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`. */
export const MetaSubscriptionCheck = {
  MODE: 'hub.mode',
  SUBSCRIBE: 'subscribe',
  VERIFY_TOKEN: 'hub.verify_token',
  CHALLENGE: 'hub.challenge',
} as const;

/** Meta: the facts every table by provider kind derives from. */
export const MetaFacts = {
  kind: 'meta',
  title: 'Meta',
  secretFormat: SecretFormat.JSON,
  redeliverySeconds: META_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: { ...SECRET_SIGNED_REQUESTS, getChecked: true },
  polling: undefined,
  eventType: { jsonPath: 'object' },
  rotationRefusal: "this provider's secret is chosen in its own dashboard; stage the new value there and in the secret instead",
} as const satisfies ProviderFacts;
