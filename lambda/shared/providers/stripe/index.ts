import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { stripeAdapter } from './adapter';

/** Stripe: deliveries only, no task API to poll. */
export const stripe: ProviderModule = { adapter: stripeAdapter, ledgerProfile: SAME_ID_PROFILE };
