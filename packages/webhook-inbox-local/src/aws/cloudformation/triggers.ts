/**
 * What invokes a stack's functions locally, from the template: the HTTP APIs' routes and the REST
 * APIs' methods (Lambda proxy integrations), the SQS
 * event source mappings, the EventBridge rules (schedules, and event patterns on the stack's
 * buses, delivering to Lambda and SQS targets).
 */
import { randomUUID } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { ApiAccessRecord, LocalApiGateway } from '../apigateway/front-door';
import { ApiRoute, startApiGateway } from '../apigateway/http-api';
import { RestApiRoute, startRestApiGateway } from '../apigateway/rest-api';
import { busName, RecordedEvent } from '../eventbridge/stand-in';
import { LOCAL_AWS } from '../local-aws';
import { Poller, startPoller } from '../lambda/sqs-event-source';
import { constructPath, SynthesizedStack, TemplateResource } from './assembly';
import type { StackBinding } from './binding';
import { matchesEventPattern, validateEventPattern } from '../eventbridge/event-pattern';
import { refTarget } from './intrinsics';
import { placed } from './template-error';
import type { LocalFunction } from './functions';
import type { LocalQueue } from './resources';
import { parseScheduleExpression } from '../eventbridge/schedule-expression';
import { ScheduleClock, ScheduleTimers } from '../eventbridge/schedule-timers';
import type { LocalServices } from '../services';

export type { ScheduleClock } from '../eventbridge/schedule-timers';

/** An EventBridge event as targets receive it. */
export interface BusEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: unknown;
}

/** Something a rule did, for the events log. */
export interface RuleDelivery {
  readonly rule: string;
  readonly target: string;
  /** `lambda`, `sqs`, or `logged` for a target that does not run locally. */
  readonly kind: 'lambda' | 'sqs' | 'logged';
  readonly event: unknown;
  readonly error?: string;
}

export interface LocalApi {
  readonly logicalId: string;
  readonly apiId: string;
  /** The base URL a route's path follows: a REST API's ends with its stage. */
  readonly url: string;
  /** A REST API's name and stage: its metrics go by them, not by its id. */
  readonly restStage?: { readonly apiName: string; readonly stageName: string };
}

/** A route of an HTTP API or a method of a REST API; each goes only into its own API's table. */
export type LocalRoute = ApiRoute | RestApiRoute;

export interface TriggerOptions {
  /** Port of the first HTTP API (the others get free ones); 0 picks a free one. */
  readonly port?: number;
  /** Serves what is not the first API's (the twin's console). */
  readonly fallback?: Parameters<typeof startApiGateway>[0]['fallback'];
  readonly onApiResponse?: (api: LocalApi, record: ApiAccessRecord) => void;
  readonly onRuleDelivery?: (delivery: RuleDelivery) => void;
  readonly onScheduled?: (rule: string) => void;
  readonly clock: ScheduleClock;
  readonly warn: (line: string) => void;
}

/** An SQS event source mapping as it runs locally. */
export interface LocalEventSource {
  readonly poller: Poller;
  readonly functionLogicalId: string;
  readonly queueLogicalId: string;
}

export interface RunningTriggers {
  /** The event source mappings, by logical id. */
  readonly eventSources: ReadonlyMap<string, LocalEventSource>;
  /** Runs the scheduled rule (by logical id) now, as if its time had come. */
  fireSchedule(ruleLogicalId: string): Promise<void>;
}

