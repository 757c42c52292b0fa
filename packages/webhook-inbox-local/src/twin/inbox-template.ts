/**
 * Synthesizes the template a `WebhookInbox` deploys for a given runtime configuration (the
 * providers as the handlers are configured with them, the body bucket, the bus, the user's
 * function, rotation). The user-supplied pieces (API key secrets, the processing and
 * registration functions) are resources of the same stack, as in a user's app, so that every
 * resource the policies name is a logical id a local run binds to its own stand-in. The handler
 * tests and the local twin take each function's IAM policy from it: what they enforce is what the
 * construct deploys.
 */
import { App, Duration, Size, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, IConstruct } from 'constructs';
import {
  Defaults,
  GitHubHookTarget,
  HmacRuntimeSettings,
  PollingRuntimeConfig,
  RecoveryRuntimeConfig,
  ProviderFacts,
  providerFactsOf,
  ProviderRuntimeConfig,
  SECRETLESS_ADAPTERS,
} from '../../../../lib/contract';
import { PresetExtras, presetConfig } from '../../../../lib/private/presets';
import { WebhookInbox } from '../../../../lib/webhook-inbox';
import {
  GitHubHook,
  HmacAlgorithm,
  HmacProviderOptions,
  ProviderPolling,
  SecretEncoding,
  SignatureEncoding,
  WebhookProvider,
  WebhookProviderConfig,
  WebhookProviderOptions,
} from '../../../../lib/provider';
import type { Template } from '../aws/iam/template-policies';

/** The roles of an inbox whose calls are judged by IAM: its functions', and an app's with `grantRecordSubmission`. */
export type InboxRole = 'verifier' | 'processor' | 'reconciler' | 'rotator' | 'app';

export interface InboxTemplateSpec {
  readonly account: string;
  readonly region: string;
  /**
   * The providers, as the handlers are configured. Signing secrets are the construct's own; the
   * API key secret ids of authoritative reads and polling only tell which providers share one.
   */
  readonly providers: readonly ProviderRuntimeConfig[];
  readonly polling?: readonly PollingRuntimeConfig[];
  /** Providers recovered from their own event log (GitHub, Stripe); their credentials secret ids, like API keys', only tell which share one. */
  readonly recovery?: readonly RecoveryRuntimeConfig[];
  /** Whether bodies too large for a row go to a bucket. */
  readonly bodyBucket?: boolean;
  /** Whether effects go to an event bus. */
  readonly eventBus?: boolean;
  /** Whether effects go to the user's processing function. */
  readonly processingFunction?: boolean;
  /** Providers whose signing secret the rotator rotates, and whether a function registers each new secret. */
  readonly rotation?: { readonly providers: readonly string[]; readonly registerFunction?: boolean };
  /**
   * Providers whose signing secret the app imports by its complete ARN instead of the construct
   * creating one, by provider name, with the KMS key the import names (none: imported without it).
   */
  readonly importedSigningSecrets?: Readonly<Record<string, { readonly secretArn: string; readonly encryptionKeyArn?: string }>>;
}

/** Props of an inbox without a body bucket: bodies up to 64 KiB, each kept in its row. */
export const ROW_ONLY_BODIES = { maxBodySize: Size.kibibytes(64), inlineBodyLimit: Size.kibibytes(64) };

/** The template and the logical ids of what a local run stands in for. */
export interface SynthesizedInbox {
  readonly template: Template;
  readonly logicalIds: {
    readonly inboxTable: string;
    readonly resultsTable: string;
    readonly workQueue: string;
    readonly deadLetterQueue: string;
    readonly bodyBucket?: string;
    readonly eventBus?: string;
    /** Each provider's signing secret, by provider name. */
    readonly signingSecrets: Readonly<Record<string, string>>;
    /** The API key secrets of authoritative reads and polling, by the secret id the spec named. */
    readonly apiKeySecrets: Readonly<Record<string, string>>;
    readonly processingFunction?: string;
    readonly registerFunction?: string;
    readonly roles: Readonly<Partial<Record<InboxRole, string>>>;
  };
}

const STACK_NAME = 'LocalInbox';

