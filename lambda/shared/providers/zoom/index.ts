import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { zoomAdapter } from './adapter';

/** Zoom: deliveries only, no task API to poll. */
export const zoom: ProviderModule = { adapter: zoomAdapter, ledgerProfile: SAME_ID_PROFILE };