/** Starts the API front doors first (functions may be given their endpoints); their route tables are filled once the functions run. */
export async function startApis(
  stack: SynthesizedStack,
  binding: StackBinding,
  options: Pick<TriggerOptions, 'port' | 'fallback' | 'onApiResponse' | 'warn'>,
): Promise<{ apis: LocalApi[]; routeTables: Map<string, LocalRoute[]>; stop(): Promise<void> }> {
  const apis: LocalApi[] = [];
  const routeTables = new Map<string, LocalRoute[]>();
  const gateways: LocalApiGateway[] = [];
  for (const [logicalId, resource] of resourcesOf(stack, 'AWS::ApiGatewayV2::Api')) {
    if ((resource.Properties?.ProtocolType ?? 'HTTP') !== 'HTTP') {
      options.warn(`${constructPath(stack, logicalId, resource)}: only HTTP APIs run locally`);
      continue;
    }
    const apiId = binding.get(logicalId).ref;
    const routes: ApiRoute[] = [];
    const first = apis.length === 0;
    const holder: { api?: LocalApi } = {};
    const gateway = await startApiGateway({
      port: first ? options.port : 0,
      apiId,
      routes,
      ...(first && options.fallback ? { fallback: options.fallback } : {}),
      ...(options.onApiResponse ? { onResponse: (record: ApiAccessRecord) => options.onApiResponse!(holder.api!, record) } : {}),
    });
    gateways.push(gateway);
    binding.set(logicalId, { ref: apiId, attributes: { ApiId: apiId, ApiEndpoint: gateway.url } });
    holder.api = { logicalId, apiId, url: gateway.url };
    apis.push(holder.api);
    routeTables.set(logicalId, routes);
  }
  for (const [logicalId, resource] of resourcesOf(stack, 'AWS::ApiGateway::RestApi')) {
    const stage = resourcesOf(stack, 'AWS::ApiGateway::Stage').find(([, candidate]) => refTarget(candidate.Properties?.RestApiId) === logicalId)?.[0];
    if (!stage) {
      options.warn(`${constructPath(stack, logicalId, resource)}: a REST API without a stage serves nothing`);
      continue;
    }
    const apiId = binding.get(logicalId).ref;
    const stageName = binding.resolvePropertyText(stage, 'StageName');
    const routes: RestApiRoute[] = [];
    const first = apis.length === 0;
    const holder: { api?: LocalApi } = {};
    const gateway = await startRestApiGateway({
      port: first ? options.port : 0,
      apiId,
      routes,
      stageName,
      binaryMediaTypes: ((binding.resolveProperty(logicalId, 'BinaryMediaTypes') ?? []) as string[]).map((type) => type.replace(/~1/g, '/')),
      ...(first && options.fallback ? { fallback: options.fallback } : {}),
      ...(options.onApiResponse ? { onResponse: (record: ApiAccessRecord) => options.onApiResponse!(holder.api!, record) } : {}),
    });
    gateways.push(gateway);
    const apiName = resource.Properties?.Name === undefined ? logicalId : binding.resolvePropertyText(logicalId, 'Name');
    holder.api = { logicalId, apiId, url: `${gateway.url}/${stageName}`, restStage: { apiName, stageName } };
    apis.push(holder.api);
    routeTables.set(logicalId, routes);
  }
  return { apis, routeTables, stop: () => Promise.all(gateways.map((gateway) => gateway.stop())).then(() => undefined) };
}

/** A route integrated with a local function. */
export interface IntegratedRoute {
  readonly route: LocalRoute;
  readonly functionLogicalId: string;
}

