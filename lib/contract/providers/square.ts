import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/**
 * Square's documented webhook behaviour (docs/providers/square.md): a notification that is not
 * acknowledged with a 2xx within 10 seconds is retried 1, 2, 4, 8, 16 and 32 minutes apart, then
 * hourly, for up to 72 hours after its event; after that it is discarded.
 */
export const SQUARE_REDELIVERY_SECONDS = 72 * 3600;

/** The header of a notification's signature: base64 HMAC-SHA256 of the notification URL followed by the body. */
export const SQUARE_SIGNATURE_HEADER = 'x-square-hmacsha256-signature';

/** Square: the facts every table by provider kind derives from. */
export const SquareFacts = {
  kind: 'square',
  title: 'Square',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: SQUARE_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: { ...SECRET_SIGNED_REQUESTS, signsUrl: true },
  polling: undefined,
  eventType: { jsonPath: 'type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
