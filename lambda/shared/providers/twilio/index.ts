import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { twilioAdapter } from './adapter';

/** Twilio: webhooks only, no task API to poll. */
export const twilio: ProviderModule = { adapter: twilioAdapter, ledgerProfile: SAME_ID_PROFILE };
