import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { shopifyAdapter } from './adapter';

/** Shopify: deliveries only, no task API to poll. */
export const shopify: ProviderModule = { adapter: shopifyAdapter, ledgerProfile: SAME_ID_PROFILE };
