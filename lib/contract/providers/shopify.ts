import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** Shopify's documented behaviour (docs/providers/shopify.md): a failed delivery is retried 8 times over 4 hours, with its original payload. */
export const SHOPIFY_REDELIVERY_SECONDS = 4 * 3600;

/** Shopify: the facts every table by provider kind derives from. */
export const ShopifyFacts = {
  kind: 'shopify',
  title: 'Shopify',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: SHOPIFY_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { header: 'x-shopify-topic' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