/** The routes of each HTTP API (by its logical id), integrated with the local functions. */
export function apiRoutes(
  stack: SynthesizedStack,
  binding: StackBinding,
  functions: ReadonlyMap<string, LocalFunction>,
  warn: (line: string) => void,
): Map<string, IntegratedRoute[]> {
  const byArn = new Map([...functions.values()].map((fn) => [fn.arn, fn]));
  const routes = new Map<string, IntegratedRoute[]>();
  for (const [logicalId, resource] of resourcesOf(stack, 'AWS::ApiGatewayV2::Route')) {
    const properties = resource.Properties ?? {};
    const apiLogicalId = refTarget(properties.ApiId);
    const routeKey = String(properties.RouteKey);
    const target = properties.Target === undefined ? '' : binding.resolvePropertyText(logicalId, 'Target');
    const integrationId = /^integrations\/(.+)$/.exec(target)?.[1];
    const [integrationLogicalId, integration] = Object.entries(stack.template.Resources).find(([id]) => binding.get(id).ref === integrationId) ?? [];
    const uri =
      integrationLogicalId && integration?.Properties?.IntegrationUri !== undefined ? binding.resolvePropertyText(integrationLogicalId, 'IntegrationUri') : '';
    // A Lambda proxy integration names the function by its ARN (or by the invocation path that embeds it).
    const fn = byArn.get(uri) ?? byArn.get(/functions\/(arn:[^/]+)\/invocations/.exec(uri)?.[1] ?? '');
    const path = constructPath(stack, logicalId, resource);
    if (!apiLogicalId || !fn || integration?.Properties?.IntegrationType !== 'AWS_PROXY') {
      warn(`${path}: route ${routeKey} is not a Lambda proxy integration of a local function; it answers 500`);
      continue;
    }
    if (String(integration.Properties?.PayloadFormatVersion ?? '2.0') !== '2.0')
      warn(`${path}: payload format ${integration.Properties?.PayloadFormatVersion} is sent as 2.0 locally`);
    const list = routes.get(apiLogicalId) ?? [];
    list.push({ route: { routeKey, invoke: (event: unknown) => fn.invoke<APIGatewayProxyStructuredResultV2>(event) }, functionLogicalId: fn.logicalId });
    routes.set(apiLogicalId, list);
  }
  for (const [logicalId, resource] of resourcesOf(stack, 'AWS::ApiGateway::Method')) {
    const properties = resource.Properties ?? {};
    const apiLogicalId = refTarget(properties.RestApiId);
    const integration = properties.Integration as { Type?: string; Uri?: unknown } | undefined;
    const uri = integration?.Uri === undefined ? '' : binding.resolvePropertyText(logicalId, 'Integration.Uri');
    const fn = byArn.get(/functions\/(arn:[^/]+)\/invocations/.exec(uri)?.[1] ?? '');
    const routeKey = `${String(properties.HttpMethod)} ${restResourcePath(stack, properties.ResourceId)}`;
    if (!apiLogicalId || !fn || integration?.Type !== 'AWS_PROXY') {
      warn(`${constructPath(stack, logicalId, resource)}: method ${routeKey} is not a Lambda proxy integration of a local function; it answers 403`);
      continue;
    }
    const list = routes.get(apiLogicalId) ?? [];
    list.push({ route: { routeKey, invoke: (event: unknown) => fn.invoke<APIGatewayProxyStructuredResultV2>(event) }, functionLogicalId: fn.logicalId });
    routes.set(apiLogicalId, list);
  }
  return routes;
}

/** A REST API resource's path, from its `PathPart`s up to the API's root (`Fn::GetAtt [api, RootResourceId]`). */
function restResourcePath(stack: SynthesizedStack, resourceId: unknown): string {
  const parts: string[] = [];
  for (let id = refTarget(resourceId); id !== undefined;) {
    const resource = stack.template.Resources[id];
    if (resource?.Type !== 'AWS::ApiGateway::Resource') break;
    parts.unshift(String(resource.Properties?.PathPart));
    id = refTarget(resource.Properties?.ParentId);
  }
  return `/${parts.join('/')}`;
}

export function startTriggers(
  stack: SynthesizedStack,
  binding: StackBinding,
  services: LocalServices,
  functions: ReadonlyMap<string, LocalFunction>,
  queues: ReadonlyMap<string, LocalQueue>,
  credentials: ReadonlyMap<string, { accessKeyId: string; secretAccessKey: string }>,
  options: TriggerOptions,
): RunningTriggers {
  const targets: RuleTargets = {
    functions,
    byArn: new Map([...functions.values()].map((fn) => [fn.arn, fn])),
    queuesByArn: new Map([...queues.values()].map((queue) => [queue.arn, queue])),
  };
  const eventSources = startEventSources(stack, binding, services, targets, credentials, options);
  const schedules = startRules(stack, binding, services, targets, options);
  return {
    eventSources,
    async fireSchedule(ruleLogicalId) {
      const run = schedules.get(ruleLogicalId);
      if (!run) throw new Error(`${ruleLogicalId} is not a scheduled rule of ${stack.stackName}`);
      await run();
    },
  };
}

