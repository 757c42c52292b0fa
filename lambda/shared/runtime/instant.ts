/**
 * Instants as providers write them (`task.createdAt`, Echonova's `createdAt`), read strictly and
 * normalized to one fixed-width UTC text, so that comparing two texts compares two times. The
 * text never goes through `Date` with its fraction: `Date` keeps milliseconds only, and two tasks
 * created within one millisecond would compare equal.
 */

/** `YYYY-MM-DDTHH:MM:SS`, an optional fraction of up to 9 digits, then `Z` or `±hh:mm`. */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;
const FRACTION_DIGITS = 9;

/**
 * The instant `value` names, as `YYYY-MM-DDTHH:MM:SS.fffffffffZ` (UTC, 9 fraction digits), or
 * undefined unless it is an ISO-8601 date and time of a real calendar day with a zone: numbers,
 * zone-less times, Feb 30, hour 24 and leap seconds are refused, not guessed at.
 */
export function parseInstant(value: unknown): string | undefined {
  const match = typeof value === 'string' ? ISO_INSTANT.exec(value) : null;
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const [sign, offsetHours, offsetMinutes] = [match[8], Number(match[9] ?? 0), Number(match[10] ?? 0)];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offset = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  // Whole seconds through Date (exact), the fraction beside it as text.
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute - offset, second, 0);
  return formatInstant(utc, (match[7] ?? '').padEnd(FRACTION_DIGITS, '0'));
}

/** Unix seconds in the same normalized form. */
export function instantOfUnixSeconds(seconds: number): string | undefined {
  return formatInstant(new Date(seconds * 1000), '0'.repeat(FRACTION_DIGITS));
}

/** `YYYY-MM-DDTHH:MM:SS.<fraction>Z`, or undefined outside the four-digit years. */
function formatInstant(utc: Date, fraction: string): string | undefined {
  const year = utc.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return undefined;
  return `${utc.toISOString().slice(0, 19)}.${fraction}Z`;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
