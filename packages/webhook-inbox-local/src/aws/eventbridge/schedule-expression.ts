/**
 * EventBridge schedule expressions, for the local twin's scheduled rules: `rate(value unit)` and
 * the six-field `cron(Minutes Hours Day-of-month Month Day-of-week Year)`, which fires in UTC at
 * whole minutes as a rule's schedule does.
 *
 * Cron fields take `*`, `,`, `-` and `/` (`a/n` and `*` + `/n` from the field's start, `a-b/n`
 * within the range); Day-of-month also `?`, `L` (the month's last day) and `nW` (the weekday
 * nearest day n, within the month); Day-of-week also `?`, `L` (Saturday, the week's last day),
 * `dL` (the month's last weekday d) and `d#n` (its n-th weekday d). Months are 1-12 or JAN-DEC,
 * weekdays 1-7 or SUN-SAT (1 is Sunday), years 1970-2199. Exactly one of Day-of-month and
 * Day-of-week is `?`.
 *
 * Not supported, and refused: ranges that wrap around (`FRI-MON`), `L-n`, `LW`, and `L`, `W` or
 * `#` inside a list.
 */
import { TemplateError } from '../cloudformation/template-error';

/** A rule's schedule expression EventBridge would refuse. */
export class ScheduleExpressionError extends TemplateError {
  override readonly name = 'ScheduleExpressionError';

  constructor(
    readonly expression: string,
    /** The part at fault: `rate`, `value`, `unit`, `cron` or a cron field's name, as `Day-of-week`. */
    readonly field: string,
    reason: string,
  ) {
    super(`Invalid schedule expression "${expression}": ${field} ${reason}`);
  }
}

interface ParsedSchedule {
  readonly expression: string;
  /** The first firing strictly after `ms` (epoch milliseconds); Infinity when there is none. */
  nextAfter(ms: number): number;
}

/** A rate has no calendar anchor: it fires one period after the previous firing (or the rule's creation). */
export interface RateSchedule extends ParsedSchedule {
  readonly kind: 'rate';
  readonly periodMs: number;
}

export interface CronSchedule extends ParsedSchedule {
  readonly kind: 'cron';
}

export type Schedule = RateSchedule | CronSchedule;

/** Parses a rule's ScheduleExpression; throws a ScheduleExpressionError naming the part at fault. */
export function parseScheduleExpression(expression: string): Schedule {
  const rate = /^rate\((.*)\)$/.exec(expression);
  if (rate) return parseRate(expression, rate[1]);
  const cron = /^cron\((.*)\)$/.exec(expression);
  if (cron) return parseCron(expression, cron[1]);
  throw new ScheduleExpressionError(expression, 'expression', 'must be rate(value unit) or cron(Minutes Hours Day-of-month Month Day-of-week Year)');
}

const MINUTE_MS = 60_000;
const UNIT_MS: Readonly<Record<string, number>> = { minute: MINUTE_MS, hour: 60 * MINUTE_MS, day: 24 * 60 * MINUTE_MS };

function parseRate(expression: string, body: string): RateSchedule {
  const fail = (field: string, reason: string) => new ScheduleExpressionError(expression, field, reason);
  const match = /^(\S+) (\S+)$/.exec(body);
  if (!match) throw fail('rate', 'must be "value unit", as rate(5 minutes)');
  const [, valueText, unit] = match;
  if (!/^[1-9]\d*$/.test(valueText)) throw fail('value', `"${valueText}" is not a positive whole number`);
  const value = Number(valueText);
  const singular = unit.endsWith('s') ? unit.slice(0, -1) : unit;
  if (!Object.hasOwn(UNIT_MS, singular)) throw fail('unit', `"${unit}" is not minute(s), hour(s) or day(s)`);
  // EventBridge refuses "1 minutes" and "5 minute".
  const expected = value === 1 ? singular : `${singular}s`;
  if (unit !== expected) throw fail('unit', `must be "${expected}" for a value of ${value}, not "${unit}"`);
  const periodMs = value * UNIT_MS[singular];
  return { kind: 'rate', expression, periodMs, nextAfter: (ms) => ms + periodMs };
}

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Names standing for min, min + 1, ... */
  readonly names?: readonly string[];
}