/** The stack's functions and queues, by logical id and by ARN: what a trigger can invoke or send to. */
interface RuleTargets {
  readonly functions: ReadonlyMap<string, LocalFunction>;
  readonly byArn: ReadonlyMap<string, LocalFunction>;
  readonly queuesByArn: ReadonlyMap<string, LocalQueue>;
}

/** The SQS event source mappings of local queues, each polling with its function's execution role. */
function startEventSources(
  stack: SynthesizedStack,
  binding: StackBinding,
  services: LocalServices,
  { functions, byArn, queuesByArn }: RuleTargets,
  credentials: ReadonlyMap<string, { accessKeyId: string; secretAccessKey: string }>,
  options: Pick<TriggerOptions, 'warn'>,
): Map<string, LocalEventSource> {
  const eventSources = new Map<string, LocalEventSource>();
  for (const [logicalId, resource] of resourcesOf(stack, 'AWS::Lambda::EventSourceMapping')) {
    const properties = binding.resolveProperties(logicalId);
    const queue = queuesByArn.get(String(properties.EventSourceArn ?? ''));
    const fn = functions.get(refTarget(resource.Properties?.FunctionName) ?? '') ?? byArn.get(String(properties.FunctionName));
    if (!queue || !fn) {
      options.warn(`${constructPath(stack, logicalId, resource)}: only SQS event sources of local queues run locally`);
      continue;
    }
    if (properties.Enabled === false) continue;
    // The mapping receives with the function's execution role, from AWS's side (not through the fault proxies).
    const own = (fn.roleLogicalId && credentials.get(fn.roleLogicalId)) || LOCAL_AWS.credentials;
    const client = new SQSClient({
      endpoint: services.iam?.endpoint ?? services.endpoints.sqs,
      region: binding.region,
      credentials: own,
      useQueueUrlAsEndpoint: false,
    });
    services.onStop(() => client.destroy());
    const maximum = (properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency;
    const poller = startPoller(client, queue.url, (event: SQSEvent) => fn.invoke<SQSBatchResponse>(event), {
      batchSize: Number(properties.BatchSize ?? 10),
      concurrency: Math.max(1, Math.min(maximum ?? Number.POSITIVE_INFINITY, fn.host.concurrency)),
      queueArn: queue.arn,
      reportBatchItemFailures: ((properties.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
    });
    services.onStop(() => poller.stop());
    eventSources.set(logicalId, { poller, functionLogicalId: fn.logicalId, queueLogicalId: queue.logicalId });
  }
  return eventSources;
}

/**
 * The stack's enabled EventBridge rules: a schedule fires on its clock, an event pattern on each
 * matching event of its bus; each delivers to its Lambda and SQS targets. The scheduled rules'
 * runs, by logical id.
 */
function startRules(
  stack: SynthesizedStack,
  binding: StackBinding,
  services: LocalServices,
  { byArn, queuesByArn }: RuleTargets,
  options: TriggerOptions,
): Map<string, () => Promise<void>> {
  const operatorSqs = services.clients.sqs;
  const deliver = async (rule: string, target: Record<string, unknown>, event: BusEvent): Promise<void> => {
    const arn = String(target.Arn ?? '');
    const input = targetInput(target, event);
    const fn = byArn.get(arn);
    const queue = queuesByArn.get(arn);
    const kind: RuleDelivery['kind'] = fn ? 'lambda' : queue ? 'sqs' : 'logged';
    try {
      if (fn) await fn.invoke(input);
      else if (queue)
        await operatorSqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: typeof input === 'string' ? input : JSON.stringify(input) }));
      options.onRuleDelivery?.({ rule, target: arn, kind, event: input });
    } catch (error) {
      options.onRuleDelivery?.({ rule, target: arn, kind, event: input, error: (error as Error).message });
    }
  };

  const schedules = new Map<string, () => Promise<void>>();
  const timers = new ScheduleTimers(options.clock);
  services.onStop(() => timers.stop());
  for (const [logicalId] of resourcesOf(stack, 'AWS::Events::Rule')) {
    const properties = binding.resolveProperties(logicalId);
    if (properties.State === 'DISABLED') continue;
    const ruleName = binding.nameOf(logicalId);
    const ruleArn = binding.get(logicalId).attributes!.Arn;
    const targets = (properties.Targets as Record<string, unknown>[] | undefined) ?? [];
    const fire = (event: BusEvent) => Promise.all(targets.map((target) => deliver(ruleName, target, event))).then(() => undefined);
    if (typeof properties.ScheduleExpression === 'string') {
      const schedule = placed(binding.place(logicalId, 'ScheduleExpression'), () => parseScheduleExpression(properties.ScheduleExpression as string));
      const run = () => {
        options.onScheduled?.(ruleName);
        return fire(
          busEvent(binding, {
            source: 'aws.events',
            detailType: 'Scheduled Event',
            detail: {},
            resources: [ruleArn],
            time: new Date(options.clock.now()).toISOString(),
          }),
        );
      };
      schedules.set(logicalId, run);
      timers.arm(schedule, run);
    }
    if (properties.EventPattern !== undefined) {
      placed(binding.place(logicalId, 'EventPattern'), () => validateEventPattern(properties.EventPattern));
      const bus = busName(String(properties.EventBusName ?? 'default'));
      services.eventBridge.onAccepted((recorded) => {
        if (recorded.bus !== bus) return;
        const event = busEvent(binding, recorded);
        if (matchesEventPattern(properties.EventPattern, event)) void fire(event);
      });
    }
  }
  return schedules;
}

