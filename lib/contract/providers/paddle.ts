/** Paddle Billing's documented behaviour (docs/providers/paddle.md). */

/** A live account's notification is retried with backoff for up to three days. */
export const PADDLE_REDELIVERY_SECONDS = 3 * 86_400;

/**
 * How old a `Paddle-Signature` `ts` may be by default, in seconds: what Paddle's own SDK accepts.
 * Paddle signs every attempt anew, so a delivery refused as stale comes back freshly signed.
 */
export const PADDLE_PAST_TOLERANCE_SECONDS = 5;
