/** Echonova's documented behaviour (docs/providers/echonova.md). */
import { DeliverySchedule, retryWindowSeconds } from './schedule';
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** 3 attempts, 5 s then 10 s apart, 10 s per attempt. */
export const EchonovaDelivery: DeliverySchedule = { maxWaitsSeconds: [5, 10], attemptTimeoutSeconds: 10 };

/** Consecutive failed deliveries (after all their attempts) that disable a webhook. */
export const ECHONOVA_DISABLE_AFTER_FAILURES = 5;

export const EchonovaPolling = {
  // Echonova documents no job lifecycle, only its deliveries, and names no job URL: the template
  // has no default, and the horizon is an assumption (an hour covers most jobs; set it for the
  // account's longest).
  horizonSeconds: 3600,
  recheckSeconds: 300,
} as const;

/** Echonova never redelivers on request: its last attempt ends 45 s after the first began, at worst. */
export const ECHONOVA_REDELIVERY_SECONDS = retryWindowSeconds(EchonovaDelivery);

/** Echonova: the facts every table by provider kind derives from. */
export const EchonovaFacts = {
  kind: 'echonova',
  title: 'Echonova',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: ECHONOVA_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: EchonovaPolling,
  eventType: { header: 'x-webhook-event' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
