import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { pagerdutyAdapter } from './adapter';

/** PagerDuty v3 webhooks: deliveries only, no task API to poll. */
export const pagerduty: ProviderModule = { adapter: pagerdutyAdapter, ledgerProfile: SAME_ID_PROFILE };
