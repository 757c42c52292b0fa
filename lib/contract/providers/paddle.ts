/** Paddle Billing's documented behaviour (docs/providers/paddle.md). */
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** A live account's notification is retried with backoff for up to three days. */
export const PADDLE_REDELIVERY_SECONDS = 3 * 86_400;

/**
 * How old a `Paddle-Signature` `ts` may be by default, in seconds: what Paddle's own SDK accepts.
 * Paddle signs every attempt anew, so a delivery refused as stale comes back freshly signed.
 */
export const PADDLE_PAST_TOLERANCE_SECONDS = 5;

/** Paddle: the facts every table by provider kind derives from. */
export const PaddleFacts = {
  kind: 'paddle',
  title: 'Paddle',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: PADDLE_REDELIVERY_SECONDS,
  tolerance: { pastSeconds: PADDLE_PAST_TOLERANCE_SECONDS },
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'event_type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
