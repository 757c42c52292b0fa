import { Duration, Names, Size } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { Defaults, Limits } from '../contract';
import { WebhookIngressType } from '../ingress';
import type { WebhookInboxProps } from '../webhook-inbox-props';

/** `Defaults.LOG_RETENTION_DAYS` as the enum member it is (the annotation fails to compile if it is none). */
const DEFAULT_LOG_RETENTION: logs.RetentionDays = Defaults.LOG_RETENTION_DAYS;

/** The inbox's scalar settings: each prop, or its default from the contract. */
export interface InboxSettings {
  readonly inboxName: string;
  readonly maxReceiveCount: number;
  readonly logRetention: logs.RetentionDays;
  /** The processor's timeout (its override, or the default): the lease and the visibility timeout derive from it. */
  readonly processorTimeout: Duration;
  readonly retention: Duration;
  readonly maxBodyBytes: number;
  readonly inlineBodyBytes: number;
  readonly secretCacheTtl: Duration;
  readonly sweepAfter: Duration;
  readonly sweepBatchSize: number;
  readonly pollBatchSize: number;
  readonly deadlineWarning: Duration;
  readonly processorBatchSize: number;
  readonly processorMaxConcurrency: number;
  readonly throttle: apigwv2.ThrottleSettings;
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
    processorTimeout: props.processorFunctionProps?.timeout ?? Duration.seconds(Defaults.PROCESSOR_TIMEOUT_SECONDS),
    retention: retentionOf(props),
    maxBodyBytes: (props.maxBodySize ?? Size.bytes(isRestApi(props) ? Defaults.REST_API_MAX_BODY_BYTES : Defaults.MAX_BODY_BYTES)).toBytes(),
    inlineBodyBytes: (props.inlineBodyLimit ?? Size.bytes(Defaults.INLINE_BODY_BYTES)).toBytes(),
    secretCacheTtl: props.secretCacheTtl ?? Duration.seconds(Defaults.SECRET_CACHE_SECONDS),
    sweepAfter: sweepAfterOf(props),
    sweepBatchSize: props.sweepBatchSize ?? Defaults.SWEEP_BATCH_SIZE,
    pollBatchSize: props.pollBatchSize ?? Defaults.POLL_BATCH_SIZE,
    deadlineWarning: props.deadlineWarning ?? Duration.seconds(Defaults.DEADLINE_WARNING_SECONDS),
    processorBatchSize: props.processorBatchSize ?? Defaults.PROCESSOR_BATCH_SIZE,
    processorMaxConcurrency: props.processorMaxConcurrency ?? Defaults.PROCESSOR_MAX_CONCURRENCY,
    throttle: props.throttle ?? { rateLimit: Defaults.THROTTLE_RATE_LIMIT, burstLimit: Defaults.THROTTLE_BURST_LIMIT },
    reconcileSchedule: props.reconcileSchedule ?? events.Schedule.rate(Duration.minutes(Defaults.SWEEP_EVERY_MINUTES)),
    publishEvents: props.publishEvents ?? true,
    rejectionRecordsPerMinute: props.rejectionRecordsPerMinute ?? Defaults.REJECTION_RECORDS_PER_MINUTE,
    rejectionRecordSamplePercent: props.rejectionRecordSamplePercent ?? Defaults.REJECTION_SAMPLE_PERCENT,
    rejectionRecordRetention: props.rejectionRecordRetention ?? Duration.days(Defaults.REJECTION_RETENTION_DAYS),
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

/** How long a row waits unprocessed before the reconciler enqueues it again; validation needs it too. */
export function sweepAfterOf(props: WebhookInboxProps): Duration {
  return props.sweepAfter ?? Duration.seconds(Defaults.SWEEP_AFTER_SECONDS);
}

/** How long the new dead-letter queue keeps a message. */
export function deadLetterRetentionOf(props: WebhookInboxProps): Duration {
  return props.deadLetterQueueProps?.retentionPeriod ?? Duration.days(Defaults.DEAD_LETTER_RETENTION_DAYS);
}