const MINUTES: FieldSpec = { name: 'Minutes', min: 0, max: 59 };
const HOURS: FieldSpec = { name: 'Hours', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'Day-of-month', min: 1, max: 31 };
const MONTH: FieldSpec = { name: 'Month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] };
const DAY_OF_WEEK: FieldSpec = { name: 'Day-of-week', min: 1, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] };
const YEAR: FieldSpec = { name: 'Year', min: 1970, max: 2199 };
const SATURDAY = 7;
const SUNDAY = 1;

/** Whether a date (month 1-12) is one the Day-of-month or Day-of-week field selects. */
type DayRule = (year: number, month: number, day: number) => boolean;

interface CronFields {
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly months: readonly number[];
  readonly years: readonly number[];
  readonly day: DayRule;
}

type Fail = (field: FieldSpec | string, reason: string) => never;

function parseCron(expression: string, body: string): CronSchedule {
  const fail: Fail = (field, reason) => {
    throw new ScheduleExpressionError(expression, typeof field === 'string' ? field : field.name, reason);
  };
  const texts = body.split(' ');
  if (texts.length !== 6 || texts.includes(''))
    fail('cron', 'must have six fields separated by single spaces: Minutes Hours Day-of-month Month Day-of-week Year');
  const [minutes, hours, dayOfMonth, month, dayOfWeek, year] = texts;
  if (dayOfMonth === '?' && dayOfWeek === '?') fail('Day-of-month and Day-of-week', 'cannot both be ?');
  if (dayOfMonth !== '?' && dayOfWeek !== '?') fail('Day-of-month and Day-of-week', 'cannot both be set: one of them must be ?');
  const fields: CronFields = {
    minutes: parseList(minutes, MINUTES, fail),
    hours: parseList(hours, HOURS, fail),
    months: parseList(month, MONTH, fail),
    years: parseList(year, YEAR, fail),
    day: dayOfMonth === '?' ? parseDayOfWeek(dayOfWeek, fail) : parseDayOfMonth(dayOfMonth, fail),
  };
  return {
    kind: 'cron',
    expression,
    nextAfter: (ms) => {
      if (!Number.isFinite(ms)) throw new RangeError(`nextAfter needs a finite time, not ${ms}`);
      return nextFiring(fields, ms);
    },
  };
}

/** A comma-separated list of values, ranges and steps: the values it selects, ascending. */
function parseList(text: string, spec: FieldSpec, fail: Fail): number[] {
  const values = new Set(text.split(',').flatMap((term) => parseTerm(term, spec, fail)));
  return [...values].sort((a, b) => a - b);
}

function parseTerm(term: string, spec: FieldSpec, fail: Fail): number[] {
  const [rangeText, stepText, ...rest] = term.split('/');
  if (rest.length > 0) fail(spec, `"${term}" has more than one /`);
  const [start, end] = rangeText === '*' ? [spec.min, spec.max] : parseRange(rangeText, spec, fail);
  if (stepText === undefined) return valuesFrom(start, end, 1);
  const span = spec.max - spec.min + 1;
  if (!/^\d+$/.test(stepText) || Number(stepText) < 1 || Number(stepText) > span) fail(spec, `"${term}" needs a step from 1 to ${span}`);
  // "a/n" steps from a to the end of the field; "a-b/n" stays within the range.
  return valuesFrom(start, rangeText.includes('-') ? end : spec.max, Number(stepText));
}

