/** Linear's documented behaviour (docs/providers/linear.md). */
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** A failed delivery is retried 3 times, after 1 minute, 1 hour and 6 hours: the last at worst 7 h 1 min after the first. */
export const LINEAR_REDELIVERY_SECONDS = (1 + 60 + 360) * 60;

/**
 * How far the body's `webhookTimestamp` may stray from now by default, each way, in seconds:
 * Linear recommends refusing a delivery older than a minute, and its SDK checks both directions.
 */
export const LINEAR_TOLERANCE_SECONDS = 60;

/** Linear: the facts every table by provider kind derives from. */
export const LinearFacts = {
  kind: 'linear',
  title: 'Linear',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: LINEAR_REDELIVERY_SECONDS,
  tolerance: { pastSeconds: LINEAR_TOLERANCE_SECONDS, futureSeconds: LINEAR_TOLERANCE_SECONDS },
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