function resourcesOf(stack: SynthesizedStack, type: string): [string, TemplateResource][] {
  return Object.entries(stack.template.Resources).filter(([, resource]) => resource.Type === type);
}

function busEvent(
  binding: StackBinding,
  event: Pick<RecordedEvent, 'source' | 'detailType' | 'detail' | 'resources' | 'time'> & { readonly eventId?: string },
): BusEvent {
  return {
    version: '0',
    id: event.eventId ?? randomUUID(),
    'detail-type': event.detailType,
    source: event.source,
    account: binding.pseudo['AWS::AccountId'],
    time: event.time,
    region: binding.region,
    resources: event.resources,
    detail: event.detail,
  };
}

/** What a target receives: the event, a constant `Input`, the part `InputPath` selects, or an `InputTransformer`'s template filled in. */
function targetInput(target: Record<string, unknown>, event: BusEvent): unknown {
  if (typeof target.Input === 'string') return JSON.parse(target.Input) as unknown;
  if (typeof target.InputPath === 'string') return selectPath(event, target.InputPath);
  const transformer = target.InputTransformer as { InputPathsMap?: Record<string, string>; InputTemplate: string } | undefined;
  if (transformer) {
    const values = Object.fromEntries(Object.entries(transformer.InputPathsMap ?? {}).map(([name, path]) => [name, selectPath(event, path)]));
    const text = transformer.InputTemplate.replace(/<([\w.-]+)>/g, (whole, name: string) => {
      if (!(name in values)) return whole;
      const value = values[name];
      return typeof value === 'string' ? value : JSON.stringify(value);
    });
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return event;
}

/** A JSONPath of plain member access (`$.detail.status`), as rules' input paths use. */
function selectPath(value: unknown, path: string): unknown {
  if (path === '$') return value;
  return path
    .replace(/^\$\.?/, '')
    .split('.')
    .reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), value);
}
