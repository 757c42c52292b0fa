import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { githubAdapter } from './adapter';

/** GitHub: deliveries only, no task API to poll. */
export const github: ProviderModule = { adapter: githubAdapter, ledgerProfile: SAME_ID_PROFILE };
