import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/**
 * Twilio's documented webhook behaviour (docs/providers/twilio.md): a request that fails is
 * retried only as its URL's connection overrides ask (`#rc=` up to 5 retries, seconds apart), so a
 * day bounds every retry of an event with room to spare.
 */
export const TWILIO_REDELIVERY_SECONDS = 86_400;

/** Twilio appends `bodySHA256` to the URL it signs for a JSON body itself: one configured there could never match the body. */
const TWILIO_UNUSABLE_URL = {
  pattern: /[?&]bodySHA256=/,
  problem:
    'notificationUrl (webhookUrl) names bodySHA256 in its query: Twilio appends it to the URL it signs for a JSON body; give the URL as configured in Twilio, without it',
};

/** Twilio: the facts every table by provider kind derives from. */
export const TwilioFacts = {
  kind: 'twilio',
  title: 'Twilio',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: TWILIO_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: { ...SECRET_SIGNED_REQUESTS, signsUrl: true, unusableSignedUrl: TWILIO_UNUSABLE_URL },
  polling: undefined,
  eventType: undefined,
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
