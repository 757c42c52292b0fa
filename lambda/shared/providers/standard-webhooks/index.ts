import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { standardWebhooksAdapter } from './adapter';

/** Standard Webhooks senders (OpenAI and others): deliveries only, no task API to poll. */
export const standardWebhooks: ProviderModule = { adapter: standardWebhooksAdapter, ledgerProfile: SAME_ID_PROFILE };
