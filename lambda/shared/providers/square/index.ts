import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { squareAdapter } from './adapter';

/** Square: deliveries only, no task API to poll. */
export const square: ProviderModule = { adapter: squareAdapter, ledgerProfile: SAME_ID_PROFILE };
