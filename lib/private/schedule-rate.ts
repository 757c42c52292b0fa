import * as events from 'aws-cdk-lib/aws-events';

const RATE_UNIT_SECONDS: Readonly<Record<string, number>> = { minute: 60, minutes: 60, hour: 3600, hours: 3600, day: 86400, days: 86400 };

/** The interval of a `rate(...)` schedule in seconds; undefined for a cron expression or a token. */
export function rateSeconds(schedule: events.Schedule): number | undefined {
  const match = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(schedule.expressionString);
  return match ? Number(match[1]) * RATE_UNIT_SECONDS[match[2]] : undefined;
}
