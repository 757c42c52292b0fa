/** Slack's documented behaviour (docs/providers/slack.md). */
import { DeliverySchedule, retryWindowSeconds } from './schedule';

/** Events API: up to 3 retries, nearly at once, after a minute and after 5 minutes; an attempt fails after 3 s. */
export const SlackDelivery: DeliverySchedule = { maxWaitsSeconds: [0, 60, 300], attemptTimeoutSeconds: 3 };

/** Slack redelivers nothing on request: its last retry ends 372 s after the first attempt began, at worst. */
export const SLACK_REDELIVERY_SECONDS = retryWindowSeconds(SlackDelivery);
