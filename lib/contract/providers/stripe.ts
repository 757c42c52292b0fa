/** Stripe's documented behaviour (docs/providers/stripe.md): retries of an event for up to three days. */
export const STRIPE_REDELIVERY_SECONDS = 3 * 86_400;
