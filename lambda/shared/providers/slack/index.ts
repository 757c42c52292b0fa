import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { slackAdapter } from './adapter';

/** Slack: deliveries only, no task API to poll. */
export const slack: ProviderModule = { adapter: slackAdapter, ledgerProfile: SAME_ID_PROFILE };
