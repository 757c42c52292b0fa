import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { MonitoringDefaults } from './contract';
import type { IWebhookInbox } from './inbox-interface';
import { InboxAlarm, WebhookInboxAlarmOptions } from './monitoring-options';
import { defaultReconcilerSilence, silencePeriods, validateAlarmOptions } from './private/alarm-options';

/** Properties of WebhookInboxAlarms. */
export interface WebhookInboxAlarmsProps extends WebhookInboxAlarmOptions {
  /** The inbox to watch. */
  readonly inbox: IWebhookInbox;
}

/** Where the runbook lives; every alarm description names its section. */
const RUNBOOK = 'docs/RUNBOOK.md';

/** The runbook section (anchor) of each alarm. */
const RUNBOOK_SECTION: Readonly<Record<InboxAlarm, string>> = {
  [InboxAlarm.DEAD_DELIVERIES]: 'dead-deliveries',
  [InboxAlarm.SIGNATURE_FAILURES]: 'signature-failures',
  [InboxAlarm.QUARANTINED_DUPLICATES]: 'quarantined-duplicates',
  [InboxAlarm.OVERDUE_SUBMISSIONS]: 'overdue-submissions',
  [InboxAlarm.SUBMISSIONS_NEAR_DEADLINE]: 'submissions-near-deadline',
  [InboxAlarm.OLDEST_MESSAGE_AGE]: 'oldest-message-age',
  [InboxAlarm.VERIFIER_SERVER_ERRORS]: 'verifier-server-errors',
  [InboxAlarm.RECONCILER_ERRORS]: 'reconciler-errors',
  [InboxAlarm.RECONCILER_NOT_RUNNING]: 'reconciler-not-running',
  [InboxAlarm.QUEUE_DELAY]: 'queue-delay',
  [InboxAlarm.ROTATION_FAILURES]: 'rotation-failures',
  [InboxAlarm.SWEEP_LAG]: 'sweep-lag',
  [InboxAlarm.RECOVERY_STALLED]: 'recovery-stalled',
};

/**
 * The alarms of a WebhookInbox, one per failure that needs a human, each with a runbook section
 * (`docs/RUNBOOK.md`) named in its description. Count alarms treat missing data as not
 * breaching (no data means nothing happened); periods and statistics are explicit.
 *
 * Dead deliveries are watched twice, because a dead-letter queue drained before CloudWatch samples
 * it (by a redrive, a script, or a consumer) never shows a depth: `deadLetterQueueDepth` watches
 * the queue and `deadLettered` the processor's own count of rows it dead-lettered. The composite
 * `deadDeliveries` is in ALARM while either is, and is the one that notifies.
 */
export class WebhookInboxAlarms extends Construct {
  /** Composite: the dead-letter queue holds a message, or the processor dead-lettered a row (notifies). */
  public readonly deadDeliveries?: cloudwatch.CompositeAlarm;
  /** The dead-letter queue holds a message (`ApproximateNumberOfMessagesVisible` ≥ 1); part of `deadDeliveries`, no action of its own. */
  public readonly deadLetterQueueDepth?: cloudwatch.Alarm;
  /** The processor dead-lettered a row (`DeadLettered` ≥ 1); part of `deadDeliveries`, no action of its own. */
  public readonly deadLettered?: cloudwatch.Alarm;
  /** Requests refused at the authenticity check reached `signatureFailureThreshold` within 5 minutes. */
  public readonly signatureFailures?: cloudwatch.Alarm;
  /** An altered duplicate was quarantined. */
  public readonly quarantinedDuplicates?: cloudwatch.Alarm;
  /** The oldest work message is older than `maxMessageAge`. */
  public readonly oldestMessageAge?: cloudwatch.Alarm;
  /** The endpoint answered 5xx `verifierServerErrorThreshold` times within 5 minutes. */
  public readonly verifierServerErrors?: cloudwatch.Alarm;
  /** The reconciler failed. */
  public readonly reconcilerErrors?: cloudwatch.Alarm;
  /** The reconciler was not invoked within `maxReconcilerSilence`. */
  public readonly reconcilerNotRunning?: cloudwatch.Alarm;
  /** The p99 queue delay (receipt to the first processing attempt) reached `maxQueueDelay` over 5 minutes. */
  public readonly queueDelay?: cloudwatch.Alarm;
  /** Secrets Manager reported a failed rotation of a signing secret (or a failed test of the rotation function); only when a provider has `rotation`. */
  public readonly rotationFailures?: cloudwatch.Alarm;
  /** The sweep's watermark lagged its cutoff by `maxSweepLag` or more at the end of a reconciler run. */
  public readonly sweepLag?: cloudwatch.Alarm;
  /** Every alarm created, composite included, for an alarm status widget or a monitoring facade. */
  public readonly all: cloudwatch.IAlarm[];

