/**
 * The twin's CloudWatch: the metrics the functions emit as EMF log lines, and those AWS would
 * compute that the twin can compute itself (Lambda invocations, errors and duration; each API's
 * requests, 4xx and 5xx, an HTTP API's by id, a REST API's by name and stage; each queue's depth and
 * age of its oldest message, sampled), and
 * the template's alarms evaluated on them. Each state change is printed with its runbook and
 * written to a notification log; the console shows it all.
 */
import { appendFileSync } from 'node:fs';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { FLOW_STATE_CACHE_MS, InboxAttr, InboxItemKind, ReconcileRequest } from '../../../../lib/contract';
import { DynamoDbFlowStore, FlowState } from '../../../../lambda/shared/stores/flow';
import type { ApiAccessRecord } from '../aws/apigateway/front-door';
import { parseEmfLine } from '../aws/cloudwatch/emf';
import {
  AlarmEvaluator,
  AlarmResource,
  AlarmStateValue,
  AlarmStatus,
  AlarmTransition,
  COMPOSITE_ALARM_TYPE,
  METRIC_ALARM_TYPE,
} from '../aws/cloudwatch/evaluator';
import { constructPath } from '../aws/cloudformation/assembly';
import { MetricDatum, MetricStore } from '../aws/cloudwatch/metric-store';
import { parseDashboardWidgets, widgetSeries } from './console/dashboard-widgets';
import type { ConsoleDelivery, ConsoleInbox, ConsoleSnapshot, ConsoleSource, FlowAction } from './console/snapshot';
import type { InvocationOutcome, LocalFunction } from '../aws/cloudformation/functions';
import type { LocalInbox, RunningStack } from '../aws/cloudformation/run-stack';
import type { LocalServices } from '../aws/services';
import type { LocalApi, ScheduleClock } from '../aws/cloudformation/triggers';

const QUEUE_SAMPLE_MS = 5_000;
const EVALUATE_MS = 1_000;
/** Recent deliveries the console keeps per API. */
const RECENT_DELIVERIES = 50;
/** How far back the console's charts reach, in the twin's time. */
const CHART_WINDOW_MS = 3 * 3_600_000;
/** How long one count of a table's rows serves the console's refreshes: a Scan a second would be one per open page. */
const ROW_COUNT_REUSE_MS = 2_000;

export interface TwinMonitorOptions {
  readonly clock: ScheduleClock;
  /** The notification log: one JSON line per alarm state change. */
  readonly notificationsLog: string;
  /** Where state changes are printed. */
  readonly log: (line: string) => void;
  /** What the runbook path an alarm names (`docs/RUNBOOK.md#…`) is relative to: a folder (`./`, `node_modules/cdk-webhook-inbox/`) or a URL ending in `/`. */
  readonly runbookBase: string;
}

/** An alarm state change as the notification log holds it. */
export interface AlarmNotification extends AlarmTransition {
  readonly runbook?: string;
}

export class TwinMonitor {
  readonly store: MetricStore;
  readonly notifications: AlarmNotification[] = [];
  private evaluator?: AlarmEvaluator;
  private readonly deliveries = new Map<string, ConsoleDelivery[]>();
  private readonly depths = new Map<string, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly rowCounts = new Map<string, { readonly at: number; readonly counts: Promise<Record<string, number>> }>();
  private stacks: readonly RunningStack[] = [];
  private inboxes: readonly LocalInbox[] = [];

  constructor(private readonly options: TwinMonitorOptions) {
    this.store = new MetricStore({ clock: () => options.clock.now() });
  }

  /** A line a function logged: its EMF metrics, stamped in the twin's time. */
  onLogLine(_fn: LocalFunction, line: string): void {
    for (const datum of parseEmfLine(line)) this.store.put({ ...datum, timestamp: this.options.clock.at(datum.timestamp) });
  }

  onInvocation(fn: LocalFunction, outcome: InvocationOutcome): void {
    const at = this.options.clock.now();
    const dimensions = { FunctionName: fn.name };
    this.putAll('AWS/Lambda', dimensions, at, { Invocations: 1, Errors: outcome.failed ? 1 : 0, Duration: outcome.durationMs });
  }

