/** Zoom's documented behaviour (docs/providers/zoom.md). */
import { DeliverySchedule, retryWindowSeconds } from './schedule';
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** 3 retries: 5 minutes after the first attempt, 20 minutes after the first retry, 60 after the second; 3 s per attempt. */
export const ZoomDelivery: DeliverySchedule = { maxWaitsSeconds: [300, 1200, 3600], attemptTimeoutSeconds: 3 };

/** Zoom redelivers nothing on request: its last retry ends 85 min 12 s after the first attempt began, at worst. */
export const ZOOM_REDELIVERY_SECONDS = retryWindowSeconds(ZoomDelivery);

/** Zoom: the facts every table by provider kind derives from. */
export const ZoomFacts = {
  kind: 'zoom',
  title: 'Zoom',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: ZOOM_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'event' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
