import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { hmacAdapter } from './adapter';

/** A generic HMAC sender: deliveries only, no task API to poll. */
export const hmac: ProviderModule = { adapter: hmacAdapter, ledgerProfile: SAME_ID_PROFILE };
