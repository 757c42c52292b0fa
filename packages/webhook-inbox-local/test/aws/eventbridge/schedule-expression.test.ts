import { parseScheduleExpression, ScheduleExpressionError } from '../../../src/aws/eventbridge/schedule-expression';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The next firing of `expression` strictly after `after`, as an ISO time. */
function nextAfter(expression: string, after: string): string {
  const next = parseScheduleExpression(expression).nextAfter(Date.parse(after));
  return Number.isFinite(next) ? new Date(next).toISOString() : String(next);
}

function refusal(expression: string): ScheduleExpressionError {
  try {
    parseScheduleExpression(expression);
  } catch (error) {
    if (error instanceof ScheduleExpressionError) return error;
    throw error;
  }
  throw new Error(`expected ${expression} to be refused`);
}

describe('rate expressions', () => {
  test.each([
    ['rate(1 minute)', MINUTE],
    ['rate(5 minutes)', 5 * MINUTE],
    ['rate(1 hour)', HOUR],
    ['rate(12 hours)', 12 * HOUR],
    ['rate(1 day)', DAY],
    ['rate(2 days)', 2 * DAY],
  ])('%s has a period of %d ms', (expression, periodMs) => {
    const schedule = parseScheduleExpression(expression);
    expect(schedule.kind).toBe('rate');
    expect(schedule.kind === 'rate' && schedule.periodMs).toBe(periodMs);
  });

  test('fires one period after the time it is asked about', () => {
    expect(nextAfter('rate(5 minutes)', '2026-12-01T12:00:30.000Z')).toBe('2026-12-01T12:05:30.000Z');
  });
});

