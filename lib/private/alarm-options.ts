import { Duration, Token } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import { IConstruct } from 'constructs';
import { Limits, MonitoringDefaults } from '../contract';
import type { WebhookInboxAlarmOptions } from '../monitoring-options';
import { rateSeconds } from './schedule-rate';
import { ValidationError } from './validation-error';

/** No message is older than SQS keeps one: a greater age can never be reached. */
const MAX_MESSAGE_AGE_SECONDS = Limits.SQS_RETENTION_DAYS * 24 * 3600;
/** The greatest `maxQueueDelay` accepted. */
const MAX_QUEUE_DELAY_MS = Limits.MAX_QUEUE_DELAY_HOURS * 3600 * 1000;
const MAX_ALARM_PERIOD_SECONDS = Limits.ALARM_PERIOD_DAYS * 24 * 3600;

/** An hour, or three runs of a slower schedule: a single late or failed trigger does not page. */
export function defaultReconcilerSilence(schedule: events.Schedule): Duration {
  const rate = rateSeconds(schedule);
  const seconds = Math.max(MonitoringDefaults.RECONCILER_SILENCE_SECONDS, rate === undefined ? 0 : MonitoringDefaults.RECONCILER_SILENCE_RUNS * rate);
  return Duration.seconds(Math.min(seconds, MAX_ALARM_PERIOD_SECONDS));
}

/**
 * The periods of an alarm on a silence: short ones, as many as the silence holds, all of which
 * must breach. CloudWatch looks past missing periods to the latest real datapoints, so one period
 * as long as the silence fires only when its whole evaluation range (about three such periods) is
 * empty, hours late; and it sees a run only once the period holding it is complete, so a long
 * period keeps the alarm up long after the first run of a new deploy. Minute periods (hours past
 * a day, where CloudWatch allows at most a day of minute periods) fire once the silence is
 * complete and clear a minute after a run.
 */
export function silencePeriods(silence: Duration): { period: Duration; evaluationPeriods: number } {
  /** The longest evaluation range of one-minute periods CloudWatch accepts (evaluation periods × period). */
  const minutePeriodsSeconds = 86_400;
  const period = silence.toSeconds() <= minutePeriodsSeconds ? Duration.minutes(1) : Duration.hours(1);
  return { period, evaluationPeriods: Math.ceil(silence.toSeconds() / period.toSeconds()) };
}

/**
 * Collects every problem with the alarm options (`alarms` names `known`) and throws them in one
 * error naming each option. Unresolved tokens are not checked.
 */
export function validateAlarmOptions(scope: IConstruct, options: WebhookInboxAlarmOptions, reconcileSchedule: events.Schedule, known: readonly string[]): void {
  const problems: string[] = [];
  const positive = (name: string, value: number | undefined) => {
    if (value === undefined || Token.isUnresolved(value)) return;
    if (!Number.isFinite(value) || value <= 0) problems.push(`alarms.${name}: must be a positive number, got ${value}`);
  };
  positive('signatureFailureThreshold', options.signatureFailureThreshold);
  positive('quarantinedThreshold', options.quarantinedThreshold);
  positive('overdueSubmissionThreshold', options.overdueSubmissionThreshold);
  positive('nearDeadlineThreshold', options.nearDeadlineThreshold);
  positive('verifierServerErrorThreshold', options.verifierServerErrorThreshold);
  positive('reconcilerErrorThreshold', options.reconcilerErrorThreshold);
  const age = options.maxMessageAge;
  if (age && !Token.isUnresolved(age.toSeconds())) {
    const seconds = age.toSeconds();
    if (seconds < 60 || seconds > MAX_MESSAGE_AGE_SECONDS) {
      problems.push(`alarms.maxMessageAge: must be from 1 minute to ${Limits.SQS_RETENTION_DAYS} days, got ${age.toHumanString()}`);
    }
  }
  const delay = options.maxQueueDelay;
  if (delay && !Token.isUnresolved(delay.toMilliseconds())) {
    const ms = delay.toMilliseconds();
    if (ms < 1000 || ms > MAX_QUEUE_DELAY_MS) {
      problems.push(`alarms.maxQueueDelay: must be from 1 second to ${Duration.millis(MAX_QUEUE_DELAY_MS).toHumanString()}, got ${delay.toHumanString()}`);
    }
  }
  // Below a minute, a run's own steps would page: the lag at a run's end is about its last step's length.
  const lag = options.maxSweepLag;
  if (lag && !Token.isUnresolved(lag.toSeconds()) && lag.toSeconds() < 60) {
    problems.push(`alarms.maxSweepLag: must be at least 1 minute, got ${lag.toHumanString()}`);
  }
  const silence = options.maxReconcilerSilence;
  if (silence && !Token.isUnresolved(silence.toSeconds())) {
    const seconds = silence.toSeconds();
    const rate = rateSeconds(reconcileSchedule);
    if (seconds % 60 !== 0 || seconds < 120 || seconds > MAX_ALARM_PERIOD_SECONDS) {
      problems.push(
        `alarms.maxReconcilerSilence: must be a whole number of minutes from 2 minutes to ${Limits.ALARM_PERIOD_DAYS} days, got ${silence.toHumanString()}`,
      );
    } else if (rate !== undefined && seconds < 2 * rate) {
      problems.push(
        `alarms.maxReconcilerSilence: must be at least twice the reconcile schedule's rate (${reconcileSchedule.expressionString}), got ${silence.toHumanString()}`,
      );
    }
  }
  for (const alarm of options.disabled ?? []) {
    if (!known.includes(alarm)) problems.push(`alarms.disabled: unknown alarm "${alarm}"`);
  }
  if (problems.length > 0) {
    throw new ValidationError(`Invalid WebhookInbox alarms:\n- ${problems.join('\n- ')}`, scope);
  }
}
