import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { MonitoringDefaults } from '../contract';
import { InboxAlarm } from '../inbox-alarm';
import type { IWebhookInbox } from '../inbox-interface';
import type { WebhookInboxAlarmOptions } from '../monitoring-options';
import { defaultReconcilerSilence, silencePeriods } from './alarm-options';

/** One metric alarm: its construct id, the metric, what it means, and when it fires (at or above the threshold unless told). */
export interface MetricAlarmSpec {
  readonly id: string;
  readonly metric: cloudwatch.IMetric;
  readonly what: string;
  readonly threshold: number;
  readonly comparisonOperator?: cloudwatch.ComparisonOperator;
  readonly treatMissingData?: cloudwatch.TreatMissingData;
  /** Periods that must all breach (each missing one counting as breaching when told). @default 1 */
  readonly evaluationPeriods?: number;
}

/** The alarms on one metric of the inbox, each from the inbox and the options. */
export const METRIC_ALARMS: Readonly<
  Record<
    Exclude<InboxAlarm, InboxAlarm.DEAD_DELIVERIES | InboxAlarm.ROTATION_FAILURES | InboxAlarm.RECOVERY_STALLED>,
    (inbox: IWebhookInbox, options: WebhookInboxAlarmOptions) => MetricAlarmSpec
  >
> = {
  [InboxAlarm.SIGNATURE_FAILURES]: (inbox, options) => ({
    id: 'SignatureFailures',
    metric: inbox.metricSignatureFailures({ statistic: 'Sum', period: Duration.minutes(5) }),
    what: 'requests refused at the authenticity check: a signature matching no valid secret, a missing or garbled signature, timestamp or id header, a stale timestamp (a rotation out of order, or probing)',
    threshold: options.signatureFailureThreshold ?? MonitoringDefaults.SIGNATURE_FAILURE_THRESHOLD,
  }),
  [InboxAlarm.QUARANTINED_DUPLICATES]: (inbox, options) => ({
    id: 'QuarantinedDuplicates',
    metric: inbox.metricQuarantined({ statistic: 'Sum', period: Duration.minutes(5) }),
    what: 'a known event id arrived again with a different body; the original is kept, the copy quarantined',
    threshold: options.quarantinedThreshold ?? MonitoringDefaults.QUARANTINED_THRESHOLD,
  }),
  [InboxAlarm.OVERDUE_SUBMISSIONS]: (inbox, options) => ({
    id: 'OverdueSubmissions',
    metric: inbox.metricOverdueSubmissions({ statistic: 'Maximum', period: Duration.minutes(15) }),
    what: "recorded submissions are past their provider's lifecycle horizon with no result",
    threshold: options.overdueSubmissionThreshold ?? MonitoringDefaults.OVERDUE_SUBMISSION_THRESHOLD,
  }),
  [InboxAlarm.SUBMISSIONS_NEAR_DEADLINE]: (inbox, options) => ({
    id: 'SubmissionsNearDeadline',
    metric: inbox.metricSubmissionsNearDeadline({ statistic: 'Maximum', period: Duration.minutes(5) }),
    what: "recorded submissions are within their deadline's warning margin and their result is still unread: the provider's resource disappears at the deadline",
    threshold: options.nearDeadlineThreshold ?? MonitoringDefaults.NEAR_DEADLINE_THRESHOLD,
  }),
  [InboxAlarm.OLDEST_MESSAGE_AGE]: (inbox, options) => {
    const maxAge = options.maxMessageAge ?? Duration.minutes(MonitoringDefaults.MAX_MESSAGE_AGE_MINUTES);
    return {
      id: 'OldestMessageAge',
      metric: inbox.metricOldestMessageAge({ statistic: 'Maximum', period: Duration.minutes(5) }),
      what: `the oldest work message has waited ${maxAge.toHumanString()} or more: processing is stalled or behind`,
      threshold: maxAge.toSeconds(),
    };
  },
  [InboxAlarm.VERIFIER_SERVER_ERRORS]: (inbox, options) => ({
    id: 'VerifierServerErrors',
    metric: inbox.metricVerifierServerErrors({ statistic: 'Sum', period: Duration.minutes(5) }),
    what: 'the endpoint answered 5xx: deliveries were not acknowledged and providers must retry (some disable a failing webhook)',
    threshold: options.verifierServerErrorThreshold ?? MonitoringDefaults.VERIFIER_SERVER_ERROR_THRESHOLD,
  }),
  [InboxAlarm.RECONCILER_ERRORS]: (inbox, options) => ({
    id: 'ReconcilerErrors',
    metric: inbox.metricReconcilerErrors({ statistic: 'Sum', period: Duration.minutes(15) }),
    what: 'the reconciler failed: stranded rows are not swept and submissions are not polled',
    threshold: options.reconcilerErrorThreshold ?? MonitoringDefaults.RECONCILER_ERROR_THRESHOLD,
  }),
  [InboxAlarm.RECONCILER_NOT_RUNNING]: (inbox, options) => {
    const silence = options.maxReconcilerSilence ?? defaultReconcilerSilence(inbox.reconcileSchedule);
    const { period, evaluationPeriods } = silencePeriods(silence);
    return {
      id: 'ReconcilerNotRunning',
      metric: inbox.metricReconcilerInvocations({ statistic: 'Sum', period }),
      what: `the reconciler was not invoked for ${silence.toHumanString()}: its schedule is disabled or gone, or it is throttled`,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      // No datapoint at all is exactly the failure this alarm is for.
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      evaluationPeriods,
    };
  },
  [InboxAlarm.QUEUE_DELAY]: (inbox, options) => {
    const maxDelay = options.maxQueueDelay ?? Duration.seconds(MonitoringDefaults.MAX_QUEUE_DELAY_SECONDS);
    return {
      id: 'QueueDelay',
      metric: inbox.metricQueueDelay({ statistic: 'p99', period: Duration.minutes(5) }),
      what: `the p99 time from a delivery's receipt to its first processing attempt reached ${maxDelay.toHumanString()}: the processor is throttled, failing or behind, or the enqueue fails and the sweep carries the rows`,
      threshold: maxDelay.toMilliseconds(),
    };
  },
  [InboxAlarm.SWEEP_LAG]: (inbox, options) => {
    const maxLag = options.maxSweepLag ?? Duration.minutes(MonitoringDefaults.MAX_SWEEP_LAG_MINUTES);
    return {
      id: 'SweepLag',
      metric: inbox.metricSweepLag({ statistic: 'Maximum', period: Duration.minutes(5) }),
      what: `the sweep's watermark lagged its cutoff by ${maxLag.toHumanString()} or more at the end of a reconciler run: the sweep does not keep up with the inbox's rate, and stranded rows are found that much later`,
      threshold: maxLag.toSeconds(),
    };
  },
  [InboxAlarm.CIRCUIT_BREAKER_OPEN]: (inbox) => ({
    id: 'BreakerOpen',
    metric: inbox.metricBreakerOpen({ statistic: 'Maximum', period: Duration.minutes(5) }),
    what: 'the circuit breaker is open: processing failed downstream (effect targets, the processing function, the authoritative read) at a high rate; rows wait without spending attempts, and the breaker probes one at a time',
    threshold: 1,
    // Every reconciler run says open or closed; a period without a run keeps the state it had.
    treatMissingData: cloudwatch.TreatMissingData.IGNORE,
  }),
};