  onApiResponse(api: LocalApi, record: ApiAccessRecord): void {
    const at = this.options.clock.at(record.at);
    const [clientError, serverError] = [record.status >= 400 && record.status < 500 ? 1 : 0, record.status >= 500 ? 1 : 0];
    if (api.restStage) {
      // A REST API's metrics carry its name, alone and with its stage, and have names of their own.
      const counts = { Count: 1, '4XXError': clientError, '5XXError': serverError };
      this.putAll('AWS/ApiGateway', { ApiName: api.restStage.apiName }, at, counts);
      this.putAll('AWS/ApiGateway', { ApiName: api.restStage.apiName, Stage: api.restStage.stageName }, at, counts);
    } else {
      this.putAll('AWS/ApiGateway', { ApiId: api.apiId }, at, { Count: 1, '4xx': clientError, '5xx': serverError });
    }
    // By API id: logical ids repeat from stack to stack.
    const recent = this.deliveries.get(api.apiId) ?? [];
    recent.unshift({
      at: new Date(at).toISOString(),
      provider: /\/hooks\/([^/]+)$/.exec(record.path)?.[1] ?? record.path,
      status: record.status,
      reason: answerReason(record),
      requestId: record.requestId,
    });
    recent.length = Math.min(recent.length, RECENT_DELIVERIES);
    this.deliveries.set(api.apiId, recent);
  }

  /** Starts sampling the stacks' queues and evaluating their alarms. */
  start(stacks: readonly RunningStack[], services: LocalServices): void {
    this.stacks = stacks;
    this.inboxes = stacks.flatMap((stack) => stack.inboxes);
    this.evaluator = new AlarmEvaluator(
      stacks.flatMap((stack) => alarmResources(stack)),
      { store: this.store, clock: () => this.options.clock.now() },
    );
    const sample = () => void this.sampleQueues(services).catch(() => undefined);
    sample();
    this.timers.push(
      setInterval(sample, QUEUE_SAMPLE_MS),
      setInterval(() => this.evaluate(), EVALUATE_MS),
    );
  }

  /** Evaluates every alarm now; the state changes, also printed and logged. */
  evaluate(): AlarmNotification[] {
    const changes = (this.evaluator?.evaluate() ?? []).map((transition) => ({ ...transition, runbook: this.runbookOf(transition.description) }));
    for (const change of changes) {
      this.notifications.push(change);
      appendFileSync(this.options.notificationsLog, `${JSON.stringify({ ...change, at: new Date(change.at).toISOString() })}\n`);
      // The first evaluation settles every alarm out of INSUFFICIENT_DATA: only a change from a known state is news.
      if (change.from !== 'INSUFFICIENT_DATA' || change.to === 'ALARM') {
        // By the name the runbook uses; why only when it fires (the notification log keeps every reason).
        const { label, owner } = this.labelOf(change);
        const why = change.to === 'ALARM' ? ` (${change.reason})` : '';
        this.options.log(
          `alarm ${owner ? `${owner} ` : ''}${label}: ${change.from} → ${change.to}${why}${change.runbook ? ` runbook: ${change.runbook}` : ''}`,
        );
      }
    }
    return changes;
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
  }

