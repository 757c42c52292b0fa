/**
 * The app the twin synthesizes when it is not given one (the fault-injection run, the bench, a
 * `--provider` choice): a `WebhookInbox` with the providers, polling, timing and limits asked
 * for, and an app role granted `grantRecordSubmission`, as a user's app would have. What the
 * twin then runs is this app's template, as it would deploy.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AuthoritativeReadSettings, PollingRuntimeConfig, RecoveryRuntimeConfig } from '../../../../lib/contract';
import { HmacProviderOptions, WebhookProvider, WebhookProviderOptions } from '../../../../lib/provider';
import { WebhookInbox } from '../../../../lib/webhook-inbox';
import { presetFor, recoveryPolling, ROW_ONLY_BODIES } from './inbox-template';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../aws/local-aws';
import { ASSEMBLY_METADATA_CONTEXT } from './synth';
import { POLLED_TWIN_PROVIDERS, TWIN_PROVIDERS } from './presets';

export { TWIN_PROVIDERS } from './presets';

/** The topic a twin's SNS provider serves: a name of the twin's own account, so it cannot be taken for a real topic. */
export const TWIN_SNS_TOPIC_ARN = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:webhook-inbox-twin`;

/**
 * The notification URL a Square provider of the twin is signed over: Square signs the URL it was
 * registered with, and the twin's own is plain HTTP on a port chosen when it starts.
 */
const twinNotificationUrl = (name: string): string => `https://localhost/hooks/${name}`;

/**
 * A provider of the twin's app: a preset under its own name (`{ name: 'shop', preset: 'stripe' }`),
 * or the generic HMAC scheme with its settings, as `WebhookProvider.hmac` takes them.
 */
export type TwinProviderSpec =
  | { readonly name: string; readonly preset: string }
  | ({ readonly name: string; readonly preset: 'hmac' } & Omit<HmacProviderOptions, keyof WebhookProviderOptions>);

/**
 * The twin's reconciler timeout, compressed from the construct's 2 minutes with the rest of its
 * timing (a shorter `sweepAfter` needs it): still room for one provider poll (10 s by default) and
 * the 5 s a run keeps in hand after it.
 */
export const TWIN_RECONCILER_TIMEOUT_SECONDS = 20;

export const TWIN_STACK = 'LocalTwin';
export const TWIN_INBOX_NAME = 'local-twin';
/** The construct id of the app role granted `grantRecordSubmission`. */
export const RECORDING_APP_ID = 'RecordingApp';

export interface TwinAppOptions {
  /** Preset names, or providers with their own names and settings. */
  readonly providers: readonly (string | TwinProviderSpec)[];
  /** The processor's timeout (and claim lease); the visibility timeout is the construct's multiple of it. */
  readonly processorTimeoutSeconds: number;
  /**
   * The reconciler's timeout. `sweepAfterSeconds` must outlast it, and every other function's, by
   * the construct's margin (the construct refuses it otherwise). @default 20
   */
  readonly reconcilerTimeoutSeconds?: number;
  readonly sweepAfterSeconds: number;
  /** The reconciler's schedule, in whole minutes (EventBridge's smallest rate is one minute). */
  readonly reconcileEveryMinutes: number;
  /** Receives of a work message before it goes to the DLQ. @default the construct's */
  readonly maxReceiveCount?: number;
  /** The verifier's reserved concurrency. @default none */
  readonly verifierConcurrency?: number;
  /** The processor's event source concurrency (at least 2, as Lambda requires). @default the construct's */
  readonly processorConcurrency?: number;
  /** The most due submissions one reconciler run checks. @default the construct's */
  readonly pollBatchSize?: number;
  /** How the reconciler polls providers (e.g. the fake provider APIs of a fault-injection run); API keys are secrets the twin creates by name. */
  readonly polling?: readonly PollingRuntimeConfig[];
  /** Providers recovered from their own event log (GitHub, Stripe: e.g. against the fake APIs); credentials are secrets the twin creates by name. */
  readonly recovery?: readonly RecoveryRuntimeConfig[];
  /** The authoritative read of a provider, by provider name (e.g. against a fake resource API). */
  readonly authoritativeReads?: Readonly<Record<string, AuthoritativeReadSettings>>;
  /** Without a body bucket: every body must fit a row. */
  readonly inlineBodiesOnly?: boolean;
  /** Records of refused requests a minute per provider (`rejectionRecordsPerMinute`). @default the construct's */
  readonly rejectionRecordsPerMinute?: number;
  /** The circuit breaker's cool-down, seconds (its other settings stay the construct's). @default the construct's */
  readonly breakerCoolDownSeconds?: number;
  /** The throttle of a provider's route, by provider name. @default the construct's */
  readonly routeThrottles?: Readonly<Record<string, { readonly rateLimit: number; readonly burstLimit: number }>>;
}