export function synthesizeInbox(spec: InboxTemplateSpec): SynthesizedInbox {
  // Assets stay where they are: only the template is read.
  const app = new App({ context: { 'aws:cdk:disable-asset-staging': true } });
  const stack = new Stack(app, STACK_NAME, { env: { account: spec.account, region: spec.region } });
  const apiKeys = new Map<string, secretsmanager.Secret>();
  const secret = (secretId: string) => {
    let found = apiKeys.get(secretId);
    if (!found) {
      found = new secretsmanager.Secret(stack, `ApiKey${apiKeys.size}`);
      apiKeys.set(secretId, found);
    }
    return found;
  };
  const userFunction = (id: string) =>
    new lambda.Function(stack, id, {
      runtime: lambda.Runtime.NODEJS_LATEST,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => ({});'),
    });
  const registerFunction = spec.rotation?.registerFunction ? userFunction('RegisterFunction') : undefined;
  const imported = (provider: string): secretsmanager.ISecret | undefined => {
    const given = spec.importedSigningSecrets?.[provider];
    if (!given) return undefined;
    const encryptionKey = given.encryptionKeyArn ? kms.Key.fromKeyArn(stack, `${provider}-signing-key`, given.encryptionKeyArn) : undefined;
    return secretsmanager.Secret.fromSecretAttributes(stack, `${provider}-signing-secret`, { secretCompleteArn: given.secretArn, encryptionKey });
  };
  const processingFunction = spec.processingFunction ? userFunction('ProcessingFunction') : undefined;
  const providers = spec.providers.map((config) => {
    const polling = spec.polling?.find((entry) => entry.provider === config.name);
    const recovery = spec.recovery?.find((entry) => entry.provider === config.name);
    const signingSecret = imported(config.name);
    const options: WebhookProviderOptions = {
      name: config.name,
      pastTolerance: Duration.seconds(config.tolerancePastSeconds),
      futureTolerance: Duration.seconds(config.toleranceFutureSeconds),
      previousSecretGracePeriod: Duration.seconds(config.previousSecretGraceSeconds ?? Defaults.PREVIOUS_SECRET_GRACE_SECONDS),
      ...(config.authoritativeRead
        ? {
            authoritativeRead: {
              urlTemplate: config.authoritativeRead.urlTemplate,
              idJsonPath: config.authoritativeRead.idJsonPath,
              apiKeySecret: secret(config.authoritativeRead.apiKeySecretId),
            },
          }
        : {}),
      ...(polling
        ? {
            polling: {
              apiKeySecret: secret(polling.apiKeySecretId),
              taskUrlTemplate: polling.taskUrlTemplate,
              horizon: Duration.seconds(polling.horizonSeconds),
              recheckInterval: Duration.seconds(polling.recheckSeconds),
            },
          }
        : {}),
      ...(recovery ? { polling: recoveryPolling(recovery, secret(recovery.credentialsSecretId)) } : {}),
      ...(spec.rotation?.providers.includes(config.name) ? { rotation: { registerFunction } } : {}),
      ...(signingSecret ? { signingSecret } : {}),
    };
    return presetFor(config, options);
  });
  const inbox = new WebhookInbox(stack, 'Inbox', {
    providers,
    publishEvents: spec.eventBus ?? false,
    // Without a bucket, every body must fit a row: the construct then creates none.
    ...(spec.bodyBucket ? {} : ROW_ONLY_BODIES),
    ...(processingFunction ? { processingFunction } : {}),
    dashboard: { enabled: false },
  });
  const appRole = new iam.Role(stack, 'App', { assumedBy: new iam.AccountRootPrincipal() });
  inbox.grantRecordSubmission(appRole);

  const id = (construct: IConstruct | undefined) => (construct ? stack.getLogicalId(construct.node.defaultChild as never) : undefined);
  const roleId = (role: iam.IRole | undefined) => id(role as unknown as IConstruct | undefined);
  const logicalIds: SynthesizedInbox['logicalIds'] = {
    inboxTable: id(inbox.inboxTable)!,
    resultsTable: id(inbox.resultsTable)!,
    workQueue: id(inbox.workQueue)!,
    deadLetterQueue: id(inbox.deadLetterQueue)!,
    ...(inbox.bodyBucket ? { bodyBucket: id(inbox.bodyBucket) } : {}),
    ...(inbox.eventBus ? { eventBus: id(inbox.eventBus) } : {}),
    signingSecrets: Object.fromEntries(
      spec.providers
        // An imported secret is no resource of the template: its policies name its ARN.
        .filter((config) => !SECRETLESS_ADAPTERS.includes(config.adapter) && !spec.importedSigningSecrets?.[config.name])
        .map((config) => [config.name, id(inbox.signingSecretFor(config.name))!]),
    ),
    apiKeySecrets: Object.fromEntries([...apiKeys].map(([secretId, created]) => [secretId, id(created)!])),
    ...(processingFunction ? { processingFunction: id(processingFunction) } : {}),
    ...(registerFunction ? { registerFunction: id(registerFunction) } : {}),
    roles: {
      verifier: roleId(inbox.verifierFunction.role),
      processor: roleId(inbox.processorFunction.role),
      reconciler: roleId(inbox.reconcilerFunction.role),
      ...(inbox.rotatorFunction ? { rotator: roleId(inbox.rotatorFunction.role) } : {}),
      app: roleId(appRole),
    },
  };
  const template = app.synth({ validateOnSynthesis: false }).getStackByName(STACK_NAME).template as Template;
  return { template, logicalIds };
}