  private recoveryStalledAlarm?: cloudwatch.Alarm;
  /** Creates the recovery alarm, once; unset while alarms are off or it is disabled. */
  private watchRecoveryOnce?: (stalledAfter: Duration) => void;

  private readonly inboxName: string;
  private readonly stackName: string;
  private readonly inboxPath: string;
  private overdueSubmissionsAlarm?: cloudwatch.Alarm;
  private submissionsNearDeadlineAlarm?: cloudwatch.Alarm;
  /** Creates the submission alarms, once; unset while alarms are off. */
  private watchSubmissionsOnce?: () => void;

  constructor(scope: Construct, id: string, props: WebhookInboxAlarmsProps) {
    super(scope, id);
    const inbox = props.inbox;
    validateAlarmOptions(this, props, inbox.reconcileSchedule, Object.values(InboxAlarm));
    this.inboxName = inbox.inboxName;
    this.stackName = Stack.of(inbox).stackName;
    this.inboxPath = inbox.node.path;
    const alarms: cloudwatch.IAlarm[] = [];
    this.all = alarms;
    if (props.enabled === false) return;

    const wanted = (alarm: InboxAlarm) => !(props.disabled ?? []).includes(alarm);
    const action = props.topic ? new SnsAction(props.topic) : undefined;
    /** An alarm that pages: it notifies the topic (if any) and is listed in `all`. */
    const paging = <T extends cloudwatch.AlarmBase>(alarm: T): T => {
      if (action) alarm.addAlarmAction(action);
      alarms.push(alarm);
      return alarm;
    };
    /** The alarm of one metric, unless disabled; its settings are looked up only when it is created. */
    const metricAlarm = (kind: keyof typeof METRIC_ALARMS) => (wanted(kind) ? paging(this.alarm(kind, METRIC_ALARMS[kind](inbox, props))) : undefined);
    if (props.topic?.masterKey) {
      // CloudWatch publishes to an encrypted topic only if its key lets CloudWatch use it.
      props.topic.masterKey.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    }

    if (wanted(InboxAlarm.DEAD_DELIVERIES)) {
      const children: cloudwatch.Alarm[] = [];
      const depth = inbox.metricDeadLetterQueueDepth({ statistic: 'Maximum', period: Duration.minutes(1) });
      if (depth) {
        this.deadLetterQueueDepth = this.alarm(InboxAlarm.DEAD_DELIVERIES, {
          id: 'DeadLetterQueueDepth',
          metric: depth,
          what: 'the dead-letter queue holds a work message that exhausted its retries',
          threshold: 1,
        });
        children.push(this.deadLetterQueueDepth);
      }
      this.deadLettered = this.alarm(InboxAlarm.DEAD_DELIVERIES, {
        id: 'DeadLettered',
        metric: inbox.metricDeadLettered({ statistic: 'Sum', period: Duration.minutes(1) }),
        what: 'the processor dead-lettered a row (its last allowed attempt failed); seen even if the dead-letter queue was drained before it was sampled',
        threshold: 1,
      });
      children.push(this.deadLettered);
      alarms.push(...children);
      this.deadDeliveries = new cloudwatch.CompositeAlarm(this, 'DeadDeliveries', {
        alarmDescription: this.description(
          InboxAlarm.DEAD_DELIVERIES,
          'a delivery exhausted its retries (dead-letter queue not empty, or a row dead-lettered)',
        ),
        alarmRule: cloudwatch.AlarmRule.anyOf(...children.map((child) => cloudwatch.AlarmRule.fromAlarm(child, cloudwatch.AlarmState.ALARM))),
      });
      paging(this.deadDeliveries);
    }

    this.signatureFailures = metricAlarm(InboxAlarm.SIGNATURE_FAILURES);
    this.quarantinedDuplicates = metricAlarm(InboxAlarm.QUARANTINED_DUPLICATES);
    // Only an inbox with a submission ledger has submissions to be overdue: created by watchSubmissions().
    this.watchSubmissionsOnce = () => {
      this.watchSubmissionsOnce = undefined;
      this.overdueSubmissionsAlarm = metricAlarm(InboxAlarm.OVERDUE_SUBMISSIONS);
      this.submissionsNearDeadlineAlarm = metricAlarm(InboxAlarm.SUBMISSIONS_NEAR_DEADLINE);
    };
    this.oldestMessageAge = metricAlarm(InboxAlarm.OLDEST_MESSAGE_AGE);
    this.verifierServerErrors = metricAlarm(InboxAlarm.VERIFIER_SERVER_ERRORS);
    this.reconcilerErrors = metricAlarm(InboxAlarm.RECONCILER_ERRORS);
    this.reconcilerNotRunning = metricAlarm(InboxAlarm.RECONCILER_NOT_RUNNING);
    this.queueDelay = metricAlarm(InboxAlarm.QUEUE_DELAY);

    const rotationFailures = inbox.metricRotationFailures({ statistic: 'Maximum', period: Duration.minutes(5) });
    if (rotationFailures && wanted(InboxAlarm.ROTATION_FAILURES)) {
      this.rotationFailures = paging(
        this.alarm(InboxAlarm.ROTATION_FAILURES, {
          id: 'RotationFailures',
          metric: rotationFailures,
          what: 'Secrets Manager failed to rotate a signing secret, or to test the rotation function at a deploy; the report waits in the rotation failure queue until removed',
          threshold: 1,
        }),
      );
    }
    this.sweepLag = metricAlarm(InboxAlarm.SWEEP_LAG);
    if (wanted(InboxAlarm.RECOVERY_STALLED)) {
      this.watchRecoveryOnce = (stalledAfter) => {
        this.watchRecoveryOnce = undefined;
        this.recoveryStalledAlarm = paging(
          this.alarm(InboxAlarm.RECOVERY_STALLED, {
            id: 'RecoveryStalled',
            metric: inbox.metricRecoveryStalled({ statistic: 'Maximum', period: Duration.minutes(5) }),
            what: `a provider recovered from its own event log (GitHub, Stripe) has had no complete run for ${stalledAfter.toHumanString()} or more: its API refuses the credentials, fails, rate-limits every run, or its hook is gone; deliveries it gave up on are not recovered meanwhile`,
            threshold: stalledAfter.toSeconds(),
          }),
        );
      };
    }
  }