/** Synthesizes the twin's app into a new cloud assembly folder; returns it. */
export function synthesizeTwinApp(options: TwinAppOptions): string {
  const outdir = mkdtempSync(join(tmpdir(), 'webhook-inbox-twin-app-'));
  // The shipped bundles are read where they are: no copy into the assembly.
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, TWIN_STACK, { env: { account: LOCAL_ACCOUNT, region: LOCAL_REGION } });
  const apiKeys = new Map<string, secretsmanager.ISecret>();
  const apiKey = (name: string) => {
    if (!apiKeys.has(name)) apiKeys.set(name, secretsmanager.Secret.fromSecretNameV2(stack, `ApiKey${apiKeys.size}`, name));
    return apiKeys.get(name)!;
  };
  const providers = options.providers.map((entry) => {
    const spec: TwinProviderSpec = typeof entry === 'string' ? { name: entry, preset: entry } : entry;
    const { name } = spec;
    const polling = options.polling?.find((candidate) => candidate.provider === name);
    const recovery = options.recovery?.find((candidate) => candidate.provider === name);
    const read = options.authoritativeReads?.[name];
    const preset: WebhookProviderOptions = {
      name,
      ...(polling
        ? {
            polling: {
              apiKeySecret: apiKey(polling.apiKeySecretId),
              taskUrlTemplate: polling.taskUrlTemplate,
              horizon: Duration.seconds(polling.horizonSeconds),
              recheckInterval: Duration.seconds(polling.recheckSeconds),
            },
          }
        : {}),
      ...(recovery ? { polling: recoveryPolling(recovery, apiKey(recovery.credentialsSecretId)) } : {}),
      ...(read ? { authoritativeRead: { urlTemplate: read.urlTemplate, idJsonPath: read.idJsonPath, apiKeySecret: apiKey(read.apiKeySecretId) } } : {}),
      ...(options.routeThrottles?.[name] ? { throttle: options.routeThrottles[name] } : {}),
    };
    if (spec.preset === 'hmac') {
      const { name: _name, preset: _preset, ...scheme } = spec as Extract<TwinProviderSpec, { preset: 'hmac' }>;
      return WebhookProvider.hmac({ ...preset, ...scheme });
    }
    const known = TWIN_PROVIDERS[spec.preset] ?? (polling ? POLLED_TWIN_PROVIDERS[spec.preset] : undefined);
    if (!known) throw new Error(`unknown preset "${spec.preset}" for provider ${name}; the twin serves ${[...Object.keys(TWIN_PROVIDERS), 'hmac'].join(', ')}`);
    return presetFor({ name, adapter: known.adapter, notificationUrl: twinNotificationUrl(name), topicArns: [TWIN_SNS_TOPIC_ARN] }, preset);
  });
  const inbox = new WebhookInbox(stack, 'Inbox', {
    inboxName: TWIN_INBOX_NAME,
    providers,
    publishEvents: true,
    processorFunctionProps: { timeout: Duration.seconds(options.processorTimeoutSeconds) },
    ...(options.verifierConcurrency ? { verifierFunctionProps: { reservedConcurrentExecutions: options.verifierConcurrency } } : {}),
    ...(options.processorConcurrency ? { processorMaxConcurrency: Math.max(2, options.processorConcurrency) } : {}),
    // One reconciler at a time, as the twin always ran it: overlapping sweeps under a compressed
    // schedule re-enqueue the same stranded rows over and over.
    reconcilerFunctionProps: {
      reservedConcurrentExecutions: 1,
      timeout: Duration.seconds(options.reconcilerTimeoutSeconds ?? TWIN_RECONCILER_TIMEOUT_SECONDS),
    },
    sweepAfter: Duration.seconds(options.sweepAfterSeconds),
    reconcileSchedule: events.Schedule.rate(Duration.minutes(options.reconcileEveryMinutes)),
    ...(options.maxReceiveCount ? { maxReceiveCount: options.maxReceiveCount } : {}),
    ...(options.pollBatchSize ? { pollBatchSize: options.pollBatchSize } : {}),
    ...(options.inlineBodiesOnly ? ROW_ONLY_BODIES : {}),
    ...(options.rejectionRecordsPerMinute !== undefined ? { rejectionRecordsPerMinute: options.rejectionRecordsPerMinute } : {}),
    ...(options.breakerCoolDownSeconds !== undefined ? { circuitBreaker: { coolDown: Duration.seconds(options.breakerCoolDownSeconds) } } : {}),
  });
  inbox.grantRecordSubmission(new iam.Role(stack, RECORDING_APP_ID, { assumedBy: new iam.AccountRootPrincipal() }));
  app.synth();
  return outdir;
}
