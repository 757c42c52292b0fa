/**
 * The twin of one inbox, as the demo, the fault-injection run and the bench drive it: `startTwin`
 * synthesizes the twin's own app (app.ts) and runs it with `startTemplateTwin`; `twinOf` is the
 * twin of one inbox of any running template.
 */
import { rmSync } from 'node:fs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { LambdaHost } from '../aws/lambda/host';
import type { EventBridgeStandIn } from '../aws/eventbridge/stand-in';
import type { IamGateway, LocalCredentials } from '../aws/iam/gateway';
import type { Poller } from '../aws/lambda/sqs-event-source';
import type { Interceptor } from '../aws/cloudformation/functions';
import type { LocalInbox } from '../aws/cloudformation/run-stack';
import type { LocalFaults, ServiceEndpoints } from '../aws/services';
import { RECORDING_APP_ID, synthesizeTwinApp, TwinAppOptions, TwinProviderSpec } from './app';
import { startTemplateTwin, TemplateTwin } from './twin';

/** Durations of the twin's own app, compressed from the construct's defaults so that recovery is visible. */
export interface TwinTiming {
  /** The processor's timeout (and claim lease); the visibility timeout is six times it. */
  readonly processorTimeoutSeconds: number;
  /** The reconciler's timeout. @default TWIN_RECONCILER_TIMEOUT_SECONDS */
  readonly reconcilerTimeoutSeconds?: number;
  /**
   * A row unprocessed this long is re-enqueued by the reconciler: at least every function's timeout
   * plus the construct's margin (`Limits.SWEEP_AFTER_MARGIN_SECONDS`), as the construct requires.
   */
  readonly sweepAfterSeconds: number;
  /** How often the reconciler runs (below a minute, the schedule of one minute runs faster). */
  readonly reconcileEverySeconds: number;
}

export const DEFAULT_TWIN_TIMING: TwinTiming = { processorTimeoutSeconds: 5, sweepAfterSeconds: 30, reconcileEverySeconds: 5 };

/** What the twin's own app is built with, as `TwinAppOptions` says (providers and timing aside). */
type TwinAppSettings = Pick<
  TwinAppOptions,
  | 'maxReceiveCount'
  | 'verifierConcurrency'
  | 'processorConcurrency'
  | 'pollBatchSize'
  | 'polling'
  | 'recovery'
  | 'authoritativeReads'
  | 'rejectionRecordsPerMinute'
  | 'routeThrottles'
  | 'breakerCoolDownSeconds'
>;

export interface TwinOptions extends TwinAppSettings {
  /** Port of the webhook endpoint; 0 picks a free one. */
  readonly port?: number;
  /** Preset names, or providers with their own names and settings. @default answerline and echonova */
  readonly providers?: readonly (string | TwinProviderSpec)[];
  /** Signing secrets by provider; the others are generated. */
  readonly secrets?: Readonly<Record<string, string>>;
  /** Keep DynamoDB data in this folder across restarts (bodies then stay inline: fauxqs keeps objects in memory only). */
  readonly dataDir?: string;
  readonly timing?: TwinTiming;
  /** Where the twin writes the ops CLI's configuration and the functions' logs. */
  readonly stateDir?: string;
  /** More secrets to create in the Secrets Manager stand-in, name → value (API keys of polling and authoritative reads). */
  readonly extraSecrets?: Readonly<Record<string, string>>;
  /** Enforce each function's IAM policy from the synthesized template. @default true */
  readonly enforceIam?: boolean;
  /** Wrap the invocations of the verifier (through the API front door) and the processor (from the queue). */
  readonly interceptors?: {
    readonly verifier?: Interceptor<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>;
    readonly processor?: Interceptor<SQSEvent, SQSBatchResponse>;
  };
  /** Progress and warnings. @default stderr */
  readonly log?: (line: string) => void;
  /** What the alarms' runbook paths are relative to (TemplateTwinOptions.runbookBase). */
  readonly runbookBase?: string;
}

/** The names of one inbox's resources, as the twin created them from the template. */
export interface TwinInboxNames {
  readonly inboxTable: string;
  readonly resultsTable: string;
  readonly workQueue: string;
  readonly deadLetterQueue: string;
  readonly bodyBucket?: string;
}

/** The local credentials of the roles of a twin's inbox. */
export interface TwinCredentials {
  readonly app?: LocalCredentials;
  readonly verifier?: LocalCredentials;
  readonly processor?: LocalCredentials;
  readonly reconciler?: LocalCredentials;
}

/** A twin of one inbox, as the demo, the fault-injection run and the bench drive it. */
export interface Twin {
  readonly template: TemplateTwin;
  readonly inbox: LocalInbox;
  /** The webhook URL of each provider. */
  readonly urls: Readonly<Record<string, string>>;
  /** The URL a provider that signs one signs (Square, Twilio), by provider. */
  readonly signedUrls: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly names: TwinInboxNames;
  readonly workQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** Service endpoints as clients outside the twin use them (not behind the fault proxies). */
  readonly endpoints: ServiceEndpoints;
  readonly hosts: { readonly verifier: LambdaHost; readonly processor: LambdaHost; readonly reconciler: LambdaHost };
  /** Faults between the functions and the services they call (store, queue, bus). */
  readonly faults: LocalFaults;
  /** The bus stand-in, recording every event. */
  readonly eventBridge: EventBridgeStandIn;
  /**
   * The IAM gateway, the credentials of the app role granted grantRecordSubmission, and each
   * function's own (what tells their calls apart at a fault proxy); absent with `enforceIam: false`.
   */
  readonly iam?: { readonly gateway: IamGateway; readonly endpoint: string; readonly credentials: TwinCredentials };
  readonly poller: Poller;
  readonly opsConfigPath: string;
  /** One file per function, as CloudWatch Logs keeps one log group per function. */
  readonly logDir: string;
  reconcileNow(): Promise<unknown>;
  stop(): Promise<void>;
}

