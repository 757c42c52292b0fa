import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** PagerDuty's documented behaviour (docs/providers/pagerduty.md): 5 attempts with exponential backoff over about 20 minutes. */
export const PAGERDUTY_REDELIVERY_SECONDS = 20 * 60;

/** PagerDuty: the facts every table by provider kind derives from. */
export const PagerDutyFacts = {
  kind: 'pagerduty',
  title: 'PagerDuty',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: PAGERDUTY_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'event.event_type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