/** The construct's `polling` of a provider recovered from its own log, as the runtime's configuration describes it. */
export function recoveryPolling(recovery: RecoveryRuntimeConfig, credentials: secretsmanager.ISecret): ProviderPolling {
  return {
    apiKeySecret: credentials,
    baseUrl: recovery.baseUrl,
    ...(recovery.hook ? { githubHook: githubHookOf(recovery.hook) } : {}),
    ...(recovery.eventTypes ? { eventTypes: [...recovery.eventTypes] } : {}),
  };
}

/** The construct's `GitHubHook` of a runtime hook target. */
function githubHookOf(hook: GitHubHookTarget): GitHubHook {
  if (hook.kind === 'app') return GitHubHook.app();
  return hook.kind === 'organization' ? GitHubHook.organization(hook.owner!, hook.hookId!) : GitHubHook.repository(hook.owner!, hook.hookId!);
}

/** The construct's preset for a provider of an adapter kind (the generic HMAC scheme from its runtime settings). */
export function presetFor(
  config: Pick<ProviderRuntimeConfig, 'name' | 'adapter' | 'hmac' | 'notificationUrl' | 'topicArns'>,
  options: WebhookProviderOptions,
): WebhookProvider {
  const facts = providerFactsOf(config.adapter);
  if (!facts) throw new Error(`provider ${config.name}: unknown adapter ${config.adapter}`);
  return new TwinPreset(facts, options, {
    ...(config.hmac ? { hmacScheme: hmacOptionsOf(config.hmac, options) } : {}),
    ...(config.notificationUrl !== undefined ? { signedUrl: config.notificationUrl } : {}),
    ...(config.topicArns ? { topicArns: [...config.topicArns] } : {}),
  });
}

/** A preset of any kind, bound as its static factory binds it: from its facts and the options. */
class TwinPreset extends WebhookProvider {
  constructor(
    private readonly facts: ProviderFacts,
    private readonly options: WebhookProviderOptions,
    private readonly extras: PresetExtras,
  ) {
    super();
  }

  public bind(_scope: Construct): WebhookProviderConfig {
    return presetConfig(this.facts, this.options, this.extras);
  }
}

/** The `hmac()` options a generic scheme's runtime settings were made of. */
function hmacOptionsOf(scheme: HmacRuntimeSettings, options: WebhookProviderOptions): HmacProviderOptions {
  return {
    ...options,
    signatureHeader: scheme.signatureHeader,
    algorithm: scheme.algorithm as HmacAlgorithm,
    signatureEncoding: scheme.encoding as SignatureEncoding,
    signaturePrefix: scheme.prefix,
    signedContent: scheme.signedContent,
    timestampHeader: scheme.timestampHeader,
    idHeader: scheme.idHeader,
    idJsonPath: scheme.idJsonPath,
    secretEncoding: scheme.secretEncoding as SecretEncoding,
    acknowledgeUnsignedIdHeader: scheme.acknowledgeUnsignedIdHeader,
  };
}
