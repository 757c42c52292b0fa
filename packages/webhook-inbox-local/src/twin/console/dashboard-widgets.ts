/**
 * Reads the metric charts of a CloudWatch dashboard body (the `DashboardBody` of an
 * `AWS::CloudWatch::Dashboard`, its intrinsics resolved) so the console draws the dashboards the
 * template deploys, from whatever metrics the twin keeps. Each metric line is written in
 * CloudWatch's compact notation, `[namespace, name, dimName, dimValue, …, { options }]`, where
 * `"."` repeats the previous line's item at the same position and `"..."` repeats as many of the
 * previous line's items as the line leaves out. Math expressions are kept but not computed.
 */
import type { ConsoleSeries, ConsoleWidget } from './snapshot';

/** CloudWatch's defaults for a widget that names no statistic or period. */
const DEFAULT_STAT = 'Average';
const DEFAULT_PERIOD_SECONDS = 300;

/** A metric, as a metric store looks it up. */
export interface MetricIdentity {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
}

/** A metric line of a chart. */
export interface MetricLine extends MetricIdentity {
  readonly kind: 'metric';
  readonly stat: string;
  readonly periodSeconds: number;
  readonly label: string;
  readonly rightAxis: boolean;
}

/** A math expression line of a chart: the console names it but does not compute it. */
export interface ExpressionLine {
  readonly kind: 'expression';
  readonly expression: string;
  readonly label: string;
  readonly id?: string;
  readonly rightAxis: boolean;
}

export type WidgetLine = MetricLine | ExpressionLine;

/** A metric chart of a dashboard. */
export interface MetricWidget {
  readonly title: string;
  readonly lines: readonly WidgetLine[];
}

/** Points of one metric, one per whole period from `fromMs` to `toMs`, each at its period's start as [epoch milliseconds, value], oldest first. */
export type MetricSeriesSource = (
  metric: MetricIdentity,
  stat: string,
  periodSeconds: number,
  fromMs: number,
  toMs: number,
) => readonly (readonly [number, number])[];

export class DashboardBodyError extends Error {
  override readonly name = 'DashboardBodyError';
}

/** The metric charts of a dashboard body, in its order; text and alarm widgets are left out. */
export function parseDashboardWidgets(dashboardBody: string): MetricWidget[] {
  const body: unknown = JSON.parse(dashboardBody);
  if (!isRecord(body) || !Array.isArray(body.widgets)) throw new DashboardBodyError('a dashboard body is an object with a widgets array');
  return body.widgets.filter((widget) => isRecord(widget) && widget.type === 'metric').map((widget, index) => parseMetricWidget(widget.properties, index));
}

/**
 * The charts filled with the points `series` gives for the window that ends at `nowMs`. Periods
 * are whole ones of the clock (a 5-minute period starts at :00, :05, …, as CloudWatch's do), the
 * current one included; each point is drawn at the end of its period, the current one's at
 * `nowMs`, so that no count is drawn before the time it was counted (a delivery at 12:57 in the
 * 12:55 period is drawn at 12:57 or later, never at 12:55, perhaps before the twin started).
 */
export function widgetSeries(widgets: readonly MetricWidget[], series: MetricSeriesSource, nowMs: number, windowMs: number): ConsoleWidget[] {
  const pointsOf = (line: MetricLine, metric: MetricIdentity): [number, number][] => {
    const periodMs = line.periodSeconds * 1000;
    const fromMs = Math.floor((nowMs - windowMs) / periodMs) * periodMs;
    const toMs = Math.floor(nowMs / periodMs) * periodMs + periodMs;
    return series(metric, line.stat, line.periodSeconds, fromMs, toMs).map(([startMs, value]) => [Math.min(startMs + periodMs, nowMs), value]);
  };
  return widgets.map((widget) => ({
    title: widget.title,
    series: widget.lines.map((line): ConsoleSeries => {
      const axis = line.rightAxis ? { rightAxis: true } : {};
      if (line.kind === 'expression') return { label: line.label, points: [], ...axis, notDrawn: `math expression ${line.expression}: not drawn locally` };
      const metric: MetricIdentity = { namespace: line.namespace, metricName: line.metricName, dimensions: line.dimensions };
      return { label: line.label, points: pointsOf(line, metric), ...axis };
    }),
  }));
}

