/** PagerDuty's documented behaviour (docs/providers/pagerduty.md): 5 attempts with exponential backoff over about 20 minutes. */
export const PAGERDUTY_REDELIVERY_SECONDS = 20 * 60;
