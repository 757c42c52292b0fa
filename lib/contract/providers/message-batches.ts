/**
 * The message-batches provider contract (docs/providers/message-batches.md), modelled on
 * Anthropic's Message Batches: one batch holds many requests, each with the app's own
 * `custom_id`, processed independently; the batch is polled until `processing_status` is
 * `ended`, then its results are listed, a page at a time. A cancelled batch ends with the results
 * it had (the rest `canceled`); a batch not done within 24 hours ends with the rest `expired`;
 * results stay readable for 29 days after the batch was created.
 */
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** How long a batch may run before its unfinished requests expire. */
export const MESSAGE_BATCH_EXPIRY_SECONDS = 24 * 3600;

/** How long after its creation a batch's results stay readable. */
export const MESSAGE_BATCH_RESULTS_RETENTION_SECONDS = 29 * 86_400;

/** The most requests one batch holds. */
export const MESSAGE_BATCH_MAX_REQUESTS = 100_000;

/** What a request's `custom_id` may be: 1 to 64 letters, digits, `_` and `-`. */
export const MESSAGE_BATCH_CUSTOM_ID_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** The terminal state of one request of a batch (its result's `type`). */
export const BatchChildState = {
  SUCCEEDED: 'succeeded',
  ERRORED: 'errored',
  CANCELED: 'canceled',
  EXPIRED: 'expired',
} as const;

/** Every terminal state of a request, in the order summaries list them. */
export const BATCH_CHILD_STATES: readonly string[] = Object.values(BatchChildState);

/**
 * What an ended batch came to, as a whole: `succeeded` when every request succeeded, `failed`
 * when none did, `partial` otherwise (some succeeded, the rest errored, were canceled or expired,
 * or never appeared in the results): neither a success nor a failure.
 */
export const BatchOutcome = {
  SUCCEEDED: 'succeeded',
  PARTIAL: 'partial',
  FAILED: 'failed',
} as const;

/** A batch's `processing_status` once it will change no more. */
export const MESSAGE_BATCH_ENDED = 'ended';

export const MessageBatchesPolling = {
  taskUrlTemplate: 'https://api.anthropic.com/v1/messages/batches/{batchId}',
  /** Most batches end within an hour: the first look a minute after submission. */
  horizonSeconds: 60,
  /** Then every 5 minutes until it has ended. */
  recheckSeconds: 300,
} as const;

/** A batch provider sends no webhooks: nothing is ever redelivered. */
export const MESSAGE_BATCHES_REDELIVERY_SECONDS = 0;

/** A message-batches API: the facts every table by provider kind derives from. */
export const MessageBatchesFacts = {
  kind: 'message-batches',
  title: 'a message-batches API',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: MESSAGE_BATCHES_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: { ...SECRET_SIGNED_REQUESTS, polledOnly: true },
  polling: MessageBatchesPolling,
  eventType: undefined,
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
