import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { messageBatchesAdapter } from './adapter';
import { MessageBatchesApi } from './batch-api';

/** A batch API: polled only; its submissions are batches, recorded by batch id with their custom ids. */
export const messageBatches: ProviderModule = {
  adapter: messageBatchesAdapter,
  batchApi: (options) => new MessageBatchesApi(options),
  ledgerProfile: SAME_ID_PROFILE,
};
