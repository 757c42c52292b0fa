import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** Stripe's documented behaviour (docs/providers/stripe.md): retries of an event for up to three days. */
export const STRIPE_REDELIVERY_SECONDS = 3 * 86_400;

/** Stripe: the facts every table by provider kind derives from. */
export const StripeFacts = {
  kind: 'stripe',
  title: 'Stripe',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: STRIPE_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
