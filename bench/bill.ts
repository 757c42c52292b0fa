/**
 * What a team pays for an inbox with the construct's defaults, every line: the per-delivery work
 * the pipeline runs measured (bench/cost.ts), and what the defaults add around it, each read from
 * the template the construct synthesizes with its defaults (never restated here): X-Ray traces of
 * the functions it traces, the custom metrics its handlers emit (counted from the EMF they wrote
 * in the run), its alarms, dashboard and secret, DynamoDB storage for the retention its TTL keeps
 * and point-in-time recovery, Lambda's own log lines and the API's access log, and the batches its
 * event source really forms at a given rate. Fixed monthly charges are amortized at each volume.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { DescribeTableCommand, DynamoDBClient, ScanCommand, ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { WebhookInbox, WebhookProvider } from '../lib';
import { Env, HandlerConfigFile } from '../lib/contract';
import { itemBytes } from './capacity';
import type { CostBreakdown } from './cost';
import { PRICES, PriceName } from './prices';

const SECONDS_PER_MONTH = 30 * 86_400;
/** The volumes the bill is given at, deliveries a month. */
export const BILL_VOLUMES = [1_000_000, 10_000_000, 100_000_000] as const;

/** What the construct's defaults provision that a bill depends on, read from its template. */
export interface TemplateFacts {
  readonly functions: readonly { readonly id: string; readonly memoryMb: number; readonly traced: boolean }[];
  /** Metrics read by metric alarms (a metric-math alarm pays for each metric it reads). */
  readonly alarmMetrics: number;
  readonly compositeAlarms: number;
  readonly dashboards: number;
  readonly secrets: number;
  /** Tables with point-in-time recovery on. */
  readonly pitrTables: number;
  readonly eventSource: { readonly batchSize: number; readonly batchingWindowSeconds: number };
  /** The HTTP API stage's access log format, if it logs. */
  readonly accessLogFormat?: string;
  /** How long rows, and results after their last decision, are kept (seconds; the tables' TTL). */
  readonly retentionSeconds: number;
  readonly resultRetentionSeconds: number;
  readonly reconcilerRunsPerMonth: number;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- CloudFormation properties, read by name */
type Resource = { Type: string; Properties?: Record<string, any> };
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Synthesizes an inbox with the construct's defaults and the bench's provider, and reads what its bill depends on. */
export function defaultTemplateFacts(): TemplateFacts {
  const app = new App();
  const stack = new Stack(app, 'Bill');
  new WebhookInbox(stack, 'Inbox', { providers: [WebhookProvider.answerline()] });
  const assembly = app.synth();
  const resources = Object.entries((assembly.getStackByName('Bill').template as { Resources: Record<string, Resource> }).Resources);
  const of = (type: string) => resources.filter(([, resource]) => resource.Type === type);
  /** A plain setting of the function whose logical id starts with `prefix`: in its environment, or its asset's configuration file. */
  const setting = (prefix: string, name: string): string | undefined => {
    const [, fn] = of('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix))!;
    const env = (fn.Properties!.Environment?.Variables ?? {}) as Record<string, unknown>;
    if (typeof env[name] === 'string' || env[Env.CONFIG_FILE] === undefined) return env[name] as string | undefined;
    const folder = join(assembly.directory, `asset.${String(fn.Properties!.Code.S3Key).replace(/\.zip$/, '')}`);
    const value = (JSON.parse(readFileSync(join(folder, String(env[Env.CONFIG_FILE])), 'utf8')) as HandlerConfigFile).variables[name];
    return typeof value === 'string' ? value : undefined;
  };
  const [mapping] = of('AWS::Lambda::EventSourceMapping').map(([, resource]) => resource.Properties!);
  const [stage] = of('AWS::ApiGatewayV2::Stage').map(([, resource]) => resource.Properties!);
  const [schedule] = of('AWS::Events::Rule').map(([, resource]) => String(resource.Properties!.ScheduleExpression));
  const retentionSeconds = Number(setting('InboxVerifier', Env.RETENTION_SECONDS));
  return {
    functions: of('AWS::Lambda::Function').map(([id, resource]) => ({
      id,
      memoryMb: Number(resource.Properties!.MemorySize ?? 128),
      traced: resource.Properties!.TracingConfig?.Mode === 'Active',
    })),
    alarmMetrics: of('AWS::CloudWatch::Alarm').reduce(
      (sum, [, resource]) =>
        sum + (resource.Properties!.Metrics ? resource.Properties!.Metrics.filter((m: { MetricStat?: unknown }) => m.MetricStat).length : 1),
      0,
    ),
    compositeAlarms: of('AWS::CloudWatch::CompositeAlarm').length,
    dashboards: of('AWS::CloudWatch::Dashboard').length,
    secrets: of('AWS::SecretsManager::Secret').length,
    pitrTables: of('AWS::DynamoDB::Table').filter(([, resource]) => resource.Properties!.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled).length,
    eventSource: { batchSize: Number(mapping.BatchSize ?? 10), batchingWindowSeconds: Number(mapping.MaximumBatchingWindowInSeconds ?? 0) },
    accessLogFormat: stage?.AccessLogSettings?.Format,
    retentionSeconds,
    resultRetentionSeconds: Math.max(retentionSeconds, Number(setting('InboxProcessor', Env.RESULT_RETENTION_SECONDS) ?? 0)),
    reconcilerRunsPerMonth: SECONDS_PER_MONTH / scheduleSeconds(schedule),
  };
}

function scheduleSeconds(expression: string): number {
  const match = /^rate\((\d+) (minute|minutes|hour|hours)\)$/.exec(expression);
  if (!match) throw new Error(`the bill reads rate() schedules only, not ${expression}`);
  return Number(match[1]) * (match[2].startsWith('hour') ? 3600 : 60);
}

/**
 * The messages per batch Lambda's SQS event source forms at `perSecond` deliveries: a poll returns
 * as soon as a message is there, so with no batching window a batch is the message that arrived
 * (1) at these rates; a window gathers what arrives within it, up to the batch size.
 */
export function batchAt(perSecond: number, eventSource: TemplateFacts['eventSource']): number {
  return Math.min(eventSource.batchSize, 1 + perSecond * eventSource.batchingWindowSeconds);
}

/**
 * Invocations per second X-Ray records a trace of under its default sampling rule: the first
 * each second, then 5% of the rest.
 */
export function sampledPerSecond(invocationsPerSecond: number): number {
  return Math.min(invocationsPerSecond, 1) + 0.05 * Math.max(0, invocationsPerSecond - 1);
}

/** Bytes DynamoDB stores per delivery: each item (100 bytes of overhead more) and each index entry (keys, projected keys, 100 bytes more). */
export interface StoredBytes {
  readonly rows: number;
  readonly results: number;
}

/** Scans `tables` and returns the bytes each stores per delivery, indexes included. */
export async function storedBytesPerDelivery(
  client: DynamoDBClient,
  tables: { readonly inbox: string; readonly results: string },
  deliveries: number,
): Promise<StoredBytes> {
  const bytesOf = async (table: string) => {
    const described = await client.send(new DescribeTableCommand({ TableName: table }));
    const tableKeys = described.Table!.KeySchema!.map((key) => key.AttributeName!);
    const indexKeys = (described.Table!.GlobalSecondaryIndexes ?? []).map((index) => index.KeySchema!.map((key) => key.AttributeName!));
    let bytes = 0;
    let start: ScanCommandOutput['LastEvaluatedKey'];
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) {
        bytes += itemBytes(item) + 100;
        for (const keys of indexKeys) {
          if (!keys.every((name) => item[name] !== undefined)) continue;
          bytes += itemBytes(Object.fromEntries([...new Set([...tableKeys, ...keys])].map((name) => [name, item[name]]))) + 100;
        }
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return bytes / deliveries;
  };
  return { rows: await bytesOf(tables.inbox), results: await bytesOf(tables.results) };
}

/**
 * Lambda's own log lines of one invocation, in the text format (START, END, REPORT, and an XRAY
 * line when traced), as the service writes them with a request id of 36 characters.
 */
export function platformLogBytes(durationMs: number, memoryMb: number, traced: boolean): number {
  const requestId = '8f507cfc-4f5b-4e0b-9a5c-2f3c3a4b5c6d';
  const lines = [
    `START RequestId: ${requestId} Version: $LATEST`,
    `END RequestId: ${requestId}`,
    `REPORT RequestId: ${requestId}\tDuration: ${durationMs.toFixed(2)} ms\tBilled Duration: ${Math.ceil(durationMs)} ms\tMemory Size: ${memoryMb} MB\tMax Memory Used: ${Math.round(memoryMb / 5)} MB\t` +
      (traced ? `\nXRAY TraceId: 1-6750b7a1-5ac6c58f5d6f6d5e5a5b5c5d\tSegmentId: 6a1c3f2d4e5f6a7b\tSampled: true\t` : ''),
  ];
  return lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
}

/** Typical values of the `$context` variables an access log format names; any other is written `-`. */
const CONTEXT_SAMPLES: Record<string, string> = {
  'identity.sourceIp': '203.0.113.10',
  requestTime: '04/Dec/2026:09:33:13 +0000',
  httpMethod: 'POST',
  resourcePath: '/hooks/answerline',
  routeKey: 'POST /hooks/answerline',
  path: '/hooks/answerline',
  protocol: 'HTTP/1.1',
  status: '202',
  responseLength: '21',
  requestId: 'Hx1abCDeFGhIJkL=',
  'integration.latency': '12',
  responseLatency: '14',
};

/** One access log line in `format`, with typical values. */
export function accessLogBytes(format: string): number {
  return Buffer.byteLength(format.replace(/\$context\.([A-Za-z.]+)/g, (_, name: string) => CONTEXT_SAMPLES[name] ?? '-')) + 1;
}

export interface BillLine {
  readonly item: string;
  readonly price: PriceName;
  /** Billed units a month at the volume. */
  readonly monthly: number;
  readonly usdPerMonth: number;
  readonly usdPerMillion: number;
  /** Charged by the month whatever the volume (amortized over it). */
  readonly fixed: boolean;
  readonly note?: string;
}

export interface Bill {
  readonly deliveriesPerMonth: number;
  readonly perSecond: number;
  readonly batch: number;
  readonly lines: BillLine[];
  readonly usdPerMonth: number;
  readonly usdPerMillion: number;
  /** The per-delivery part alone (what the receivers are compared by). */
  readonly perRequestUsdPerMillion: number;
}

/** What the bill is computed from, besides the template. */
export interface BillInputs {
  readonly facts: TemplateFacts;
  /** Our cost per delivery priced with the batch size the volume's rate gives (bench/cost.ts). */
  readonly perRequest: (batch: number) => CostBreakdown;
  /** Distinct custom metrics (name, dimension set and values) the handlers emitted in the run. */
  readonly customMetrics: readonly string[];
  readonly stored: StoredBytes;
  /** Mean billed milliseconds of an edge invocation, and of a processor batch of the volume's size. */
  readonly edgeMs: number;
  readonly processorMs: (batch: number) => number;
  readonly reconcilerMs: number;
}

/** The all-in monthly bill at `deliveriesPerMonth`. */
export function billAt(deliveriesPerMonth: number, inputs: BillInputs): Bill {
  const { facts } = inputs;
  const perSecond = deliveriesPerMonth / SECONDS_PER_MONTH;
  const batch = batchAt(perSecond, facts.eventSource);
  const lines: BillLine[] = [];
  const add = (item: string, price: PriceName, monthly: number, fixed: boolean, note?: string) => {
    const usdPerMonth = monthly * PRICES[price].usd;
    lines.push({ item, price, monthly, usdPerMonth, usdPerMillion: (usdPerMonth / deliveriesPerMonth) * 1e6, fixed, ...(note ? { note } : {}) });
  };

  const perRequest = inputs.perRequest(batch);
  for (const entry of perRequest.lines) {
    if (entry.usdPerMillion === 0) continue;
    add(entry.item, entry.price, entry.perDelivery * deliveriesPerMonth, false, entry.note);
  }

  const byRole = (prefix: string) => facts.functions.find((fn) => fn.id.startsWith(prefix));
  const invocations = [
    { fn: byRole('InboxVerifier'), perSecond, ms: inputs.edgeMs },
    { fn: byRole('InboxProcessor'), perSecond: perSecond / batch, ms: inputs.processorMs(batch) },
    { fn: byRole('InboxReconciler'), perSecond: facts.reconcilerRunsPerMonth / SECONDS_PER_MONTH, ms: inputs.reconcilerMs },
  ];
  const traced = invocations.filter(({ fn }) => fn?.traced);
  add(
    'X-Ray traces',
    'xrayTraceRecorded',
    traced.reduce((sum, { perSecond: rate }) => sum + sampledPerSecond(rate) * SECONDS_PER_MONTH, 0),
    false,
    traced.length
      ? `active tracing on ${traced.map(({ fn }) => fn!.id.replace(/[0-9A-F]{8}$/, '')).join(', ')}; default sampling (1 a second, then 5%)`
      : 'no function traced',
  );
  const platformBytes = invocations.reduce(
    (sum, { fn, perSecond: rate, ms }) => sum + (fn ? rate * SECONDS_PER_MONTH * platformLogBytes(ms, fn.memoryMb, fn.traced) : 0),
    0,
  );
  add(
    'Lambda platform log lines (START, END, REPORT)',
    'cloudWatchLogsIngestedGb',
    platformBytes / 1024 ** 3,
    false,
    `${(platformBytes / deliveriesPerMonth).toFixed(0)} B per delivery`,
  );
  if (facts.accessLogFormat) {
    const bytes = accessLogBytes(facts.accessLogFormat);
    add('API access log', 'cloudWatchLogsIngestedGb', (bytes * deliveriesPerMonth) / 1024 ** 3, false, `${bytes} B a request`);
  }

  const retentionMonths = facts.retentionSeconds / SECONDS_PER_MONTH;
  const resultMonths = facts.resultRetentionSeconds / SECONDS_PER_MONTH;
  const storedGb = (deliveriesPerMonth * (inputs.stored.rows * retentionMonths + inputs.stored.results * resultMonths)) / 1e9;
  add(
    'DynamoDB storage',
    'dynamodbStorageGbMonth',
    storedGb,
    false,
    `${inputs.stored.rows.toFixed(0)} B of rows and index entries per delivery kept ${(facts.retentionSeconds / 86_400).toFixed(0)} days, ${inputs.stored.results.toFixed(0)} B of result kept ${(facts.resultRetentionSeconds / 86_400).toFixed(0)} days`,
  );
  if (facts.pitrTables > 0) add('DynamoDB point-in-time recovery', 'dynamodbPitrGbMonth', storedGb, false, `on for ${facts.pitrTables} tables`);

  add(
    'Custom metrics',
    'cloudWatchCustomMetricMonth',
    inputs.customMetrics.length,
    true,
    `${inputs.customMetrics.length} emitted on the way of a delivery and by the reconciler's runs (from their EMF)`,
  );
  add('Alarms', 'cloudWatchAlarmMetricMonth', facts.alarmMetrics, true, `${facts.alarmMetrics} alarm metrics`);
  if (facts.compositeAlarms > 0) add('Composite alarm', 'cloudWatchCompositeAlarmMonth', facts.compositeAlarms, true);
  if (facts.dashboards > 0) add('Dashboard', 'cloudWatchDashboardMonth', facts.dashboards, true, "free for an account's first 3");
  add('Signing secret', 'secretsManagerSecretMonth', facts.secrets, true);

  const usdPerMonth = lines.reduce((sum, entry) => sum + entry.usdPerMonth, 0);
  return {
    deliveriesPerMonth,
    perSecond,
    batch,
    lines,
    usdPerMonth,
    usdPerMillion: (usdPerMonth / deliveriesPerMonth) * 1e6,
    perRequestUsdPerMillion: perRequest.usdPerMillion,
  };
}
