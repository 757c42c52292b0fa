/**
 * IAM in the handler tests, as AWS enforces it: every AWS call a handler makes goes through the
 * local IAM gateway (`packages/webhook-inbox-local/src/aws/iam/`) with the credentials of its own role, and is decided against
 * that role's policy in the template the construct synthesizes for the providers in use, bound to
 * the test's own tables, queues, bucket, bus, functions and secrets. A call the template does not
 * grant fails as it would in AWS; and since a handler may swallow an error (an enqueue that fails
 * after the write committed is still a 202), every refusal also fails the test that caused it,
 * unless the test says it expects it (`expectAccessDenied`).
 *
 * One gateway per test file: the emulators are its upstreams from the start, the Secrets Manager
 * and EventBridge/Lambda stand-ins from when their fixtures start.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import type { AwsClients } from '../../lambda/shared/runtime/handler-runtime';
import { PollingRuntimeConfig, ProviderRuntimeConfig, RecoveryRuntimeConfig } from '../../lib/contract';
import {
  Denial,
  endpointTarget,
  FaultProxy,
  IamGateway,
  inboxBinding,
  InboxRole,
  InboxTemplateSpec,
  LOCAL_ACCOUNT,
  LOCAL_REGION,
  LocalCredentials,
  LocalInboxResources,
  OPERATOR_ACCESS_KEY,
  registerInboxRoles,
  SecretDirectory,
  SynthesizedInbox,
} from '#twin/testing';
import { cachedSynthesis } from './template-cache';

export type { InboxRole };

/** Real SDK clients of one role, every one pointed at the gateway. */
/** Every SDK client a handler may use, as one role, and the S3 client of its body store. */
export type RoleClients = AwsClients & { readonly s3: S3Client };

/** What shapes an inbox's policies: its providers, how they are polled, which secrets rotate. */
export interface InboxStructure {
  readonly providers: readonly ProviderRuntimeConfig[];
  readonly polling?: readonly PollingRuntimeConfig[];
  readonly recovery?: readonly RecoveryRuntimeConfig[];
  readonly rotation?: { readonly providers: readonly string[]; readonly registerFunction?: boolean };
}

/** The local resources a test's inbox uses; secrets are named by their ids as the handlers are configured. */
export type LocalInbox = Omit<LocalInboxResources, 'signingSecretArns' | 'apiKeySecretArns'>;

class FixtureGateway {
  readonly gateway = new IamGateway({
    account: LOCAL_ACCOUNT,
    region: LOCAL_REGION,
    upstreams: { dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB, sqs: process.env.AWS_ENDPOINT_URL_SQS, s3: process.env.AWS_ENDPOINT_URL_S3 },
    operatorKeys: [OPERATOR_ACCESS_KEY],
  });
  readonly endpoint = this.gateway.start();
  private url?: string;
  private secrets?: SecretDirectory;
  private faults?: Promise<{ readonly proxy: FaultProxy; readonly url: string }>;
  private readonly clients: { destroy(): void }[] = [];
  private checked = 0;
  private expected = 0;

  constructor() {
    void this.endpoint.then((url) => (this.url = url));
  }

  useSecrets(endpoint: string, secrets: SecretDirectory): void {
    this.gateway.useUpstream('secretsmanager', endpoint);
    this.gateway.useSecrets(secrets);
    this.secrets = secrets;
  }

  useEffects(eventBridge: string, lambda: string): void {
    this.gateway.useUpstream('events', eventBridge);
    this.gateway.useUpstream('lambda', lambda);
  }

  /** Clients of `role` in the inbox `structure` describes, bound to `local`; at `endpoint` when given (the fault proxy). */
  clientsAs(role: InboxRole, structure: InboxStructure, local: LocalInbox, maxAttempts?: number, endpoint?: string): RoleClients {
    return this.clientsWith(this.credentialsAs(role, structure, local), maxAttempts, endpoint);
  }

  /**
   * The fault proxy in front of this gateway (`packages/webhook-inbox-local/src/faults/proxy.ts`), started on first use; its
   * index lag reads the DynamoDB emulator directly. Its faults end after each test.
   */
  faultProxy(): Promise<{ readonly proxy: FaultProxy; readonly url: string }> {
    this.faults ??= this.endpoint.then(async (gateway) => {
      const proxy = new FaultProxy(endpointTarget(gateway), { dynamodbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB });
      return { proxy, url: await proxy.start() };
    });
    return this.faults;
  }

