import { Duration } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { InboxAlarm } from './inbox-alarm';

/** Alarm settings of a WebhookInbox: which alarms, their thresholds and where they notify. */
export interface WebhookInboxAlarmOptions {
  /**
   * Whether any alarm is created; `false` creates none.
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * The topic every alarm notifies when it enters ALARM; an encrypted topic's key is granted to CloudWatch.
   * @default - no notification: the alarms change state only
   */
  readonly topic?: sns.ITopic;

  /**
   * Alarms not to create.
   * @default - none: every alarm is created
   */
  readonly disabled?: InboxAlarm[];

  /**
   * Requests refused at the authenticity check within 5 minutes (`AuthenticationFailed`, sum: bad or
   * missing signatures, garbled signature, timestamp or id headers, stale timestamps) that raise the
   * signature-failure alarm.
   * @default 10
   */
  readonly signatureFailureThreshold?: number;

  /**
   * Altered duplicates quarantined within 5 minutes (`Quarantined`, sum) that raise the quarantine alarm.
   * @default 1
   */
  readonly quarantinedThreshold?: number;

  /**
   * Overdue submissions one reconciler run reports for one provider (`OverdueSubmissions`, maximum over 15 minutes) that raise the overdue alarm.
   * @default 1
   */
  readonly overdueSubmissionThreshold?: number;

  /**
   * Submissions one reconciler run finds within their deadline's warning margin and still unread (`SubmissionsNearDeadline`, maximum over 5 minutes) that raise the near-deadline alarm.
   * @default 1
   */
  readonly nearDeadlineThreshold?: number;

  /**
   * The age of the oldest work message (`ApproximateAgeOfOldestMessage`, maximum over 5 minutes) that raises the backlog alarm.
   * @default Duration.minutes(15)
   */
  readonly maxMessageAge?: Duration;

  /**
   * Responses with a 5xx status within 5 minutes (the HTTP API's `5xx`, sum) that raise the verifier alarm.
   * @default 5
   */
  readonly verifierServerErrorThreshold?: number;

  /**
   * Failed reconciler invocations within 15 minutes (Lambda `Errors`, sum) that raise the reconciler alarm.
   * @default 1
   */
  readonly reconcilerErrorThreshold?: number;

  /**
   * How long the reconciler may go without an invocation (Lambda `Invocations`, sum) before the not-running alarm; a whole number of minutes up to 7 days, at least twice the schedule's rate.
   * @default - 1 hour, or three times the reconcile schedule's rate if that is longer
   */
  readonly maxReconcilerSilence?: Duration;

  /**
   * The p99 over 5 minutes of the time from a delivery's receipt to its first processing attempt (`QueueDelay`) that raises the queue-delay alarm; from 1 second to 12 hours.
   * @default Duration.minutes(2)
   */
  readonly maxQueueDelay?: Duration;

  /**
   * How far the sweep's watermark may lag its cutoff at the end of a reconciler run (`SweepLag`, maximum over 5 minutes) before the sweep-lag alarm; at least 1 minute.
   * @default Duration.minutes(15)
   */
  readonly maxSweepLag?: Duration;
}

/** Dashboard settings of a WebhookInbox. */
export interface WebhookInboxDashboardOptions {
  /**
   * Whether the dashboard is created: $3 a month beyond an account's first three dashboards (docs/COSTS.md).
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * The dashboard's name (unique in the account and region).
   * @default - a name CloudFormation generates
   */
  readonly dashboardName?: string;
}
