import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { InboxAlarm } from './inbox-alarm';
import type { IWebhookInbox } from './inbox-interface';
import { validateAlarmOptions } from './private/alarm-options';
import { METRIC_ALARMS, MetricAlarmSpec } from './private/metric-alarms';
import type { WebhookInboxAlarmOptions } from './monitoring-options';

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
  [InboxAlarm.CIRCUIT_BREAKER_OPEN]: 'circuit-breaker-open',
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
  /** The circuit breaker was open or probing at a reconciler run (`BreakerOpen` ≥ 1); back to OK at the first run that finds it closed. */
  public readonly breakerOpen?: cloudwatch.Alarm;
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
    this.breakerOpen = metricAlarm(InboxAlarm.CIRCUIT_BREAKER_OPEN);
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
