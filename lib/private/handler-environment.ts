import {
  ARCHIVE_BUCKET_ENV,
  BreakerDefaults,
  BreakerRuntimeConfig,
  Defaults,
  Env,
  PendingIndex,
  PollingRuntimeConfig,
  ProviderRuntimeConfig,
  RecoveryRuntimeConfig,
  RotatedSecretConfig,
} from '../contract';

/**
 * What the handlers are configured with, as plain values: CloudFormation tokens when the
 * construct fills them in, real resource names when the local twin does. Both build each
 * function's environment with `handlerEnvironments`, so the two can never drift apart.
 */
export interface InboxHandlerSettings {
  readonly inboxName: string;
  readonly inboxTable: string;
  readonly resultsTable: string;
  readonly workQueueUrl: string;
  readonly providers: readonly ProviderRuntimeConfig[];
  readonly maxBodyBytes: number;
  /** Set when bodies larger than `inlineBodyBytes` go to a bucket. */
  readonly bodyBucket?: string;
  readonly inlineBodyBytes: number;
  readonly retentionSeconds: number;
  /** How long a job's result item is kept after its last decision. */
  readonly resultRetentionSeconds: number;
  readonly secretCacheSeconds: number;
  /** The processor's timeout: a claim's lease lasts as long. */
  readonly leaseSeconds: number;
  readonly maxReceiveCount: number;
  readonly sweepAfterSeconds: number;
  /** The pending index's shard count: the verifier writes entries under it, the reconciler writes and reads them. */
  readonly pendingShards: number;
  /** How the reconciler polls providers for recorded submissions never delivered. */
  readonly polling: readonly PollingRuntimeConfig[];
  /** How the reconciler recovers providers from their own event logs (GitHub, Stripe); absent or empty: none. */
  readonly recovery?: readonly RecoveryRuntimeConfig[];
  readonly pollBatchSize: number;
  /** How long before a submission's deadline the reconciler looks at it and counts it near its deadline. */
  readonly deadlineWarningSeconds: number;
  /** The bus the processor puts effects on (and the reconciler its ResourceUnavailable events), when it has one. */
  readonly effectBusName?: string;
  /** The user's processing function the processor invokes, when there is one. */
  readonly effectFunctionArn?: string;
  /** The bucket the processor archives processed deliveries to, when the archive is on. */
  readonly archiveBucket?: string;
  /** Rejection records a minute per provider (0: none). */
  readonly rejectionRecordsPerMinute: number;
  /** Percent of refused requests considered for a record. */
  readonly rejectionSamplePercent: number;
  readonly rejectionRetentionSeconds: number;
  /** The most a rejection record may add to a refusal's answer, milliseconds. */
  readonly rejectionRecordBudgetMs: number;
  /** The processor's circuit breaker; undefined when it is off. */
  readonly breaker?: BreakerRuntimeConfig;
  /** The most rows a second the processor hands downstream, and its concurrency, which shares them; undefined: no cap. */
  readonly processorRate?: { readonly rowsPerSecond: number; readonly maxConcurrency: number };
  /** Each metric emitted per provider too, not only per inbox. */
  readonly metricsPerProvider: boolean;
}

/** What a local inbox must name; everything else falls back to the construct's defaults. */
export type LocalHandlerSettings = Pick<InboxHandlerSettings, 'inboxName' | 'inboxTable' | 'resultsTable' | 'workQueueUrl' | 'providers'> &
  Partial<InboxHandlerSettings>;

/** The handlers' settings of an inbox deployed with the construct's defaults, but for `settings` (the twin, the bench, the tests). */
export function handlerSettingsWithDefaults(settings: LocalHandlerSettings): InboxHandlerSettings {
  return {
    maxBodyBytes: Defaults.MAX_BODY_BYTES,
    inlineBodyBytes: Defaults.INLINE_BODY_BYTES,
    retentionSeconds: Defaults.RETENTION_DAYS * 86_400,
    resultRetentionSeconds: Defaults.RETENTION_DAYS * 86_400,
    secretCacheSeconds: Defaults.SECRET_CACHE_SECONDS,
    leaseSeconds: Defaults.PROCESSOR_TIMEOUT_SECONDS,
    maxReceiveCount: Defaults.MAX_RECEIVE_COUNT,
    sweepAfterSeconds: Defaults.SWEEP_AFTER_SECONDS,
    pendingShards: PendingIndex.SHARD_COUNT,
    polling: [],
    pollBatchSize: Defaults.POLL_BATCH_SIZE,
    deadlineWarningSeconds: Defaults.DEADLINE_WARNING_SECONDS,
    rejectionRecordsPerMinute: Defaults.REJECTION_RECORDS_PER_MINUTE,
    rejectionSamplePercent: Defaults.REJECTION_SAMPLE_PERCENT,
    rejectionRetentionSeconds: Defaults.REJECTION_RETENTION_DAYS * 86_400,
    rejectionRecordBudgetMs: Defaults.REJECTION_RECORD_BUDGET_MS,
    breaker: BreakerDefaults,
    metricsPerProvider: false,
    ...settings,
  };
}

