import { Duration, Names, Size, Token } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BreakerDefaults, BreakerRuntimeConfig, Defaults, Limits, PendingIndex } from '../contract';
import { WebhookIngressType } from '../ingress';
import type { WebhookInboxProps } from '../webhook-inbox-props';

/** `Defaults.LOG_RETENTION_DAYS` as the enum member it is (the annotation fails to compile if it is none). */
const DEFAULT_LOG_RETENTION: logs.RetentionDays = Defaults.LOG_RETENTION_DAYS;

/** The inbox's scalar settings: each prop, or its default from the contract. */
export interface InboxSettings {
  readonly inboxName: string;
  readonly maxReceiveCount: number;
  readonly logRetention: logs.RetentionDays;
  readonly verifierTimeout: Duration;
  /** The processor's timeout (its override, or the default): the lease and the visibility timeout derive from it. */
  readonly processorTimeout: Duration;
  readonly reconcilerTimeout: Duration;
  readonly retention: Duration;
  readonly resultRetention: Duration;
  readonly maxBodyBytes: number;
  readonly inlineBodyBytes: number;
  readonly secretCacheTtl: Duration;
  readonly sweepAfter: Duration;
  readonly pendingIndexShards: number;
  readonly pollBatchSize: number;
  readonly deadlineWarning: Duration;
  readonly processorBatchSize: number;
  readonly processorBatchingWindow: Duration;
  readonly processorMaxConcurrency: number;
  /** `processorMaxRowsPerSecond`, when set. */
  readonly processorMaxRowsPerSecond?: number;
  /** The circuit breaker's settings; undefined when it is off. */
  readonly breaker?: BreakerRuntimeConfig;
  readonly tracing: boolean;
  readonly metricsPerProvider: boolean;
  readonly reconcileSchedule: events.Schedule;
  readonly publishEvents: boolean;
  readonly rejectionRecordsPerMinute: number;
  readonly rejectionRecordSamplePercent: number;
  readonly rejectionRecordRetention: Duration;
}

/** The props merged over the defaults (default → user); construct-required settings are applied where the resources are built. */
export function resolveSettings(scope: Construct, props: WebhookInboxProps): InboxSettings {
  return {
    inboxName: props.inboxName ?? Names.uniqueResourceName(scope, { maxLength: Limits.INBOX_NAME_LENGTH }),
    maxReceiveCount: props.maxReceiveCount ?? Defaults.MAX_RECEIVE_COUNT,
    logRetention: props.logRetention ?? DEFAULT_LOG_RETENTION,
    ...functionTimeoutsOf(props),
    retention: retentionOf(props),
    resultRetention: resultRetentionOf(props),
    maxBodyBytes: (props.maxBodySize ?? Size.bytes(isRestApi(props) ? Defaults.REST_API_MAX_BODY_BYTES : Defaults.MAX_BODY_BYTES)).toBytes(),
    inlineBodyBytes: (props.inlineBodyLimit ?? Size.bytes(Defaults.INLINE_BODY_BYTES)).toBytes(),
    secretCacheTtl: props.secretCacheTtl ?? Duration.seconds(Defaults.SECRET_CACHE_SECONDS),
    sweepAfter: sweepAfterOf(props),
    pendingIndexShards: props.pendingIndexShards ?? PendingIndex.SHARD_COUNT,
    pollBatchSize: props.pollBatchSize ?? Defaults.POLL_BATCH_SIZE,
    deadlineWarning: props.deadlineWarning ?? Duration.seconds(Defaults.DEADLINE_WARNING_SECONDS),
    processorBatchSize: props.processorBatchSize ?? Defaults.PROCESSOR_BATCH_SIZE,
    processorBatchingWindow: props.processorBatchingWindow ?? Duration.seconds(Defaults.PROCESSOR_BATCHING_WINDOW_SECONDS),
    tracing: props.tracing ?? false,
    metricsPerProvider: props.metricsPerProvider ?? false,
    processorMaxConcurrency: props.processorMaxConcurrency ?? Defaults.PROCESSOR_MAX_CONCURRENCY,
    ...(props.processorMaxRowsPerSecond !== undefined ? { processorMaxRowsPerSecond: props.processorMaxRowsPerSecond } : {}),
    ...breakerOf(props),
    reconcileSchedule: props.reconcileSchedule ?? events.Schedule.rate(Duration.minutes(Defaults.SWEEP_EVERY_MINUTES)),
    publishEvents: props.publishEvents ?? true,
    rejectionRecordsPerMinute: props.rejectionRecordsPerMinute ?? Defaults.REJECTION_RECORDS_PER_MINUTE,
    rejectionRecordSamplePercent: props.rejectionRecordSamplePercent ?? Defaults.REJECTION_SAMPLE_PERCENT,
    rejectionRecordRetention: props.rejectionRecordRetention ?? Duration.days(Defaults.REJECTION_RETENTION_DAYS),
  };
}

