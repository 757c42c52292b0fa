/** Linear's documented behaviour (docs/providers/linear.md). */

/** A failed delivery is retried 3 times, after 1 minute, 1 hour and 6 hours: the last at worst 7 h 1 min after the first. */
export const LINEAR_REDELIVERY_SECONDS = (1 + 60 + 360) * 60;

/**
 * How far the body's `webhookTimestamp` may stray from now by default, each way, in seconds:
 * Linear recommends refusing a delivery older than a minute, and its SDK checks both directions.
 */
export const LINEAR_TOLERANCE_SECONDS = 60;
