/** Shopify's documented behaviour (docs/providers/shopify.md): a failed delivery is retried 8 times over 4 hours, with its original payload. */
export const SHOPIFY_REDELIVERY_SECONDS = 4 * 3600;
