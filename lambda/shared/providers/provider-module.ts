import { ProviderRuntimeConfig } from '../../../lib/contract';
import { ProviderAdapter } from './adapter';
import { BatchApi } from './message-batches/batch-api';
import { ProviderApi, TaskRequestOptions } from './provider-api';

/** How a provider's task ids map onto its inbox rows. */
export interface LedgerProfile {
  /** The event ids under which a delivery of this task is stored (the rows to look for). */
  eventIdsOf(taskId: string): string[];
  /** The task id behind a stored event id. */
  taskIdOf(eventId: string): string;
}

/** A provider whose rows are keyed by the task id the app recorded. */
export const SAME_ID_PROFILE: LedgerProfile = { eventIdsOf: (taskId) => [taskId], taskIdOf: (eventId) => eventId };

/** What the runtime's environment tells every adapter beside its provider's configuration. */
export interface AdapterContext {
  /**
   * SNS's endpoint as the AWS SDK reads it (`AWS_ENDPOINT_URL_SNS`): when set, its origin stands
   * in for SNS's host of each topic's partition (the local twin's SNS).
   */
  readonly snsEndpoint?: string;
}

/** Everything the runtime knows of one kind of provider: what its folder exports to the registry. */
export interface ProviderModule {
  /** The adapter of one configured provider of this kind. */
  readonly adapter: (config: ProviderRuntimeConfig, context?: AdapterContext) => ProviderAdapter;
  /** Its task API client; absent when the provider cannot be polled. */
  readonly taskApi?: (options: TaskRequestOptions) => ProviderApi;
  /** Its batch API client, for a provider whose submissions are batches of many requests. */
  readonly batchApi?: (options: TaskRequestOptions) => BatchApi;
  /** How the submission ledger finds its rows. */
  readonly ledgerProfile: LedgerProfile;
}
