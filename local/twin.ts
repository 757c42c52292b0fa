/**
 * The local twin: the whole inbox on 127.0.0.1, with no AWS account. The emulators (dynalite for
 * DynamoDB, fauxqs for SQS and S3) and the stand-ins (Secrets Manager, Lambda Invoke) start in
 * this process; the tables, queues and bucket are created from the construct's own definitions;
 * the SAME handler bundles that deploy to Lambda run in their own execution environments
 * (processes) behind an API Gateway front door, an SQS event source and a schedule. Each
 * function calls AWS with its own role's credentials through the IAM gateway, which enforces
 * the role's policy from the template the construct synthesizes for this configuration.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { LocalOpsConfig } from '../lib/contract';
import { AdapterKind, AuthoritativeReadSettings, Defaults, Limits, PollingRuntimeConfig, ProviderRuntimeConfig, providerRuntimeConfig } from '../lib/contract';
import { handlerEnvironments, handlerSettingsWithDefaults } from '../lib/handler-environment';
import { startApiGateway } from './api-gateway';
import { IamGateway, LocalCredentials } from './iam/gateway';
import { inboxBinding, registerInboxRoles } from './iam/inbox-roles';
import { InboxRole, synthesizeInbox } from './inbox-template';
import { EventBridgeStandIn } from './eventbridge-stand-in';
import { endpointTarget, FaultProxy } from './fault-proxy';
import { CrashAfter, LambdaHost } from './lambda-host';
import { LambdaInvokeStandIn } from './lambda-invoke-stand-in';
import { LOCAL_ACCOUNT, LOCAL_AWS, LOCAL_REGION, OPERATOR_ACCESS_KEY } from './local-aws';
import { createBodyBucket, createQueues, createTables, InboxResourceNames, resourceNames } from './provision';
import { SecretsManagerStandIn } from './secrets-manager-stand-in';
import { Poller, startPoller } from './sqs-event-source';

/** The providers the twin can serve by name, and the form of secret each expects. */
export const TWIN_PROVIDERS: Readonly<Record<string, { adapter: string; secret: () => string }>> = {
  answerline: { adapter: AdapterKind.ANSWERLINE, secret: () => `whsec_${randomBytes(24).toString('base64')}` },
  echonova: { adapter: AdapterKind.ECHONOVA, secret: () => randomBytes(32).toString('hex') },
  'standard-webhooks': { adapter: AdapterKind.STANDARD_WEBHOOKS, secret: () => `whsec_${randomBytes(24).toString('base64')}` },
  stripe: { adapter: AdapterKind.STRIPE, secret: () => `whsec_${randomBytes(24).toString('hex')}` },
  github: { adapter: AdapterKind.GITHUB, secret: () => randomBytes(20).toString('hex') },
};

/** Durations of the twin, compressed from the construct's defaults so that recovery is visible. */
export interface TwinTiming {
  /** The processor's timeout (and claim lease); the visibility timeout is six times it. */
  readonly processorTimeoutSeconds: number;
  /** A row unprocessed this long is re-enqueued by the reconciler. */
  readonly sweepAfterSeconds: number;
  /** How often the reconciler runs. */
  readonly reconcileEverySeconds: number;
}

export const DEFAULT_TWIN_TIMING: TwinTiming = { processorTimeoutSeconds: 5, sweepAfterSeconds: 10, reconcileEverySeconds: 5 };

/** A fault to inject into one invocation of a function. */
export interface InvocationFault {
  readonly crashAfter?: CrashAfter;
}

/**
 * Wraps every invocation of a function, for fault injection: it may inject a fault through
 * `invoke`, answer without invoking at all (the function unreachable), or observe the outcome.
 */
export type Interceptor<E, R> = (event: E, invoke: (fault?: InvocationFault) => Promise<R>) => Promise<R>;

