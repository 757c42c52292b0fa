/** Standard Webhooks senders' documented behaviour (docs/providers/standard-webhooks.md). */
import { DeliverySchedule } from './schedule';
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** Immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 20 h and 24 h; 15 s per attempt. */
export const StandardWebhooksDelivery: DeliverySchedule = {
  maxWaitsSeconds: [5, 300, 1800, 7200, 18_000, 36_000, 36_000, 72_000, 86_400],
  attemptTimeoutSeconds: 15,
};

/** OpenAI and other Standard Webhooks senders retry for up to 72 hours. */
export const STANDARD_WEBHOOKS_REDELIVERY_SECONDS = 72 * 3600;

/** Standard Webhooks: the facts every table by provider kind derives from. */
export const StandardWebhooksFacts = {
  kind: 'standard-webhooks',
  title: 'Standard Webhooks',
  secretFormat: SecretFormat.WHSEC,
  redeliverySeconds: STANDARD_WEBHOOKS_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
