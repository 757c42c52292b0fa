import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { snsAdapter } from './adapter';

/** Amazon SNS: HTTP/S subscriptions to the configured topics, no task API to poll. */
export const sns: ProviderModule = { adapter: snsAdapter, ledgerProfile: SAME_ID_PROFILE };