function parseRange(text: string, spec: FieldSpec, fail: Fail): [number, number] {
  const bounds = text.split('-');
  if (bounds.length > 2) fail(spec, `"${text}" is not a value or a range`);
  const [start, end] = [parseValue(bounds[0], spec, fail), parseValue(bounds[bounds.length - 1], spec, fail)];
  if (start > end) fail(spec, `range "${text}" runs backwards`);
  return [start, end];
}

function parseValue(text: string, spec: FieldSpec, fail: Fail): number {
  const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return spec.min + named;
  if (!/^\d+$/.test(text)) fail(spec, `"${text}" is not a ${spec.names ? 'number or a name' : 'number'}`);
  const value = Number(text);
  if (value < spec.min || value > spec.max) fail(spec, `${value} is outside ${spec.min}-${spec.max}`);
  return value;
}

function valuesFrom(start: number, end: number, step: number): number[] {
  const values: number[] = [];
  for (let value = start; value <= end; value += step) values.push(value);
  return values;
}

function parseDayOfMonth(text: string, fail: Fail): DayRule {
  if (text === 'L') return (year, month, day) => day === daysInMonth(year, month);
  const nearest = /^(\d+)W$/.exec(text);
  if (nearest) {
    const target = parseValue(nearest[1], DAY_OF_MONTH, fail);
    return (year, month, day) => day === nearestWeekday(year, month, target);
  }
  const days = new Set(parseList(text, DAY_OF_MONTH, fail));
  return (_year, _month, day) => days.has(day);
}

function parseDayOfWeek(text: string, fail: Fail): DayRule {
  if (text === 'L') return (year, month, day) => weekdayOf(year, month, day) === SATURDAY;
  const last = /^(\w+)L$/.exec(text);
  if (last) {
    const weekday = parseValue(last[1], DAY_OF_WEEK, fail);
    return (year, month, day) => weekdayOf(year, month, day) === weekday && day + 7 > daysInMonth(year, month);
  }
  const nth = /^(\w+)#(\w+)$/.exec(text);
  if (nth) {
    const weekday = parseValue(nth[1], DAY_OF_WEEK, fail);
    if (!/^[1-5]$/.test(nth[2])) fail(DAY_OF_WEEK, `"${text}" needs an occurrence from 1 to 5 after #`);
    const occurrence = Number(nth[2]);
    return (year, month, day) => weekdayOf(year, month, day) === weekday && Math.ceil(day / 7) === occurrence;
  }
  const weekdays = new Set(parseList(text, DAY_OF_WEEK, fail));
  return (year, month, day) => weekdays.has(weekdayOf(year, month, day));
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** 1 for Sunday to 7 for Saturday, as cron numbers them. */
function weekdayOf(year: number, month: number, day: number): number {
  return new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 1;
}

/** The weekday nearest `target` without leaving the month; none when the month is shorter. */
function nearestWeekday(year: number, month: number, target: number): number | undefined {
  const last = daysInMonth(year, month);
  if (target > last) return undefined;
  const weekday = weekdayOf(year, month, target);
  if (weekday === SATURDAY) return target === 1 ? 3 : target - 1;
  if (weekday === SUNDAY) return target === last ? target - 2 : target + 1;
  return target;
}

/** Walks years, months, days, hours and minutes in order, skipping every unit that ends before `from`. */
function nextFiring(fields: CronFields, after: number): number {
  const from = Math.floor(after / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  for (const year of fields.years) {
    for (const month of fields.months) {
      if (Date.UTC(year, month, 1) <= from) continue;
      for (let day = 1; day <= daysInMonth(year, month); day++) {
        if (Date.UTC(year, month - 1, day + 1) <= from || !fields.day(year, month, day)) continue;
        for (const hour of fields.hours) {
          if (Date.UTC(year, month - 1, day, hour + 1) <= from) continue;
          const minute = fields.minutes.find((candidate) => Date.UTC(year, month - 1, day, hour, candidate) >= from);
          if (minute !== undefined) return Date.UTC(year, month - 1, day, hour, minute);
        }
      }
    }
  }
  return Number.POSITIVE_INFINITY;
}
