import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { discordAdapter } from './adapter';

/** Discord interactions: deliveries only, no task API to poll. */
export const discord: ProviderModule = { adapter: discordAdapter, ledgerProfile: SAME_ID_PROFILE };
