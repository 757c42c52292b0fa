import { ProviderFacts, SecretFormat } from './facts';

/** Stripe's documented behaviour (docs/providers/stripe.md): retries of an event for up to three days. */
export const STRIPE_REDELIVERY_SECONDS = 3 * 86_400;

/** Stripe: the facts every table by provider kind derives from. */
export const StripeFacts = {
  kind: 'stripe',
  title: 'Stripe',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: STRIPE_REDELIVERY_SECONDS,
  tolerance: undefined,
  signsUrl: false,
  unusableSignedUrl: undefined,
  getChecked: false,
  certificateSigned: false,
  polledOnly: false,
  configuredScheme: false,
  polling: undefined,
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