describe('cron expressions', () => {
  test('every day at noon: strictly after noon is the next day', () => {
    expect(nextAfter('cron(0 12 * * ? *)', '2026-12-01T12:00:00Z')).toBe('2026-12-02T12:00:00.000Z');
    expect(nextAfter('cron(0 12 * * ? *)', '2026-12-01T11:59:30Z')).toBe('2026-12-01T12:00:00.000Z');
  });

  test('every 15 minutes on weekdays (2026-12-01 is a Tuesday, 2026-12-04 a Friday)', () => {
    expect(nextAfter('cron(0/15 * ? * MON-FRI *)', '2026-12-01T10:07:00Z')).toBe('2026-12-01T10:15:00.000Z');
    expect(nextAfter('cron(0/15 * ? * MON-FRI *)', '2026-12-01T10:15:00Z')).toBe('2026-12-01T10:30:00.000Z');
    expect(nextAfter('cron(0/15 * ? * MON-FRI *)', '2026-12-04T23:45:00Z')).toBe('2026-12-07T00:00:00.000Z');
  });

  test('L in Day-of-month: the last day of each month, leap years included', () => {
    expect(nextAfter('cron(0 10 L * ? *)', '2026-02-10T00:00:00Z')).toBe('2026-02-28T10:00:00.000Z');
    expect(nextAfter('cron(0 10 L * ? *)', '2028-02-01T00:00:00Z')).toBe('2028-02-29T10:00:00.000Z');
    expect(nextAfter('cron(0 10 L * ? *)', '2026-12-31T10:00:00Z')).toBe('2027-01-31T10:00:00.000Z');
  });

  test('# in Day-of-week: the first Monday of each month (2026-12-07, 2027-01-04)', () => {
    expect(nextAfter('cron(0 8 ? * 2#1 *)', '2026-12-01T00:00:00Z')).toBe('2026-12-07T08:00:00.000Z');
    expect(nextAfter('cron(0 8 ? * 2#1 *)', '2026-12-07T08:00:00Z')).toBe('2027-01-04T08:00:00.000Z');
  });

  test('W in Day-of-month: the weekday nearest the day, within the month', () => {
    // 2026-08-15 is a Saturday, 2026-11-15 a Sunday.
    expect(nextAfter('cron(0 9 15W * ? *)', '2026-08-01T00:00:00Z')).toBe('2026-08-14T09:00:00.000Z');
    expect(nextAfter('cron(0 9 15W * ? *)', '2026-11-01T00:00:00Z')).toBe('2026-11-16T09:00:00.000Z');
    // 2026-08-01 is a Saturday: the nearest weekday in August is Monday the 3rd.
    expect(nextAfter('cron(0 9 1W * ? *)', '2026-07-02T00:00:00Z')).toBe('2026-08-03T09:00:00.000Z');
    // 2026-05-31 is a Sunday: the nearest weekday in May is Friday the 29th; June has no 31st.
    expect(nextAfter('cron(0 9 31W * ? *)', '2026-05-01T00:00:00Z')).toBe('2026-05-29T09:00:00.000Z');
    expect(nextAfter('cron(0 9 31W * ? *)', '2026-06-01T00:00:00Z')).toBe('2026-07-31T09:00:00.000Z');
  });

  test('nL in Day-of-week: the last such weekday of the month (Friday 2026-12-25)', () => {
    expect(nextAfter('cron(0 18 ? * 6L *)', '2026-12-01T00:00:00Z')).toBe('2026-12-25T18:00:00.000Z');
    expect(nextAfter('cron(0 18 ? * FRIL *)', '2026-12-01T00:00:00Z')).toBe('2026-12-25T18:00:00.000Z');
  });

  test('L alone in Day-of-week is Saturday, the last day of the week (2026-12-05)', () => {
    expect(nextAfter('cron(0 0 ? * L *)', '2026-12-01T00:00:00Z')).toBe('2026-12-05T00:00:00.000Z');
  });

  test('weekdays are numbered 1 for Sunday to 7 for Saturday', () => {
    expect(nextAfter('cron(0 0 ? * 1,7 *)', '2026-12-01T00:00:00Z')).toBe('2026-12-05T00:00:00.000Z');
    expect(nextAfter('cron(0 0 ? * 1 *)', '2026-12-01T00:00:00Z')).toBe('2026-12-06T00:00:00.000Z');
  });

  test('month names and lists', () => {
    expect(nextAfter('cron(0 0 1 JAN,JUL ? *)', '2026-12-01T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(nextAfter('cron(0 0 1 JAN,JUL ? *)', '2027-01-01T00:00:00Z')).toBe('2027-07-01T00:00:00.000Z');
  });

  test('steps over * and over a range', () => {
    expect(nextAfter('cron(30 */6 * * ? *)', '2026-12-01T06:31:00Z')).toBe('2026-12-01T12:30:00.000Z');
    expect(nextAfter('cron(5-20/5 3 * * ? *)', '2026-12-01T03:12:00Z')).toBe('2026-12-01T03:15:00.000Z');
    expect(nextAfter('cron(5-20/5 3 * * ? *)', '2026-12-01T03:20:00Z')).toBe('2026-12-02T03:05:00.000Z');
  });

  test('the Year field bounds the schedule: none after the last year', () => {
    expect(nextAfter('cron(0 0 1 1 ? 2027)', '2026-06-01T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(nextAfter('cron(0 0 1 1 ? 2027)', '2027-01-01T00:00:00Z')).toBe('Infinity');
  });

  test('a date no month has never fires', () => {
    expect(nextAfter('cron(0 0 30 FEB ? *)', '2026-01-01T00:00:00Z')).toBe('Infinity');
  });
});

describe('malformed expressions', () => {
  test.each([
    ['rate(1 minutes)', 'unit'],
    ['rate(5 minute)', 'unit'],
    ['rate(2 weeks)', 'unit'],
    ['rate(0 minutes)', 'value'],
    ['rate(1.5 hours)', 'value'],
    ['rate(5minutes)', 'rate'],
    ['every 5 minutes', 'expression'],
    ['cron(0 12 * * ?)', 'cron'],
    ['cron(0  12 * * ? *)', 'cron'],
    ['cron(0 12 * * * *)', 'Day-of-month and Day-of-week'],
    ['cron(0 12 ? * ? *)', 'Day-of-month and Day-of-week'],
    ['cron(60 12 * * ? *)', 'Minutes'],
    ['cron(0 24 * * ? *)', 'Hours'],
    ['cron(0 12 32 * ? *)', 'Day-of-month'],
    ['cron(0 12 L,15 * ? *)', 'Day-of-month'],
    ['cron(0 12 * FOO ? *)', 'Month'],
    ['cron(0 12 * 13 ? *)', 'Month'],
    ['cron(0 12 ? * 8 *)', 'Day-of-week'],
    ['cron(0 12 ? * 2#6 *)', 'Day-of-week'],
    ['cron(0 12 ? * FRI-MON *)', 'Day-of-week'],
    ['cron(0/0 12 * * ? *)', 'Minutes'],
    ['cron(0 12 * * ? 1969)', 'Year'],
  ])('%s is refused, naming %s', (expression, field) => {
    const error = refusal(expression);
    expect(error.field).toBe(field);
    expect(error.expression).toBe(expression);
    expect(error.message).toContain(expression);
    expect(error.message).toContain(field);
  });

  test('the message says what is wrong', () => {
    expect(() => parseScheduleExpression('rate(1 minutes)')).toThrow(
      'Invalid schedule expression "rate(1 minutes)": unit must be "minute" for a value of 1, not "minutes"',
    );
  });
});
