/** Environment variables the construct sets and the handlers read (`handler-environment.ts` fills them in). */
export const Env = {
  INBOX_NAME: 'WEBHOOK_INBOX_NAME',
  INBOX_TABLE: 'WEBHOOK_INBOX_TABLE',
  RESULTS_TABLE: 'WEBHOOK_INBOX_RESULTS_TABLE',
  WORK_QUEUE_URL: 'WEBHOOK_INBOX_QUEUE_URL',
  PROVIDERS: 'WEBHOOK_INBOX_PROVIDERS',
  /** The handler configuration file in the function's code folder (`HANDLER_CONFIG_FILE`), when its settings are there; unset: all in the environment. */
  CONFIG_FILE: 'WEBHOOK_INBOX_CONFIG',
  /** `arn:<partition>:secretsmanager:<region>:<account>:secret:`, the start of the ARN of each secret of the stack the file names by its logical id. */
  SECRET_ARN_PREFIX: 'WEBHOOK_INBOX_SECRET_ARN_PREFIX',
  /** The end of those secrets' ARNs, after `<logical id>-` (what CloudFormation and Secrets Manager add to the name), comma-separated. */
  SECRET_ARN_SUFFIXES: 'WEBHOOK_INBOX_SECRET_ARN_SUFFIXES',
  /** Prefix of the variables that hold, each, one other value CloudFormation fills in at deploy for the file (`WEBHOOK_INBOX_REF_0`, ...). */
  REF_PREFIX: 'WEBHOOK_INBOX_REF_',
  MAX_BODY_BYTES: 'WEBHOOK_INBOX_MAX_BODY_BYTES',
  RETENTION_SECONDS: 'WEBHOOK_INBOX_RETENTION_SECONDS',
  /** Processor: how long a job's result item is kept after its last decision (its TTL). */
  RESULT_RETENTION_SECONDS: 'WEBHOOK_INBOX_RESULT_RETENTION_SECONDS',
  SECRET_CACHE_SECONDS: 'WEBHOOK_INBOX_SECRET_CACHE_SECONDS',
  /** Verifier, processor, reconciler: `true` when each metric is emitted per provider too (`metricsPerProvider`); unset: per inbox only. */
  METRICS_PER_PROVIDER: 'WEBHOOK_INBOX_METRICS_PER_PROVIDER',
  LEASE_SECONDS: 'WEBHOOK_INBOX_LEASE_SECONDS',
  MAX_RECEIVE_COUNT: 'WEBHOOK_INBOX_MAX_RECEIVE_COUNT',
  SWEEP_AFTER_SECONDS: 'WEBHOOK_INBOX_SWEEP_AFTER_SECONDS',
  /** Verifier and reconciler: the pending index's shard count (`pendingIndexShards`); unset: `PendingIndex.SHARD_COUNT`. */
  PENDING_SHARDS: 'WEBHOOK_INBOX_PENDING_SHARDS',
  ROTATED_SECRETS: 'WEBHOOK_INBOX_ROTATED_SECRETS',
  BODY_BUCKET: 'WEBHOOK_INBOX_BODY_BUCKET',
  INLINE_BODY_BYTES: 'WEBHOOK_INBOX_INLINE_BODY_BYTES',
  /** Name or ARN of the EventBridge bus the processor (and the reconciler, for `ResourceUnavailable`) puts effect events on; unset: no events. */
  EFFECT_BUS_NAME: 'WEBHOOK_INBOX_EFFECT_BUS',
  /** ARN (or name) of the user's processing function, invoked with each effect; unset: none. */
  EFFECT_FUNCTION_ARN: 'WEBHOOK_INBOX_EFFECT_FUNCTION',
  /** Reconciler: JSON array of `PollingRuntimeConfig`, one per provider polled for recorded submissions. */
  POLLING: 'WEBHOOK_INBOX_POLLING',
  /** Reconciler: JSON array of `RecoveryRuntimeConfig`, one per provider recovered from its own event log (GitHub, Stripe). */
  RECOVERY: 'WEBHOOK_INBOX_RECOVERY',
  /** Reconciler: the most due submissions one run checks. */
  POLL_BATCH_SIZE: 'WEBHOOK_INBOX_POLL_BATCH_SIZE',
  /**
   * Apps that record submissions (`SubmissionLedger.fromEnvironment`): JSON object of provider
   * name → horizon in seconds, so that a submission is first checked when its provider's
   * lifecycle says its delivery should have arrived.
   */
  SUBMISSION_HORIZONS: 'WEBHOOK_INBOX_SUBMISSION_HORIZONS',
  /**
   * Apps that record submissions (`SubmissionLedger.fromEnvironment`): JSON object of provider
   * name → seconds after submission when its resource is gone (its deadline).
   */
  SUBMISSION_DEADLINES: 'WEBHOOK_INBOX_SUBMISSION_DEADLINES',
  /** Reconciler (and apps that record submissions): how long before a deadline a submission still unread is polled and alarmed on, in seconds. */
  DEADLINE_WARNING_SECONDS: 'WEBHOOK_INBOX_DEADLINE_WARNING_SECONDS',
  /** Verifier: the most rejection records a minute per provider (0: none). */
  REJECTION_RECORDS_PER_MINUTE: 'WEBHOOK_INBOX_REJECTION_RECORDS_PER_MINUTE',
  /** Verifier: percent of refused requests considered for a record. */
  REJECTION_SAMPLE_PERCENT: 'WEBHOOK_INBOX_REJECTION_SAMPLE_PERCENT',
  /** Verifier: how long a rejection record is kept, seconds. */
  REJECTION_RETENTION_SECONDS: 'WEBHOOK_INBOX_REJECTION_RETENTION_SECONDS',
  /** Verifier: the most milliseconds a rejection record may add to a refusal's answer. */
  REJECTION_RECORD_BUDGET_MS: 'WEBHOOK_INBOX_REJECTION_RECORD_BUDGET_MS',
  /** Processor: the circuit breaker's settings, JSON `BreakerRuntimeConfig`; unset: no breaker. */
  BREAKER: 'WEBHOOK_INBOX_BREAKER',
  /** Processor: the most rows a second it hands downstream (`processorMaxRowsPerSecond`); unset: no cap. */
  MAX_ROWS_PER_SECOND: 'WEBHOOK_INBOX_MAX_ROWS_PER_SECOND',
  /** Processor, with `MAX_ROWS_PER_SECOND`: the most invocations at once (`processorMaxConcurrency`), which share the rate. */
  MAX_CONCURRENCY: 'WEBHOOK_INBOX_MAX_CONCURRENCY',
} as const;