function parseMetricWidget(properties: unknown, index: number): MetricWidget {
  const where = `metric widget ${index + 1}`;
  if (!isRecord(properties) || !Array.isArray(properties.metrics)) throw new DashboardBodyError(`${where}: its properties have no metrics array`);
  const defaults = {
    stat: typeof properties.stat === 'string' ? properties.stat : DEFAULT_STAT,
    periodSeconds: typeof properties.period === 'number' ? properties.period : DEFAULT_PERIOD_SECONDS,
  };
  const lines: WidgetLine[] = [];
  // The shorthand refers to the previous metric line as written out, hidden or not.
  let previous: readonly unknown[] | undefined;
  properties.metrics.forEach((row: unknown, rowIndex) => {
    const at = `${where}, line ${rowIndex + 1}`;
    if (!Array.isArray(row)) throw new DashboardBodyError(`${at}: a line is an array`);
    const last: unknown = row[row.length - 1];
    const options = isRecord(last) ? last : {};
    const items = isRecord(last) ? row.slice(0, -1) : row;
    const rightAxis = options.yAxis === 'right';
    if (items.length === 0) {
      if (typeof options.expression !== 'string') throw new DashboardBodyError(`${at}: neither a metric nor an expression`);
      const label = typeof options.label === 'string' ? options.label : options.expression;
      lines.push({ kind: 'expression', expression: options.expression, label, ...(typeof options.id === 'string' ? { id: options.id } : {}), rightAxis });
      return;
    }
    const expanded = expandShorthand(items, previous, at);
    previous = expanded;
    // CloudWatch does not draw a hidden line either (it is there to feed an expression).
    if (options.visible === false) return;
    lines.push({
      kind: 'metric',
      ...metricIdentity(expanded, at),
      stat: typeof options.stat === 'string' ? options.stat : defaults.stat,
      periodSeconds: typeof options.period === 'number' ? options.period : defaults.periodSeconds,
      label: typeof options.label === 'string' ? options.label : String(expanded[1]),
      rightAxis,
    });
  });
  const title = typeof properties.title === 'string' ? properties.title : lines.map((line) => line.label).join(', ');
  return { title, lines };
}

function expandShorthand(items: readonly unknown[], previous: readonly unknown[] | undefined, at: string): unknown[] {
  const ellipsis = items.indexOf('...');
  const shorthand = ellipsis >= 0 || items.includes('.');
  if (shorthand && !previous) throw new DashboardBodyError(`${at}: "." and "..." repeat a previous metric line, and there is none`);
  const written =
    ellipsis < 0
      ? [...items]
      : [
          ...items.slice(0, ellipsis),
          ...previous!.slice(ellipsis, Math.max(ellipsis, previous!.length - (items.length - ellipsis - 1))),
          ...items.slice(ellipsis + 1),
        ];
  return written.map((item, position) => {
    if (item !== '.') return item;
    if (position >= previous!.length) throw new DashboardBodyError(`${at}: "." at position ${position + 1} has nothing above it to repeat`);
    return previous![position];
  });
}

function metricIdentity(items: readonly unknown[], at: string): MetricIdentity {
  if (!items.every((item) => typeof item === 'string')) throw new DashboardBodyError(`${at}: the items before the options are text`);
  const [namespace, metricName, ...pairs] = items as string[];
  if (metricName === undefined || pairs.length % 2 !== 0) {
    throw new DashboardBodyError(`${at}: a metric is a namespace, a name and dimension name-value pairs, got ${JSON.stringify(items)}`);
  }
  const dimensions: Record<string, string> = {};
  for (let i = 0; i < pairs.length; i += 2) dimensions[pairs[i]] = pairs[i + 1];
  return { namespace, metricName, dimensions };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