export interface TwinOptions {
  /** Port of the webhook endpoint; 0 picks a free one. */
  readonly port?: number;
  readonly providers?: readonly string[];
  /** Signing secrets by provider; the others are generated. */
  readonly secrets?: Readonly<Record<string, string>>;
  /** Keep DynamoDB data in this folder across restarts. */
  readonly dataDir?: string;
  readonly timing?: TwinTiming;
  readonly verifierConcurrency?: number;
  readonly processorConcurrency?: number;
  readonly maxReceiveCount?: number;
  /** Where the twin writes the ops CLI's configuration and the functions' logs. */
  readonly stateDir?: string;
  /** How the reconciler polls providers (e.g. the fake provider APIs of a fault-injection run). */
  readonly polling?: readonly PollingRuntimeConfig[];
  /** The authoritative read of a provider, by provider name (e.g. against a fake resource API). */
  readonly authoritativeReads?: Readonly<Record<string, AuthoritativeReadSettings>>;
  /** More secrets to create in the Secrets Manager stand-in, name → value (API keys of polling and authoritative reads). */
  readonly extraSecrets?: Readonly<Record<string, string>>;
  /** The most stranded rows one reconciler run re-enqueues. @default Defaults.SWEEP_BATCH_SIZE */
  readonly sweepBatchSize?: number;
  /** The most due submissions one reconciler run checks. @default Defaults.POLL_BATCH_SIZE */
  readonly pollBatchSize?: number;
  /**
   * Enforce each function's IAM policy from the synthesized template (the IAM gateway).
   * @default true
   */
  readonly enforceIam?: boolean;
  /** Wrap the invocations of the verifier (through the API front door) and the processor (from the queue). */
  readonly interceptors?: {
    readonly verifier?: Interceptor<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>;
    readonly processor?: Interceptor<SQSEvent, SQSBatchResponse>;
  };
}

export interface Twin {
  /** The webhook URL of each provider. */
  readonly urls: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly names: InboxResourceNames;
  readonly workQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** Emulator endpoints as clients outside the twin should use them (not behind the fault proxies). */
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly s3?: string; readonly secretsManager: string; readonly lambda: string };
  readonly hosts: { readonly verifier: LambdaHost; readonly processor: LambdaHost; readonly reconciler: LambdaHost };
  /** Faults between the functions and their store and queue. */
  readonly faults: { readonly dynamodb: FaultProxy; readonly sqs: FaultProxy };
  /** The bus effects are published to, recording every event. */
  readonly eventBridge: EventBridgeStandIn;
  /** The IAM gateway every function calls AWS through, and the credentials of each role (`app`: an app granted grantRecordSubmission); absent with `enforceIam: false`. */
  readonly iam?: { readonly gateway: IamGateway; readonly endpoint: string; readonly credentials: Readonly<Partial<Record<InboxRole, LocalCredentials>>> };
  readonly poller: Poller;
  readonly opsConfigPath: string;
  /** One file per function, as CloudWatch Logs keeps one log group per function. */
  readonly logDir: string;
  reconcileNow(): Promise<unknown>;
  stop(): Promise<void>;
}

export { LOCAL_AWS } from './local-aws';

const INBOX_NAME = 'local-twin';
const EVENT_BUS = `${INBOX_NAME}-bus`;
const ASSETS = join(__dirname, '..', 'assets');
/** With `dataDir`, bodies stay inline (fauxqs keeps objects in memory only), so the limit is an item's. */
const PERSISTENT_MAX_BODY_BYTES = Limits.INLINE_BODY_BYTES;