  /** The runbook section an alarm's description points at, under the runbook base. */
  private runbookOf(description: string | undefined): string | undefined {
    const path = /\b(docs\/RUNBOOK\.md#[\w-]+)/.exec(description ?? '')?.[1];
    return path ? `${this.options.runbookBase}${path}` : undefined;
  }

  /** Every alarm's state now, by the name the README and the runbook use (`deadDeliveries`). */
  alarmStates(): { readonly label: string; readonly owner: string; readonly state: AlarmStateValue; readonly status: AlarmStatus }[] {
    return (this.evaluator?.states() ?? []).map((status) => ({ ...this.labelOf(status), state: status.state, status }));
  }

  /** The alarm's construct id as its inbox's `alarms` attribute names it, and the construct it belongs to. */
  private labelOf(status: Pick<AlarmStatus, 'stackName' | 'logicalId' | 'alarmName'>): { label: string; owner: string } {
    const stack = this.stacks.find((candidate) => candidate.stack.stackName === status.stackName);
    const resource = stack?.stack.template.Resources[status.logicalId];
    return stack && resource ? alarmLabel(constructPath(stack.stack, status.logicalId, resource)) : { label: status.alarmName, owner: '' };
  }

  consoleSource(services: LocalServices): ConsoleSource {
    return { snapshot: () => this.snapshot(services), changeFlow: (inbox, action) => this.changeFlow(services, inbox, action) };
  }

  /**
   * The console's pause and resume, as the ops CLI does them: one write of the flow-control item;
   * a resume then waits out the processors' cache of it and runs the reconciler with a resume
   * request, which enqueues every waiting row once.
   */
  private async changeFlow(services: LocalServices, name: string, action: FlowAction): Promise<void> {
    const inbox = this.inboxes.find((candidate) => candidate.opsConfig.inboxName === name);
    if (!inbox) throw new Error(`no inbox named ${name}`);
    const store = new DynamoDbFlowStore(services.clients.dynamodb, inbox.opsConfig.inboxTable);
    if (action === 'pause') {
      await store.pause(Date.now(), 'console');
      return;
    }
    await store.resume(Date.now());
    await new Promise((resolve) => setTimeout(resolve, FLOW_STATE_CACHE_MS));
    const functionName = encodeURIComponent(inbox.opsConfig.reconcilerFunctionName);
    const response = await fetch(`${services.endpoints.lambda}/2015-03-31/functions/${functionName}/invocations`, {
      method: 'POST',
      body: JSON.stringify({ source: ReconcileRequest.SOURCE, 'detail-type': ReconcileRequest.RESUME }),
    });
    if (!response.ok || response.headers.get('x-amz-function-error')) throw new Error(`the reconciler's resume run failed: ${await response.text()}`);
  }

  private async snapshot(services: LocalServices): Promise<ConsoleSnapshot> {
    const now = this.options.clock.now();
    const inboxes = await Promise.all(
      this.inboxes.map(async (inbox) => {
        const stack = this.stacks.find((candidate) => candidate.stack.stackName === inbox.stackName)!;
        const deliveries = stack.apis.flatMap((api) => this.deliveries.get(api.apiId) ?? []);
        const names = new Set(inbox.providers.map((provider) => provider.name));
        return {
          name: inbox.opsConfig.inboxName,
          providers: inbox.providers.map((provider) => ({ name: provider.name, url: provider.url })),
          deliveries: deliveries.filter((delivery) => names.has(delivery.provider)),
          rowsByStatus: await this.rowsByStatus(services, inbox.opsConfig.inboxTable),
          deadLetter: { queue: inbox.deadLetterQueue?.name ?? '', depth: this.depths.get(inbox.deadLetterQueue?.name ?? '') ?? 0 },
          flow: consoleFlow(await new DynamoDbFlowStore(services.clients.dynamodb, inbox.opsConfig.inboxTable).read()),
        };
      }),
    );
    const alarms = this.alarmStates().map(({ label, owner, status }) => ({
      name: status.alarmName,
      label,
      owner,
      state: status.state,
      reason: status.reason,
      updatedAt: new Date(status.lastChange).toISOString(),
      ...(this.runbookOf(status.description) ? { runbook: this.runbookOf(status.description) } : {}),
    }));
    const dashboards = this.stacks.flatMap((stack) =>
      Object.entries(stack.stack.template.Resources)
        .filter(([, resource]) => resource.Type === 'AWS::CloudWatch::Dashboard')
        .map(([logicalId]) => ({
          name: stack.binding.nameOf(logicalId),
          widgets: widgetSeries(
            parseDashboardWidgets(stack.binding.resolvePropertyText(logicalId, 'DashboardBody')),
            (metric, stat, periodSeconds, fromMs, toMs) =>
              this.store
                .series({ namespace: metric.namespace, name: metric.metricName, dimensions: metric.dimensions }, stat, periodSeconds, fromMs, toMs)
                .flatMap((point) => (point.value === undefined ? [] : [[point.timestamp, point.value] as const])),
            now,
            CHART_WINDOW_MS,
          ),
        })),
    );
    return { generatedAt: new Date(now).toISOString(), inboxes, alarms, dashboards };
  }

  /** A table's rows by status, counted at most once per ROW_COUNT_REUSE_MS whatever the number of pages refreshing. */
  private rowsByStatus(services: LocalServices, table: string): Promise<Record<string, number>> {
    const recent = this.rowCounts.get(table);
    if (recent && Date.now() - recent.at < ROW_COUNT_REUSE_MS) return recent.counts;
    const counts = countRowsByStatus(services, table);
    this.rowCounts.set(table, { at: Date.now(), counts });
    // A failed count is not kept: the next refresh tries again.
    counts.catch(() => this.rowCounts.delete(table));
    return counts;
  }

  /** Each queue's depth and age of oldest message, as the SQS metrics say them, read from the emulator without receiving. */
  private async sampleQueues(services: LocalServices): Promise<void> {
    const at = this.options.clock.now();
    const scale = this.options.clock.scale;
    for (const stack of this.stacks) {
      for (const queue of stack.resources.queues.values()) {
        const response = await fetch(`${services.endpoints.sqs}/_fauxqs/queues/${encodeURIComponent(queue.name)}`);
        if (!response.ok) continue;
        const { messages } = (await response.json()) as { messages: QueueMessages };
        const waiting = [...messages.ready, ...messages.inflight.map((entry) => entry.message)];
        const oldest = Math.min(...waiting.map((message) => message.sentTimestamp));
        this.depths.set(queue.name, messages.ready.length);
        this.putAll('AWS/SQS', { QueueName: queue.name }, at, {
          ApproximateNumberOfMessagesVisible: messages.ready.length,
          ApproximateNumberOfMessagesNotVisible: messages.inflight.length,
          ApproximateNumberOfMessagesDelayed: messages.delayed.length,
          ApproximateAgeOfOldestMessage: waiting.length ? Math.max(0, ((Date.now() - oldest) * scale) / 1000) : 0,
        });
      }
    }
  }

  private putAll(namespace: string, dimensions: Record<string, string>, timestamp: number, values: Record<string, number>): void {
    const data: MetricDatum[] = Object.entries(values).map(([name, value]) => ({ namespace, name, dimensions, timestamp, value }));
    this.store.putAll(data);
  }
}

interface QueueMessages {
  readonly ready: readonly { readonly sentTimestamp: number }[];
  readonly delayed: readonly unknown[];
  readonly inflight: readonly { readonly message: { readonly sentTimestamp: number } }[];
}

/** The stack's alarms with their properties resolved, named as the twin named them. */
function alarmResources(stack: RunningStack): AlarmResource[] {
  return Object.entries(stack.stack.template.Resources)
    .filter(([, resource]) => resource.Type === METRIC_ALARM_TYPE || resource.Type === COMPOSITE_ALARM_TYPE)
    .map(([logicalId, resource]) => ({
      stackName: stack.stack.stackName,
      logicalId,
      name: stack.binding.nameOf(logicalId),
      arn: stack.binding.get(logicalId).attributes!.Arn,
      type: resource.Type,
      properties: stack.binding.resolveProperties(logicalId),
    }));
}

/**
 * An alarm's short name and owner from its construct path: an inbox's alarm (`Answers/Alarms/DeadDeliveries`)
 * is named as its `alarms` attribute (`deadDeliveries`) and belongs to the inbox (`Answers`); any
 * other alarm goes by its construct id, under the construct that holds it.
 */
export function alarmLabel(path: string): { label: string; owner: string } {
  const inboxAlarm = /^(.*)\/Alarms\/([^/]+)$/.exec(path);
  if (inboxAlarm) return { label: inboxAlarm[2].charAt(0).toLowerCase() + inboxAlarm[2].slice(1), owner: inboxAlarm[1] };
  const slash = path.lastIndexOf('/');
  return { label: path.slice(slash + 1), owner: slash < 0 ? '' : path.slice(0, slash) };
}

/** Why the endpoint answered so: the verifier's `result`, else API Gateway's message, else the status. */
function answerReason(record: ApiAccessRecord): string {
  try {
    const body = JSON.parse(record.responseBody) as { result?: unknown; message?: unknown };
    if (typeof body.result === 'string') return body.result;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON: the status says it.
  }
  return `http_${record.status}`;
}

/** How many delivery rows of an inbox are in each status. */
function consoleFlow(state: FlowState): NonNullable<ConsoleInbox['flow']> {
  return {
    pausedSince: state.pausedAt === undefined ? null : new Date(state.pausedAt).toISOString(),
    breaker: state.breaker,
    ...(state.openedAt !== undefined ? { openedAt: new Date(state.openedAt).toISOString() } : {}),
    ...(state.openReason !== undefined ? { reason: state.openReason } : {}),
  };
}

async function countRowsByStatus(services: LocalServices, table: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let ExclusiveStartKey: Record<string, never> | undefined;
  do {
    const page = await services.clients.dynamodb.send(
      new ScanCommand({
        TableName: table,
        ProjectionExpression: '#status, #kind',
        ExpressionAttributeNames: { '#status': InboxAttr.STATUS, '#kind': InboxAttr.SK },
        ExclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const status = item[InboxAttr.STATUS]?.S;
      if (item[InboxAttr.SK]?.S !== InboxItemKind.DELIVERY || !status) continue;
      counts[status] = (counts[status] ?? 0) + 1;
    }
    ExclusiveStartKey = page.LastEvaluatedKey as typeof ExclusiveStartKey;
  } while (ExclusiveStartKey);
  return counts;
}