  /** Ends the faults a test injected. */
  async clearFaults(): Promise<void> {
    (await this.faults)?.proxy.clear();
  }

  /**
   * What Lambda gives a function of `role`: its role's credentials, the region, and here every
   * AWS endpoint pointed at the gateway (for a shipped bundle in its own process).
   */
  environmentAs(role: InboxRole, structure: InboxStructure, local: LocalInbox): Record<string, string> {
    const credentials = this.credentialsAs(role, structure, local);
    const url = this.listening();
    return {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      ...Object.fromEntries(['DYNAMODB', 'SQS', 'S3', 'SECRETS_MANAGER', 'EVENTBRIDGE', 'LAMBDA'].map((service) => [`AWS_ENDPOINT_URL_${service}`, url])),
    };
  }

  private listening(): string {
    if (!this.url) throw new Error('the IAM gateway is not listening yet: await iamReady() first');
    return this.url;
  }

  private credentialsAs(role: InboxRole, structure: InboxStructure, local: LocalInbox): LocalCredentials {
    const { spec, apiKeys } = templateSpec(structure);
    const synthesized = synthesizedFor(spec);
    const arn = (secretId: string) => this.secrets?.arnOf(secretId) ?? secretId;
    const binding = inboxBinding(
      synthesized,
      {
        ...local,
        signingSecretArns: Object.fromEntries(structure.providers.flatMap((provider) => (provider.secretId ? [[provider.name, arn(provider.secretId)]] : []))),
        apiKeySecretArns: Object.fromEntries([...apiKeys].map(([secretId, label]) => [label, arn(secretId)])),
      },
      LOCAL_ACCOUNT,
      LOCAL_REGION,
    );
    const credentials = registerInboxRoles(this.gateway, synthesized, binding, LOCAL_ACCOUNT)[role];
    if (!credentials) throw new Error(`the inbox has no ${role} role (rotation needs a rotated provider)`);
    return credentials;
  }

  private clientsWith(credentials: LocalCredentials, maxAttempts?: number, endpoint: string = this.listening()): RoleClients {
    const config = { endpoint, region: LOCAL_REGION, credentials, ...(maxAttempts ? { maxAttempts } : {}) };
    const clients: RoleClients = {
      dynamodb: retryingAtOnce((retryStrategy) => new DynamoDBClient({ ...config, retryStrategy })),
      sqs: retryingAtOnce((retryStrategy) => new SQSClient({ ...config, retryStrategy, useQueueUrlAsEndpoint: false })),
      s3: retryingAtOnce((retryStrategy) => new S3Client({ ...config, retryStrategy, forcePathStyle: true })),
      secretsManager: retryingAtOnce((retryStrategy) => new SecretsManagerClient({ ...config, retryStrategy })),
      eventBridge: retryingAtOnce((retryStrategy) => new EventBridgeClient({ ...config, retryStrategy })),
      lambda: retryingAtOnce((retryStrategy) => new LambdaClient({ ...config, retryStrategy })),
    };
    this.clients.push(...Object.values(clients));
    return clients;
  }

  /** The refusals since the last check; those a test declared expected are not reported. */
  takeUnexpected(): Denial[] {
    const fresh = this.gateway.denials.slice(this.checked);
    this.checked = this.gateway.denials.length;
    const expected = Math.min(this.expected, fresh.length);
    this.expected = 0;
    return fresh.slice(expected);
  }

  expect(count: number): void {
    this.expected += count;
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.destroy();
    await (await this.faults)?.proxy.stop();
    await this.gateway.stop();
  }
}

/**
 * A client whose SDK retries as its own standard strategy does (its attempts, the service's
 * default or the `maxAttempts` given, and its retry quota), without the waits between attempts:
 * what a handler does depends on how many attempts fail, never on how long the SDK slept, and
 * the SDK sleeps up to a second, two, four between the attempts at a throttled call (on average
 * 3.5 s for a DynamoDB call throttled to its fourth attempt), dozens of times in the throttling tests.
 */