export async function startTwin(options: TwinOptions = {}): Promise<Twin> {
  const timing = options.timing ?? DEFAULT_TWIN_TIMING;
  const providerNames = options.providers ?? ['answerline', 'echonova'];
  for (const name of providerNames) {
    if (!TWIN_PROVIDERS[name]) throw new Error(`unknown provider "${name}"; the twin serves ${Object.keys(TWIN_PROVIDERS).join(', ')}`);
  }
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const emulatorsModule: typeof import('./emulators.mjs') = await import('./emulators.mjs' as string);
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
    const emulators = await emulatorsModule.startEmulators({ dataDir: options.dataDir });
    stops.push(() => emulators.stop());

    const secretsStandIn = new SecretsManagerStandIn();
    const secretsEndpoint = await secretsStandIn.start();
    stops.push(() => secretsStandIn.stop());
    const eventBridge = new EventBridgeStandIn();
    const eventBridgeEndpoint = await eventBridge.start();
    eventBridge.createBus(EVENT_BUS);
    stops.push(() => eventBridge.stop());
    const invokeStandIn = new LambdaInvokeStandIn();
    const lambdaEndpoint = await invokeStandIn.start();
    stops.push(() => invokeStandIn.stop());

    // Every function reaches AWS through the IAM gateway; DynamoDB, SQS and S3 through a fault proxy in front of it.
    const enforceIam = options.enforceIam ?? true;
    const gateway = enforceIam
      ? new IamGateway({
          upstreams: {
            dynamodb: emulators.dynamodbEndpoint,
            sqs: emulators.sqsEndpoint,
            s3: emulators.s3Endpoint,
            secretsmanager: secretsEndpoint,
            events: eventBridgeEndpoint,
            lambda: lambdaEndpoint,
          },
          account: LOCAL_ACCOUNT,
          region: LOCAL_REGION,
          secretArn: (id) => secretsStandIn.arnOf(id),
          operatorKeys: [OPERATOR_ACCESS_KEY],
        })
      : undefined;
    const gatewayEndpoint = await gateway?.start();
    if (gateway) stops.push(() => gateway.stop());
    const dynamodbProxy = new FaultProxy(endpointTarget(gatewayEndpoint ?? emulators.dynamodbEndpoint));
    const sqsProxy = new FaultProxy(endpointTarget(gatewayEndpoint ?? emulators.sqsEndpoint));
    const functionDynamodb = await dynamodbProxy.start();
    const functionSqs = await sqsProxy.start();
    stops.push(
      () => dynamodbProxy.stop(),
      () => sqsProxy.stop(),
    );

    const { region, credentials } = LOCAL_AWS;
    const names = resourceNames(INBOX_NAME);
    const dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region, credentials });
    const sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region, credentials, useQueueUrlAsEndpoint: false });
    const s3 = new S3Client({ endpoint: emulators.s3Endpoint, region, credentials, forcePathStyle: true });
    const secretsClient = new SecretsManagerClient({ endpoint: secretsEndpoint, region, credentials });
    stops.push(async () => [dynamodb, sqs, s3, secretsClient].forEach((client) => client.destroy()));
    await createTables(dynamodb, names).catch((error: { name?: string }) => {
      // Persisted data from an earlier run: the tables are already there.
      if (error.name !== 'ResourceInUseException') throw error;
    });
    const queues = await createQueues(sqs, names, {
      visibilityTimeoutSeconds: timing.processorTimeoutSeconds * Defaults.VISIBILITY_TIMEOUT_FACTOR,
      maxReceiveCount: options.maxReceiveCount,
    });
    const useBucket = !options.dataDir;
    if (useBucket) await createBodyBucket(s3, names);

    const secrets: Record<string, string> = {};
    const providers: ProviderRuntimeConfig[] = [];
    for (const name of providerNames) {
      secrets[name] = options.secrets?.[name] ?? TWIN_PROVIDERS[name].secret();
      const { ARN } = await secretsClient.send(new CreateSecretCommand({ Name: `${INBOX_NAME}/${name}/signing-secret`, SecretString: secrets[name] }));
      providers.push(
        providerRuntimeConfig({
          name,
          adapter: TWIN_PROVIDERS[name].adapter,
          secretId: ARN!,
          ...(options.authoritativeReads?.[name] ? { authoritativeRead: options.authoritativeReads[name] } : {}),
        }),
      );
    }
    for (const [name, value] of Object.entries(options.extraSecrets ?? {})) {
      await secretsClient.send(new CreateSecretCommand({ Name: name, SecretString: value }));
    }

    const polling = options.polling ?? [];
    const roles = gateway ? twinRoles(gateway, { providers, polling, useBucket, names, queues, arnOf: (id) => secretsStandIn.arnOf(id) ?? id }) : {};

    const environments = handlerEnvironments(
      handlerSettingsWithDefaults({
        inboxName: INBOX_NAME,
        inboxTable: names.inboxTable,
        resultsTable: names.resultsTable,
        workQueueUrl: queues.workQueueUrl,
        providers,
        maxBodyBytes: useBucket ? Defaults.MAX_BODY_BYTES : PERSISTENT_MAX_BODY_BYTES,
        bodyBucket: useBucket ? names.bodyBucket : undefined,
        leaseSeconds: timing.processorTimeoutSeconds,
        maxReceiveCount: options.maxReceiveCount ?? Defaults.MAX_RECEIVE_COUNT,
        sweepAfterSeconds: timing.sweepAfterSeconds,
        sweepBatchSize: options.sweepBatchSize ?? Defaults.SWEEP_BATCH_SIZE,
        polling,
        pollBatchSize: options.pollBatchSize ?? Defaults.POLL_BATCH_SIZE,
        effectBusName: EVENT_BUS,
      }),
    );
    // What Lambda gives every function: a region, its role's credentials, and here the local endpoints.
    const awsEnvironment = (role: InboxRole) => {
      const own = roles[role] ?? credentials;
      return {
        AWS_REGION: region,
        AWS_ACCESS_KEY_ID: own.accessKeyId,
        AWS_SECRET_ACCESS_KEY: own.secretAccessKey,
        AWS_ENDPOINT_URL_DYNAMODB: functionDynamodb,
        AWS_ENDPOINT_URL_SQS: functionSqs,
        AWS_ENDPOINT_URL_S3: functionSqs,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: gatewayEndpoint ?? secretsEndpoint,
        AWS_ENDPOINT_URL_EVENTBRIDGE: gatewayEndpoint ?? eventBridgeEndpoint,
        AWS_ENDPOINT_URL_LAMBDA: gatewayEndpoint ?? lambdaEndpoint,
        NODE_NO_WARNINGS: '1',
      };
    };
    const stateDir = options.stateDir ?? join(process.cwd(), '.twin');
    const logDir = join(stateDir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const host = (name: 'verifier' | 'processor' | 'reconciler', concurrency: number, timeoutMs: number) => {
      const logs = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
      stops.push(() => new Promise((resolve) => logs.end(resolve)));
      return new LambdaHost({
        functionName: `${INBOX_NAME}-${name}`,
        bundlePath: join(ASSETS, name, 'index.js'),
        environment: { ...awsEnvironment(name), ...environments[name] },
        concurrency,
        timeoutMs,
        logs,
      });
    };
    const hosts = {
      verifier: host('verifier', options.verifierConcurrency ?? 4, 10_000),
      processor: host('processor', options.processorConcurrency ?? 2, timing.processorTimeoutSeconds * 1000),
      reconciler: host('reconciler', 1, 60_000),
    };
    stops.push(() => Promise.all(Object.values(hosts).map((h) => h.stop())));

    const api = await startApiGateway({
      port: options.port,
      routes: providerNames,
      invoke: (event) => {
        const invoke = (fault?: InvocationFault) => hosts.verifier.invoke<APIGatewayProxyStructuredResultV2>(event, fault);
        return options.interceptors?.verifier ? options.interceptors.verifier(event, invoke) : invoke();
      },
    });
    stops.push(() => api.stop());

    const processorInvoke = (event: SQSEvent) => {
      const invoke = (fault?: InvocationFault) => hosts.processor.invoke<SQSBatchResponse>(event, fault);
      return options.interceptors?.processor ? options.interceptors.processor(event, invoke) : invoke();
    };
    // The event source mapping polls from AWS's side (not behind the functions' fault proxy), with the processor's role.
    const eventSource = gateway ? new SQSClient({ endpoint: gatewayEndpoint, region, credentials: roles.processor!, useQueueUrlAsEndpoint: false }) : sqs;
    if (eventSource !== sqs) stops.push(async () => eventSource.destroy());
    const poller = startPoller(eventSource, queues.workQueueUrl, processorInvoke, {
      batchSize: Defaults.PROCESSOR_BATCH_SIZE,
      concurrency: options.processorConcurrency ?? 2,
    });
    stops.push(() => poller.stop());

    const reconcileNow = () => hosts.reconciler.invoke({ source: 'aws.events', 'detail-type': 'Scheduled Event' });
    invokeStandIn.deploy(`${INBOX_NAME}-reconciler`, () => reconcileNow());
    const schedule = setInterval(() => void reconcileNow().catch(() => undefined), timing.reconcileEverySeconds * 1000);
    stops.push(async () => clearInterval(schedule));

    const opsConfigPath = join(stateDir, 'ops-config.json');
    const opsConfig: LocalOpsConfig = {
      inboxName: INBOX_NAME,
      inboxTable: names.inboxTable,
      resultsTable: names.resultsTable,
      workQueueUrl: queues.workQueueUrl,
      deadLetterQueueUrl: queues.deadLetterQueueUrl,
      reconcilerFunctionName: `${INBOX_NAME}-reconciler`,
      bodyBucket: useBucket ? names.bodyBucket : undefined,
      providers: providerNames,
      endpoints: { dynamodb: emulators.dynamodbEndpoint, sqs: emulators.sqsEndpoint, s3: emulators.s3Endpoint, lambda: lambdaEndpoint, region },
    };
    writeFileSync(opsConfigPath, `${JSON.stringify(opsConfig, null, 2)}\n`);

    return {
      urls: Object.fromEntries(providerNames.map((name) => [name, `${api.url}/hooks/${name}`])),
      secrets,
      names,
      workQueueUrl: queues.workQueueUrl,
      deadLetterQueueUrl: queues.deadLetterQueueUrl,
      endpoints: {
        dynamodb: emulators.dynamodbEndpoint,
        sqs: emulators.sqsEndpoint,
        s3: useBucket ? emulators.s3Endpoint : undefined,
        secretsManager: secretsEndpoint,
        lambda: lambdaEndpoint,
      },
      hosts,
      faults: { dynamodb: dynamodbProxy, sqs: sqsProxy },
      eventBridge,
      ...(gateway ? { iam: { gateway, endpoint: gatewayEndpoint!, credentials: roles } } : {}),
      poller,
      opsConfigPath,
      logDir,
      reconcileNow,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The twin's roles, registered with the IAM gateway: the template the construct synthesizes for
 * the twin's providers, polling, bucket and bus, bound to the twin's own resources.
 */
function twinRoles(
  gateway: IamGateway,
  twin: {
    providers: readonly ProviderRuntimeConfig[];
    polling: readonly PollingRuntimeConfig[];
    useBucket: boolean;
    names: InboxResourceNames;
    queues: { workQueueUrl: string; deadLetterQueueUrl: string };
    arnOf: (secretId: string) => string;
  },
): Partial<Record<InboxRole, LocalCredentials>> {
  const synthesized = synthesizeInbox({
    account: LOCAL_ACCOUNT,
    region: LOCAL_REGION,
    providers: twin.providers,
    polling: twin.polling,
    bodyBucket: twin.useBucket,
    eventBus: true,
  });
  const apiKeys = [
    ...twin.providers.flatMap((provider) => (provider.authoritativeRead ? [provider.authoritativeRead.apiKeySecretId] : [])),
    ...twin.polling.map((entry) => entry.apiKeySecretId),
  ];
  const binding = inboxBinding(
    synthesized,
    {
      inboxTable: twin.names.inboxTable,
      resultsTable: twin.names.resultsTable,
      workQueueUrl: twin.queues.workQueueUrl,
      deadLetterQueueUrl: twin.queues.deadLetterQueueUrl,
      ...(twin.useBucket ? { bodyBucket: twin.names.bodyBucket } : {}),
      eventBusName: EVENT_BUS,
      signingSecretArns: Object.fromEntries(twin.providers.map((provider) => [provider.name, twin.arnOf(provider.secretId)])),
      apiKeySecretArns: Object.fromEntries(apiKeys.map((secretId) => [secretId, twin.arnOf(secretId)])),
    },
    LOCAL_ACCOUNT,
    LOCAL_REGION,
  );
  return registerInboxRoles(gateway, synthesized, binding, LOCAL_ACCOUNT);
}