/** The rotator's environment: the inbox it belongs to and the secrets it may rotate. */
export function rotatorEnvironment(inboxName: string, rotated: readonly RotatedSecretConfig[]): Record<string, string> {
  return { [Env.INBOX_NAME]: inboxName, [Env.ROTATED_SECRETS]: JSON.stringify(rotated) };
}

export interface HandlerEnvironments {
  readonly verifier: Record<string, string>;
  readonly processor: Record<string, string>;
  readonly reconciler: Record<string, string>;
}

export function handlerEnvironments(settings: InboxHandlerSettings): HandlerEnvironments {
  const providers = JSON.stringify(settings.providers);
  // Only the verifier checks signatures: the processor and the reconciler read no signing secret.
  const unsigned = JSON.stringify(settings.providers.map(({ secretId: _secretId, ...provider }) => provider));
  // Only when it is not the default the handlers fall back to.
  const pendingShards: Record<string, string> =
    settings.pendingShards !== PendingIndex.SHARD_COUNT ? { [Env.PENDING_SHARDS]: String(settings.pendingShards) } : {};
  const metrics: Record<string, string> = settings.metricsPerProvider ? { [Env.METRICS_PER_PROVIDER]: 'true' } : {};
  const bodies: Record<string, string> = settings.bodyBucket
    ? { [Env.BODY_BUCKET]: settings.bodyBucket, [Env.INLINE_BODY_BYTES]: String(settings.inlineBodyBytes) }
    : {};
  return {
    verifier: {
      [Env.INBOX_NAME]: settings.inboxName,
      [Env.INBOX_TABLE]: settings.inboxTable,
      [Env.WORK_QUEUE_URL]: settings.workQueueUrl,
      [Env.PROVIDERS]: providers,
      ...pendingShards,
      [Env.MAX_BODY_BYTES]: String(settings.maxBodyBytes),
      ...bodies,
      [Env.RETENTION_SECONDS]: String(settings.retentionSeconds),
      [Env.SECRET_CACHE_SECONDS]: String(settings.secretCacheSeconds),
      [Env.REJECTION_RECORDS_PER_MINUTE]: String(settings.rejectionRecordsPerMinute),
      [Env.REJECTION_SAMPLE_PERCENT]: String(settings.rejectionSamplePercent),
      [Env.REJECTION_RETENTION_SECONDS]: String(settings.rejectionRetentionSeconds),
      [Env.REJECTION_RECORD_BUDGET_MS]: String(settings.rejectionRecordBudgetMs),
      ...metrics,
    },
    processor: {
      [Env.INBOX_NAME]: settings.inboxName,
      [Env.INBOX_TABLE]: settings.inboxTable,
      [Env.RESULTS_TABLE]: settings.resultsTable,
      [Env.PROVIDERS]: unsigned,
      [Env.LEASE_SECONDS]: String(settings.leaseSeconds),
      [Env.RESULT_RETENTION_SECONDS]: String(settings.resultRetentionSeconds),
      [Env.MAX_RECEIVE_COUNT]: String(settings.maxReceiveCount),
      [Env.SECRET_CACHE_SECONDS]: String(settings.secretCacheSeconds),
      ...bodies,
      ...(settings.effectBusName ? { [Env.EFFECT_BUS_NAME]: settings.effectBusName } : {}),
      ...(settings.effectFunctionArn ? { [Env.EFFECT_FUNCTION_ARN]: settings.effectFunctionArn } : {}),
      ...(settings.breaker ? { [Env.BREAKER]: JSON.stringify(settings.breaker) } : {}),
      ...(settings.processorRate
        ? { [Env.MAX_ROWS_PER_SECOND]: String(settings.processorRate.rowsPerSecond), [Env.MAX_CONCURRENCY]: String(settings.processorRate.maxConcurrency) }
        : {}),
      ...metrics,
      ...(settings.archiveBucket ? { [ARCHIVE_BUCKET_ENV]: settings.archiveBucket } : {}),
    },
    reconciler: {
      [Env.INBOX_NAME]: settings.inboxName,
      [Env.INBOX_TABLE]: settings.inboxTable,
      [Env.WORK_QUEUE_URL]: settings.workQueueUrl,
      [Env.PROVIDERS]: unsigned,
      [Env.SWEEP_AFTER_SECONDS]: String(settings.sweepAfterSeconds),
      ...pendingShards,
      [Env.RETENTION_SECONDS]: String(settings.retentionSeconds),
      [Env.SECRET_CACHE_SECONDS]: String(settings.secretCacheSeconds),
      [Env.POLLING]: JSON.stringify(settings.polling),
      ...(settings.recovery?.length ? { [Env.RECOVERY]: JSON.stringify(settings.recovery) } : {}),
      [Env.POLL_BATCH_SIZE]: String(settings.pollBatchSize),
      [Env.DEADLINE_WARNING_SECONDS]: String(settings.deadlineWarningSeconds),
      ...bodies,
      ...(settings.effectBusName ? { [Env.EFFECT_BUS_NAME]: settings.effectBusName } : {}),
      ...metrics,
    },
  };
}