/** The circuit breaker's settings (`circuitBreaker` over `BreakerDefaults`), or none when it is off; validation names what it refuses. */
export function breakerOf(props: WebhookInboxProps): Pick<InboxSettings, 'breaker'> {
  const options = props.circuitBreaker ?? {};
  if (options.enabled === false) return {};
  return {
    breaker: {
      failureThresholdPercent: options.failureThresholdPercent ?? BreakerDefaults.failureThresholdPercent,
      minimumRows: options.minimumRows ?? BreakerDefaults.minimumRows,
      windowSeconds: options.window?.toSeconds({ integral: false }) ?? BreakerDefaults.windowSeconds,
      coolDownSeconds: options.coolDown?.toSeconds({ integral: false }) ?? BreakerDefaults.coolDownSeconds,
      probesToClose: options.probesToClose ?? BreakerDefaults.probesToClose,
    },
  };
}

/** Whether the inbox's ingress is a REST API (its bodies all arrive base64-encoded). */
export function isRestApi(props: WebhookInboxProps): boolean {
  return props.ingress?.type === WebhookIngressType.REST_API;
}

/** How long rows are kept; validation needs it before the settings are resolved. */
export function retentionOf(props: WebhookInboxProps): Duration {
  return props.retention ?? Duration.days(Defaults.RETENTION_DAYS);
}

/** How long a job's result is kept after its last decision; validation needs it too. */
export function resultRetentionOf(props: WebhookInboxProps): Duration {
  return props.resultRetention ?? retentionOf(props);
}

/** Each function's timeout: its override, or the default. */
export function functionTimeoutsOf(props: WebhookInboxProps): Pick<InboxSettings, 'verifierTimeout' | 'processorTimeout' | 'reconcilerTimeout'> {
  return {
    verifierTimeout: props.verifierFunctionProps?.timeout ?? Duration.seconds(Defaults.VERIFIER_TIMEOUT_SECONDS),
    processorTimeout: props.processorFunctionProps?.timeout ?? Duration.seconds(Defaults.PROCESSOR_TIMEOUT_SECONDS),
    reconcilerTimeout: props.reconcilerFunctionProps?.timeout ?? Duration.seconds(Defaults.RECONCILER_TIMEOUT_SECONDS),
  };
}

/** The shortest safe `sweepAfter`, and the function whose timeout sets it. */
export interface SweepAfterFloor {
  readonly seconds: number;
  readonly functionName: string;
  readonly timeout: Duration;
}

/**
 * The shortest safe `sweepAfter`: the longest timeout of the functions that start a row's pending
 * clock, plus `Limits.SWEEP_AFTER_MARGIN_SECONDS`; undefined when a timeout is a token. Each of
 * them stamps `pendingSince` with its own time (the verifier at admission, the processor at a
 * release, the reconciler at its run's start for the rows it restarts or feeds by polling), and
 * the write reaches the pending index up to that function's timeout later. A sweep reads the
 * index at or after its own start and moves the watermark at most to its start less `sweepAfter`,
 * so no sweep can pass an entry it could not read yet only while `sweepAfter` outlasts that delay.
 */
export function sweepAfterFloorOf(props: WebhookInboxProps): SweepAfterFloor | undefined {
  const { verifierTimeout, processorTimeout, reconcilerTimeout } = functionTimeoutsOf(props);
  const writers = [
    { functionName: 'verifier', timeout: verifierTimeout },
    { functionName: 'processor', timeout: processorTimeout },
    { functionName: 'reconciler', timeout: reconcilerTimeout },
  ];
  if (writers.some((writer) => Token.isUnresolved(writer.timeout.toSeconds()))) return undefined;
  const longest = writers.reduce((max, writer) => (writer.timeout.toSeconds() > max.timeout.toSeconds() ? writer : max));
  return { ...longest, seconds: longest.timeout.toSeconds() + Limits.SWEEP_AFTER_MARGIN_SECONDS };
}

/**
 * How long a row waits unprocessed before the reconciler enqueues it again: the prop, or the
 * default, raised to the floor when a function's timeout is that long; validation needs it too.
 */
export function sweepAfterOf(props: WebhookInboxProps): Duration {
  return props.sweepAfter ?? Duration.seconds(Math.max(Defaults.SWEEP_AFTER_SECONDS, sweepAfterFloorOf(props)?.seconds ?? 0));
}

/** How long the new dead-letter queue keeps a message. */
export function deadLetterRetentionOf(props: WebhookInboxProps): Duration {
  return props.deadLetterQueueProps?.retentionPeriod ?? Duration.days(Defaults.DEAD_LETTER_RETENTION_DAYS);
}
