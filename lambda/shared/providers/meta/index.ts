import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { metaAdapter } from './adapter';

/** Meta: notifications only, no task API to poll. */
export const meta: ProviderModule = { adapter: metaAdapter, ledgerProfile: SAME_ID_PROFILE };