export async function startTwin(options: TwinOptions = {}): Promise<Twin> {
  const timing = options.timing ?? DEFAULT_TWIN_TIMING;
  const providers = options.providers ?? ['answerline', 'echonova'];
  // EventBridge's smallest rate is a minute: a faster reconciler runs the one-minute schedule faster.
  const everyMinute = timing.reconcileEverySeconds < 60 || timing.reconcileEverySeconds % 60 !== 0;
  const assembly = synthesizeTwinApp({
    providers,
    processorTimeoutSeconds: timing.processorTimeoutSeconds,
    reconcilerTimeoutSeconds: timing.reconcilerTimeoutSeconds,
    sweepAfterSeconds: timing.sweepAfterSeconds,
    reconcileEveryMinutes: everyMinute ? 1 : timing.reconcileEverySeconds / 60,
    maxReceiveCount: options.maxReceiveCount,
    verifierConcurrency: options.verifierConcurrency ?? 4,
    processorConcurrency: options.processorConcurrency ?? 2,
    pollBatchSize: options.pollBatchSize,
    polling: options.polling,
    recovery: options.recovery,
    authoritativeReads: options.authoritativeReads,
    rejectionRecordsPerMinute: options.rejectionRecordsPerMinute,
    routeThrottles: options.routeThrottles,
    breakerCoolDownSeconds: options.breakerCoolDownSeconds,
    inlineBodiesOnly: Boolean(options.dataDir),
  });
  options.log?.(`synthesized the twin's own app (${providers.map((spec) => (typeof spec === 'string' ? spec : spec.name)).join(', ')})`);
  let template: TemplateTwin;
  try {
    template = await startTemplateTwin({
      app: assembly,
      port: options.port,
      secrets: options.secrets,
      dataDir: options.dataDir,
      stateDir: options.stateDir,
      timeScale: everyMinute ? 60 / timing.reconcileEverySeconds : 1,
      // Its timing already sets the visibility timeouts it wants.
      visibilityTimeScale: 1,
      enforceIam: options.enforceIam,
      extraSecrets: options.extraSecrets,
      log: options.log,
      runbookBase: options.runbookBase,
    });
  } finally {
    rmSync(assembly, { recursive: true, force: true });
  }
  return twinOf(template, template.inboxes[0], options.interceptors);
}

/** The twin of one inbox of a running template. */
export function twinOf(template: TemplateTwin, inbox: LocalInbox, interceptors?: TwinOptions['interceptors']): Twin {
  const { verifier, processor, reconciler } = inbox.functions;
  if (!verifier || !processor || !reconciler) throw new Error(`the inbox ${inbox.opsConfig.inboxName} lacks a verifier, processor or reconciler function`);
  if (interceptors?.verifier) verifier.intercept(interceptors.verifier as Interceptor);
  if (interceptors?.processor) processor.intercept(interceptors.processor as Interceptor);
  const stack = template.stacks.find((candidate) => candidate.stack.stackName === inbox.stackName)!;
  const services = template.services;
  const appRole = Object.entries(stack.stack.template.Resources).find(
    ([, resource]) => resource.Metadata?.['aws:cdk:path'] === `${stack.stack.stackName}/${RECORDING_APP_ID}/Resource`,
  )?.[0];
  const eventSource = [...stack.eventSources.values()].find((source) => source.functionLogicalId === processor.logicalId);
  if (!eventSource) throw new Error(`the inbox ${inbox.opsConfig.inboxName}'s processor has no event source`);
  const config = inbox.opsConfig;
  const roleOf = (fn: { readonly roleLogicalId?: string }) => (fn.roleLogicalId ? stack.credentials.get(fn.roleLogicalId) : undefined);
  const functionCredentials = { verifier: roleOf(verifier), processor: roleOf(processor), reconciler: roleOf(reconciler) };
  return {
    template,
    inbox,
    urls: Object.fromEntries(inbox.providers.map((provider) => [provider.name, provider.url])),
    signedUrls: Object.fromEntries(inbox.providers.flatMap((provider) => (provider.signedUrl ? [[provider.name, provider.signedUrl]] : []))),
    secrets: Object.fromEntries(inbox.providers.map((provider) => [provider.name, provider.secret])),
    names: {
      inboxTable: config.inboxTable,
      resultsTable: config.resultsTable,
      workQueue: inbox.workQueue.name,
      deadLetterQueue: inbox.deadLetterQueue?.name ?? '',
      ...(config.bodyBucket ? { bodyBucket: config.bodyBucket } : {}),
    },
    workQueueUrl: config.workQueueUrl,
    deadLetterQueueUrl: config.deadLetterQueueUrl ?? '',
    endpoints: services.endpoints,
    hosts: { verifier: verifier.host, processor: processor.host, reconciler: reconciler.host },
    faults: services.faults,
    eventBridge: services.eventBridge,
    ...(services.iam ? { iam: { ...services.iam, credentials: { app: appRole ? stack.credentials.get(appRole) : undefined, ...functionCredentials } } } : {}),
    poller: eventSource.poller,
    opsConfigPath: template.opsConfigPaths[config.inboxName],
    logDir: template.logDir,
    reconcileNow: () => reconciler.invoke({ source: 'aws.events', 'detail-type': 'Scheduled Event' }),
    stop: () => template.stop(),
  };
}
