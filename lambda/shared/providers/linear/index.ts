import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { linearAdapter } from './adapter';

/** Linear: deliveries only, no task API to poll. */
export const linear: ProviderModule = { adapter: linearAdapter, ledgerProfile: SAME_ID_PROFILE };
