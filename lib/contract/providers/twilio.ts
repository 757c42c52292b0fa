/**
 * Twilio's documented webhook behaviour (docs/providers/twilio.md): a request that fails is
 * retried only as its URL's connection overrides ask (`#rc=` up to 5 retries, seconds apart), so a
 * day bounds every retry of an event with room to spare.
 */
export const TWILIO_REDELIVERY_SECONDS = 86_400;
