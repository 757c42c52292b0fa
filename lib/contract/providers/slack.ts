/** Slack's documented behaviour (docs/providers/slack.md). */
import { DeliverySchedule, retryWindowSeconds } from './schedule';
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** Events API: up to 3 retries, nearly at once, after a minute and after 5 minutes; an attempt fails after 3 s. */
export const SlackDelivery: DeliverySchedule = { maxWaitsSeconds: [0, 60, 300], attemptTimeoutSeconds: 3 };

/** Slack redelivers nothing on request: its last retry ends 372 s after the first attempt began, at worst. */
export const SLACK_REDELIVERY_SECONDS = retryWindowSeconds(SlackDelivery);

/** Slack: the facts every table by provider kind derives from. */
export const SlackFacts = {
  kind: 'slack',
  title: 'Slack',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: SLACK_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'event.type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