  /** A provider recovered from its event log has had no complete run for its `polling.stalledAfter`; only once `watchRecovery()` ran. */
  public get recoveryStalled(): cloudwatch.Alarm | undefined {
    return this.recoveryStalledAlarm;
  }

  /**
   * Adds the alarm on recoveries from providers' event logs (unless disabled), once, at the
   * shortest `stalledAfter`. The inbox calls it when it recovers GitHub or Stripe.
   */
  public watchRecovery(stalledAfter: Duration): void {
    this.watchRecoveryOnce?.(stalledAfter);
  }

  /** A recorded submission is overdue: past its horizon without a result; only once `watchSubmissions()` ran. */
  public get overdueSubmissions(): cloudwatch.Alarm | undefined {
    return this.overdueSubmissionsAlarm;
  }

  /** A recorded submission is within its deadline's warning margin, still unread; only once `watchSubmissions()` ran. */
  public get submissionsNearDeadline(): cloudwatch.Alarm | undefined {
    return this.submissionsNearDeadlineAlarm;
  }

  /**
   * Adds the alarms on recorded submissions (`overdueSubmissions`, `submissionsNearDeadline`, unless
   * disabled), once. The inbox calls it when a provider polls and in `grantRecordSubmission`; an
   * inbox without a submission ledger has no submission to watch, so it has neither alarm.
   */
  public watchSubmissions(): void {
    this.watchSubmissionsOnce?.();
  }

  /** One metric alarm: a single datapoint decides unless told more periods, missing data is not breaching unless told. */
  private alarm(kind: InboxAlarm, spec: MetricAlarmSpec): cloudwatch.Alarm {
    return new cloudwatch.Alarm(this, spec.id, {
      metric: spec.metric,
      alarmDescription: this.description(kind, spec.what),
      threshold: spec.threshold,
      comparisonOperator: spec.comparisonOperator ?? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: spec.evaluationPeriods ?? 1,
      datapointsToAlarm: spec.evaluationPeriods ?? 1,
      treatMissingData: spec.treatMissingData ?? cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  private description(kind: InboxAlarm, what: string): string {
    return (
      `Webhook inbox ${this.inboxName}: ${what}. ` +
      `Runbook: see ${RUNBOOK}#${RUNBOOK_SECTION[kind]} (cdk-webhook-inbox). ` +
      // --inbox always: the CLI demands it once a stack holds a second inbox, which may be added after this one.
      `Start with: npx webhook-inbox status --stack ${shellWord(this.stackName)} --inbox ${shellWord(this.inboxPath)}`
    );
  }
}

/** `word` as one shell argument: quoted when it holds anything beyond a path's usual characters. */
function shellWord(word: string): string {
  return /^[\w./:@-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** One metric alarm: its construct id, the metric, what it means, and when it fires (at or above the threshold unless told). */
interface MetricAlarmSpec {
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
const METRIC_ALARMS: Readonly<
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
};
