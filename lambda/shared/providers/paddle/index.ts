import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { paddleAdapter } from './adapter';

/** Paddle Billing: deliveries only, no task API to poll. */
export const paddle: ProviderModule = { adapter: paddleAdapter, ledgerProfile: SAME_ID_PROFILE };
