/**
 * Reads a log line in CloudWatch's embedded metric format (EMF) into datapoints, as CloudWatch Logs
 * extracts them: each directive of `_aws.CloudWatchMetrics` publishes each of its metrics once per
 * dimension set, with the dimension values and the metric values (a number, or an array of numbers)
 * taken from the document's top-level members, at `_aws.Timestamp`. A line that is not a valid EMF
 * document yields nothing: CloudWatch keeps such a line as a log event and extracts no metric.
 */
import type { MetricDatum } from './metric-store';

type Json = Record<string, unknown>;

interface Directive {
  readonly namespace: string;
  readonly dimensionSets: readonly (readonly string[])[];
  readonly metrics: readonly { readonly name: string; readonly unit?: string }[];
}

/** Datapoints of one log line; [] for a line that is not an EMF document. */
export function parseEmfLine(line: string): MetricDatum[] {
  const document = jsonObjectOf(line);
  const metadata = document?._aws;
  if (!document || !isObject(metadata)) return [];
  const timestamp = metadata.Timestamp;
  if (typeof timestamp !== 'number' || !Number.isInteger(timestamp) || !Array.isArray(metadata.CloudWatchMetrics)) return [];
  const directives = metadata.CloudWatchMetrics.map(directiveOf);
  if (directives.some((directive) => directive === undefined || !targetsPresent(directive, document))) return [];
  return (directives as Directive[]).flatMap((directive) => datapointsOf(directive, document, timestamp));
}

/**
 * The JSON object a line carries. Lambda may prefix a line with tab-separated metadata (time,
 * request id, level); the document after that prefix still counts, as it does in CloudWatch.
 */
function jsonObjectOf(line: string): Json | undefined {
  const text = line.trim();
  const start = text.indexOf('{');
  if (start < 0 || (start > 0 && text[start - 1] !== '\t')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text.slice(start));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function directiveOf(value: unknown): Directive | undefined {
  if (!isObject(value) || typeof value.Namespace !== 'string' || value.Namespace === '') return undefined;
  const { Dimensions: dimensions, Metrics: metrics } = value;
  if (!Array.isArray(dimensions) || dimensions.length === 0 || !dimensions.every(isStringArray)) return undefined;
  if (
    !Array.isArray(metrics) ||
    !metrics.every((metric) => isObject(metric) && typeof metric.Name === 'string' && ['string', 'undefined'].includes(typeof metric.Unit))
  ) {
    return undefined;
  }
  return {
    namespace: value.Namespace,
    dimensionSets: dimensions,
    metrics: metrics.map((metric: Json) => ({ name: metric.Name as string, ...(metric.Unit === undefined ? {} : { unit: metric.Unit as string }) })),
  };
}

/** A document must carry every member its directive names: dimensions as text, metrics as numbers. */
function targetsPresent(directive: Directive, document: Json): boolean {
  const dimensionsPresent = directive.dimensionSets.every((set) => set.every((name) => typeof document[name] === 'string'));
  return dimensionsPresent && directive.metrics.every((metric) => valuesOf(document[metric.name]) !== undefined);
}

function datapointsOf(directive: Directive, document: Json, timestamp: number): MetricDatum[] {
  return directive.dimensionSets.flatMap((set) => {
    const dimensions = Object.fromEntries(set.map((name) => [name, document[name] as string]));
    return directive.metrics.flatMap((metric) =>
      (valuesOf(document[metric.name]) ?? []).map((value) => ({
        namespace: directive.namespace,
        name: metric.name,
        dimensions,
        timestamp,
        value,
        ...(metric.unit === undefined ? {} : { unit: metric.unit }),
      })),
    );
  });
}

/** A metric member's values: one number, or an array of numbers; undefined for anything else. */
function valuesOf(member: unknown): number[] | undefined {
  const values = Array.isArray(member) ? member : [member];
  return values.every((value) => typeof value === 'number' && Number.isFinite(value)) ? (values as number[]) : undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