function retryingAtOnce<T extends { readonly config: { maxAttempts: () => Promise<number> } }>(create: (retryStrategy: ConfiguredRetryStrategy) => T): T {
  const client: T = create(new ConfiguredRetryStrategy(() => client.config.maxAttempts(), 0));
  return client;
}

let shared: FixtureGateway | undefined;

/** This test file's gateway (started on first use). */
export function fixtureGateway(): FixtureGateway {
  shared ??= new FixtureGateway();
  return shared;
}

/** Waits until the gateway listens; handler builders need it. */
export async function iamReady(): Promise<void> {
  await fixtureGateway().endpoint;
}

/** The current test causes `count` refusals on purpose (a test of a missing grant). */
export function expectAccessDenied(count = 1): void {
  fixtureGateway().expect(count);
}

afterEach(async () => {
  await shared?.clearFaults();
  const unexpected = shared?.takeUnexpected() ?? [];
  if (unexpected.length > 0) {
    throw new Error(
      `the local IAM gateway refused ${unexpected.length} call(s) the template does not grant:\n${unexpected.map((denial) => `- ${denial.message}`).join('\n')}`,
    );
  }
});

afterAll(async () => {
  await shared?.stop();
  shared = undefined;
});

// --- templates ------------------------------------------------------------------------------

const templates = new Map<string, SynthesizedInbox>();
/** The module `#twin/testing/inbox-template` synthesizes with. */
const INBOX_TEMPLATE_MODULE = 'packages/webhook-inbox-local/src/twin/inbox-template.ts';

/**
 * One synthesis per structure and run: read from the run's cache of templates when any test file
 * synthesized it before; otherwise synthesized here, and only then is aws-cdk-lib loaded.
 */
function synthesizedFor(spec: InboxTemplateSpec): SynthesizedInbox {
  const key = JSON.stringify(spec);
  let found = templates.get(key);
  if (!found) {
    found = cachedSynthesis(INBOX_TEMPLATE_MODULE, spec, () =>
      (require('#twin/testing/inbox-template') as typeof import('#twin/testing/inbox-template')).synthesizeInbox(spec),
    );
    templates.set(key, found);
  }
  return found;
}

/**
 * The template spec of a structure, with the API key secrets named by their order (so that
 * inboxes of the same shape share one synthesis) and the secret ids behind those names. The
 * harness's inbox has a bucket, a bus and a processing function: each grant is bound to the
 * test's own resource when it has one, and names nothing local otherwise.
 */
function templateSpec(structure: InboxStructure): { spec: InboxTemplateSpec; apiKeys: Map<string, string> } {
  const apiKeys = new Map<string, string>();
  const label = (secretId: string) => {
    if (!apiKeys.has(secretId)) apiKeys.set(secretId, `api-key-${apiKeys.size}`);
    return apiKeys.get(secretId)!;
  };
  // Only what shapes the policies is kept: secrets by their order, no local URL.
  const providers = structure.providers.map((provider) => ({
    ...provider,
    secretId: '',
    ...(provider.authoritativeRead
      ? {
          authoritativeRead: {
            ...provider.authoritativeRead,
            urlTemplate: 'https://resources.example/{id}',
            apiKeySecretId: label(provider.authoritativeRead.apiKeySecretId),
          },
        }
      : {}),
  }));
  const polling = structure.polling?.map((entry) => ({
    ...entry,
    taskUrlTemplate: 'https://tasks.example/{taskId}',
    apiKeySecretId: label(entry.apiKeySecretId),
  }));
  const recovery = structure.recovery?.map((entry) => ({
    ...entry,
    baseUrl: 'https://api.example',
    credentialsSecretId: label(entry.credentialsSecretId),
    ...(entry.signingSecretId !== undefined ? { signingSecretId: '' } : {}),
  }));
  return {
    spec: {
      account: LOCAL_ACCOUNT,
      region: LOCAL_REGION,
      providers,
      ...(polling ? { polling } : {}),
      ...(recovery ? { recovery } : {}),
      ...(structure.rotation ? { rotation: structure.rotation } : {}),
      bodyBucket: true,
      eventBus: true,
      processingFunction: true,
    },
    apiKeys,
  };
}
