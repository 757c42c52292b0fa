/**
 * Shared fixture of the handler integration tests: real emulators (dynalite, fauxqs, started by
 * jest's globalSetup), the Secrets Manager stand-in, real AWS SDK v3 clients and real stores.
 * Nothing here is a mock: the helpers only build faithful inputs (API Gateway payload 2.0
 * events, Standard Webhooks signatures, Answerline bodies) and read back what was stored.
 * The handlers they build call AWS under their own roles, through the local IAM gateway, with
 * the policies the construct's template gives them (`./iam-fixture`); the test's own reads and
 * writes are an operator's.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import { AttributeValue, DynamoDBClient, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  RotateSecretCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  AdapterKind,
  AnswerlineLifecycle,
  Defaults,
  InboxAttr,
  InboxItemKind,
  LocalOpsConfig,
  OpsConfig,
  PollingDefaults,
  PollingRuntimeConfig,
  ProviderRuntimeConfig,
  providerRuntimeConfig,
} from '../../lib/contract';
import { inlineBodyOf } from '../../lambda/shared/stores/inline-body';
import { createProcessor, EffectsConfig, ProcessorDependencies } from '../../lambda/processor/processor';
import { createReconciler, ReconcilerDependencies } from '../../lambda/reconciler/reconciler';
import { LambdaFunctionSink } from '../../lambda/shared/effects/function-sink';
import { DispatchOutcome, EffectSink, EventBridgeSink } from '../../lambda/shared/effects/sinks';
import { Effect } from '../../lambda/shared/effects/assembler';
import { deliveryKey, DynamoDbInboxStore, InboxStore } from '../../lambda/shared/stores/inbox';
import { DynamoDbResultsStore, resultKey } from '../../lambda/shared/stores/results-store';
import { MIN_MISS_REFRESH_MS, SecretCache, SecretsManagerReader, SecretVersion, SecretVersionReader } from '../../lambda/shared/signatures/secrets';
import { decodeStandardWebhooksSecret, signStandardWebhooks } from '../../lambda/shared/signatures/standard-webhooks';
import { LineWriter, Telemetry } from '../../lambda/shared/runtime/telemetry';
import { decodeWorkMessage, SqsWorkQueue } from '../../lambda/shared/stores/work-queue';
import { createVerifier, VerifierDependencies } from '../../lambda/verifier/verifier';
import { verifierDependenciesFromEnv } from '../../lambda/verifier/from-env';
import { processorDependenciesFromEnv } from '../../lambda/processor/from-env';
import { reconcilerDependenciesFromEnv } from '../../lambda/reconciler/from-env';
import { HandlerRuntime } from '../../lambda/shared/runtime/handler-runtime';
import { handlerEnvironments, HandlerEnvironments, handlerSettingsWithDefaults } from '../../lib/private/handler-environment';
import {
  createQueues,
  createTables,
  drain,
  EventBridgeStandIn,
  type FaultProxy,
  InboxResourceNames,
  LambdaInvokeStandIn,
  LOCAL_ACCOUNT,
  LOCAL_REGION,
  pollOnce,
  PollReport,
  QueueSettings,
  resourceNames,
  SecretsManagerStandIn,
  SqsHandler,
} from '#twin/testing';
import { SubmissionLedger, SubmissionLedgerOptions } from '../../client';
import { LedgerDependencies } from '../../lambda/reconciler/ledger';
import { ProviderApi } from '../../lambda/shared/providers/provider-api';
import { DynamoDbSubmissionStore } from '../../lambda/shared/stores/submission-store';
import { S3BodyStore } from '../../lambda/shared/stores/s3-body-store';
import { fixtureGateway, iamReady, InboxRole, InboxStructure, LocalInbox, RoleClients } from './iam-fixture';

export const PROVIDER = 'answerline';
export const HOOK_PATH = `/hooks/${PROVIDER}`;
export const INBOX_NAME = 'test-inbox';
export const TOLERANCE_SECONDS = Defaults.TIMESTAMP_TOLERANCE_SECONDS;
export const RETENTION_SECONDS = 7 * 86_400;
export const LEASE_MS = 30_000;
/** What begins the partition key of every item about refused requests (docs/REJECTIONS.md), written here on its own. */
const REJECTED_PARTITION = 'rejected:';
/** The rejection records' time budget in the handler tests (the construct's is 200 ms). */
export const REJECTION_RECORD_BUDGET_MS = 30_000;

/** A fresh Standard Webhooks signing secret, as a provider issues it. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A unique name fragment, so that test files and tests never share a table, queue or secret. */
export function uniqueName(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** A controllable clock for the handlers; it starts at the real time so SQS and logs line up. */
export class Clock {
  private ms: number;

  constructor(start: number = Date.now()) {
    this.ms = start;
  }

  readonly now = (): number => this.ms;

  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }

  advance(ms: number): void {
    this.ms += ms;
  }

  set(ms: number): void {
    this.ms = ms;
  }
}

// ---------------------------------------------------------------------------------------------
// Telemetry capture
// ---------------------------------------------------------------------------------------------

export type LogRecord = Record<string, unknown> & { level: string; message: string };

/** Collects every line the handlers write (structured logs and EMF documents). */
export class LineCapture {
  readonly lines: string[] = [];
  readonly write: LineWriter = (line) => {
    this.lines.push(line);
  };

  telemetry(now?: () => number): Telemetry {
    return new Telemetry(INBOX_NAME, this.write, now);
  }

  private parsed(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Structured log records (with or without metrics; metric documents that are no log line excluded). */
  logs(message?: string): LogRecord[] {
    return this.parsed().filter((record): record is LogRecord => 'message' in record && (message === undefined || record.message === message));
  }

  /** The total of one EMF counter over every document written, optionally for one provider. */
  metric(name: string, provider?: string): number {
    let total = 0;
    for (const record of this.parsed()) {
      const aws = record._aws as { CloudWatchMetrics: { Namespace: string; Metrics: { Name: string }[] }[] } | undefined;
      if (!aws) continue;
      if (provider !== undefined && record.Provider !== provider) continue;
      if (aws.CloudWatchMetrics.some((m) => m.Namespace === 'WebhookInbox' && m.Metrics.some((x) => x.Name === name))) {
        total += Number(record[name]);
      }
    }
    return total;
  }

  /** The reason codes of the verifier's `delivery` log lines, in order. */
  reasons(): string[] {
    return this.logs('delivery').map((record) => String(record.reason));
  }

  /** Fails when any line carries one of the needles (bodies, secrets, signatures). */
  expectNoLineContains(needles: Iterable<string>): void {
    const offending: string[] = [];
    for (const needle of needles) {
      for (const line of this.lines) if (line.includes(needle)) offending.push(`${needle.slice(0, 40)}… in ${line}`);
    }
    expect(offending).toEqual([]);
  }

  clear(): void {
    this.lines.length = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Secrets Manager (stand-in)
// ---------------------------------------------------------------------------------------------

/** The Secrets Manager stand-in, run in-process, with a real SDK client pointed at it. */
export class SecretsFixture {
  /** The stand-in itself: rotation functions attach to it in-process. */
  readonly standIn: SecretsManagerStandIn;
  private endpointUrl?: string;
  private sdkClient?: SecretsManagerClient;

  /** `now` stamps the versions' CreatedDate; pass a test's Clock to control the grace period. */
  constructor(now?: () => number) {
    this.standIn = new SecretsManagerStandIn(now);
  }

  async start(): Promise<this> {
    this.endpointUrl = await this.standIn.start();
    this.sdkClient = new SecretsManagerClient({ endpoint: this.endpointUrl });
    fixtureGateway().useSecrets(this.endpointUrl, this.standIn);
    return this;
  }

  async stop(): Promise<void> {
    this.sdkClient?.destroy();
    await this.standIn.stop();
  }

  get endpoint(): string {
    return this.endpointUrl!;
  }

  get client(): SecretsManagerClient {
    return this.sdkClient!;
  }

  /** Creates a secret whose AWSCURRENT is `value`; returns its id (name). */
  async create(value: string = newSigningSecret()): Promise<{ id: string; value: string }> {
    const id = uniqueName('signing-secret');
    await this.client.send(new CreateSecretCommand({ Name: id, SecretString: value }));
    return { id, value };
  }

  /** Makes `value` the new AWSCURRENT, as a rotation does. */
  async rotate(id: string, value: string): Promise<void> {
    await this.client.send(new PutSecretValueCommand({ SecretId: id, SecretString: value, VersionStages: ['AWSCURRENT'] }));
  }

  /** Stages `value` as AWSPENDING beside AWSCURRENT, as an operator does; returns the new version id. */
  async stagePending(id: string, value: string): Promise<string> {
    return (await this.client.send(new PutSecretValueCommand({ SecretId: id, SecretString: value, VersionStages: ['AWSPENDING'] }))).VersionId!;
  }

  /** The secret's ARN, as Secrets Manager names it in rotation events. */
  async arnOf(id: string): Promise<string> {
    return (await this.client.send(new DescribeSecretCommand({ SecretId: id }))).ARN!;
  }

  /** Which version holds each staging label (DescribeSecret's VersionIdsToStages, inverted). */
  async stages(id: string): Promise<Record<string, string>> {
    const described = await this.client.send(new DescribeSecretCommand({ SecretId: id }));
    const holders: Record<string, string> = {};
    for (const [versionId, stages] of Object.entries(described.VersionIdsToStages ?? {})) for (const stage of stages) holders[stage] = versionId;
    return holders;
  }

  /** The value of the version holding `stage`. */
  async valueAt(id: string, stage: string): Promise<string> {
    return (await this.client.send(new GetSecretValueCommand({ SecretId: id, VersionStage: stage }))).SecretString!;
  }

  /** Starts a rotation as Secrets Manager does (an empty AWSPENDING version); returns its token. */
  async startRotation(id: string, rotationLambdaArn: string): Promise<string> {
    return (await this.client.send(new RotateSecretCommand({ SecretId: id, RotationLambdaARN: rotationLambdaArn }))).VersionId!;
  }

  /** The real reader, counted: how often the handlers really went to Secrets Manager. */
  countingReader(): CountingReader {
    return new CountingReader(new SecretsManagerReader(this.client));
  }
}

/** Wraps a real reader to count the reads that reach it. */
export class CountingReader implements SecretVersionReader {
  reads = 0;

  constructor(private readonly inner: SecretVersionReader) {}

  read(secretId: string): Promise<SecretVersion[]> {
    this.reads += 1;
    return this.inner.read(secretId);
  }
}

// ---------------------------------------------------------------------------------------------
// Deliveries: Answerline bodies, Standard Webhooks signatures, API Gateway payload 2.0 events
// ---------------------------------------------------------------------------------------------

export interface TaskFields {
  readonly id?: string;
  readonly status?: string;
  readonly idempotencyKey?: string | null;
  readonly createdAt?: unknown;
  readonly response?: unknown;
}

/** An Answerline delivery body (docs/providers/answerline.md): `task`, `credits` and, once final, `response`. */
export function answerlineBody(fields: TaskFields = {}): string {
  const status = fields.status ?? 'COMPLETED';
  const createdAt = fields.createdAt ?? '2026-09-18T10:00:00.000Z';
  const response =
    'response' in fields
      ? fields.response
      : status === 'FAILED'
        ? { error: { code: 'MODEL_ERROR', message: `failed-${randomUUID()}` } }
        : { result: { answer: `answer-${randomUUID()}`, confidence: 0.93 } };
  return JSON.stringify({
    task: {
      id: fields.id ?? `tsk_${randomUUID()}`,
      status,
      idempotencyKey: fields.idempotencyKey === undefined ? `job-${randomUUID()}` : fields.idempotencyKey,
      createdAt,
      startedAt: '2026-09-18T10:00:05.000Z',
      finishedAt: '2026-09-18T10:00:09.000Z',
    },
    credits: { charged: 1, remaining: 499 },
    ...(response === undefined ? {} : { response }),
  });
}

/**
 * Words of a made-up language, in no order, at least `bytes` long: deflated, about as long as
 * English prose of that length (1 KiB to about 550 bytes), where a repeated text deflates a hundredfold.
 */
export function prose(bytes: number): string {
  const syllables = 'ka ri to ne mu sa lo pe di fa gu ho ve ni zo ra'.split(' ');
  let text = '';
  for (let seed = 7; Buffer.byteLength(text) < bytes;) {
    const word: string[] = [];
    do {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      word.push(syllables[Math.floor((seed / 2 ** 31) * syllables.length)]);
    } while (seed % 3 !== 0 && word.length < 4);
    text += `${word.join('')} `;
  }
  return text;
}

export interface SignOptions {
  readonly secret: string;
  /** Unix seconds the signature covers. */
  readonly timestamp: number;
  readonly webhookId?: string;
}

/** The three Standard Webhooks headers for `body`, signed with our signer. */
export function signatureHeaders(body: Buffer | string, options: SignOptions): Record<string, string> {
  const webhookId = options.webhookId ?? `msg_${randomUUID().replace(/-/g, '')}`;
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(options.timestamp),
    'webhook-signature': signStandardWebhooks(decodeStandardWebhooksSecret(options.secret), webhookId, options.timestamp, bytes),
  };
}

export interface EventOptions {
  readonly path?: string;
  /** Deliver the body base64-encoded, as API Gateway does for non-text payloads. */
  readonly base64?: boolean;
  readonly requestId?: string;
}

/**
 * A faithful API Gateway HTTP API (payload format 2.0) event: lower-case headers (API Gateway
 * adds its own), the body as a string, base64-encoded when `isBase64Encoded`.
 */
export function apiGatewayEvent(body: Buffer | string, headers: Record<string, string | undefined>, options: EventOptions = {}): APIGatewayProxyEventV2 {
  const path = options.path ?? HOOK_PATH;
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const requestId = options.requestId ?? randomBytes(8).toString('base64url');
  const time = new Date();
  const lowered: Record<string, string> = {
    accept: '*/*',
    'content-length': String(bytes.length),
    'content-type': 'application/json',
    host: 'abc123def4.execute-api.us-east-1.amazonaws.com',
    'user-agent': 'Answerline-Webhooks/1.0',
    'x-amzn-trace-id': `Root=1-${Math.floor(time.getTime() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`,
    'x-forwarded-for': '203.0.113.7',
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
  };
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) delete lowered[name.toLowerCase()];
    else lowered[name.toLowerCase()] = value;
  }
  return {
    version: '2.0',
    routeKey: `POST ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: lowered,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123def4',
      domainName: 'abc123def4.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123def4',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: lowered['user-agent'] ?? '' },
      requestId,
      routeKey: `POST ${path}`,
      stage: '$default',
      time: time.toUTCString(),
      timeEpoch: time.getTime(),
    },
    body: options.base64 ? bytes.toString('base64') : bytes.toString('utf8'),
    isBase64Encoded: options.base64 ?? false,
  };
}

/**
 * A faithful API Gateway REST API Lambda proxy (payload format 1.0) event, as AWS documents it:
 * header names as the sender wrote them (API Gateway adds its own), every value in
 * `multiValueHeaders` and the last one in `headers`, the path without the stage (which is in
 * `requestContext.path`), the source address in `requestContext.identity`, and a body always
 * base64-encoded, as an API whose binary media types are `*` / `*` passes it. `headers` may repeat
 * a name with an array.
 */
export function restApiEvent(
  body: Buffer | string,
  headers: Record<string, string | readonly string[]>,
  options: EventOptions & { readonly query?: Record<string, readonly string[]> } = {},
): APIGatewayProxyEvent {
  const path = options.path ?? HOOK_PATH;
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const multiValueHeaders: Record<string, string[]> = {
    Accept: ['*/*'],
    'Content-Type': ['application/json'],
    Host: ['abc123def4.execute-api.us-east-1.amazonaws.com'],
    'User-Agent': ['Answerline-Webhooks/1.0'],
    'X-Amzn-Trace-Id': [`Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`],
    'X-Forwarded-For': ['203.0.113.7'],
    'X-Forwarded-Port': ['443'],
    'X-Forwarded-Proto': ['https'],
  };
  for (const [name, value] of Object.entries(headers)) {
    for (const existing of Object.keys(multiValueHeaders)) if (existing.toLowerCase() === name.toLowerCase()) delete multiValueHeaders[existing];
    multiValueHeaders[name] = typeof value === 'string' ? [value] : [...value];
  }
  const query = options.query;
  const time = new Date();
  return {
    resource: path.replace(/\/$/, ''),
    path,
    httpMethod: 'POST',
    headers: Object.fromEntries(Object.entries(multiValueHeaders).map(([name, values]) => [name, values[values.length - 1]])),
    multiValueHeaders,
    queryStringParameters: query ? Object.fromEntries(Object.entries(query).map(([name, values]) => [name, values[values.length - 1]])) : null,
    multiValueQueryStringParameters: query ? Object.fromEntries(Object.entries(query).map(([name, values]) => [name, [...values]])) : null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123def4',
      authorizer: null,
      domainName: 'abc123def4.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123def4',
      extendedRequestId: randomBytes(6).toString('base64url'),
      httpMethod: 'POST',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '203.0.113.7',
        user: null,
        userAgent: multiValueHeaders['User-Agent']?.[0] ?? '',
        userArn: null,
      },
      path: `/prod${path}`,
      protocol: 'HTTP/1.1',
      requestId: options.requestId ?? randomUUID(),
      requestTime: time.toUTCString(),
      requestTimeEpoch: time.getTime(),
      resourceId: randomBytes(3).toString('hex'),
      resourcePath: path.replace(/\/$/, ''),
      stage: 'prod',
    },
    // An empty body is none at all.
    body: bytes.length === 0 ? null : bytes.toString('base64'),
    isBase64Encoded: bytes.length > 0,
  };
}

/** A signed delivery event; `headers` may override (or, with undefined, remove) any header. */
export function signedEvent(
  body: Buffer | string,
  sign: SignOptions,
  headers: Record<string, string | undefined> = {},
  options: EventOptions = {},
): APIGatewayProxyEventV2 {
  return apiGatewayEvent(body, { ...signatureHeaders(body, sign), ...headers }, options);
}

export interface Answer {
  readonly statusCode: number;
  readonly result: string;
  readonly detail?: string;
}

/** The verifier's answer, parsed. */
export function answerOf(response: APIGatewayProxyStructuredResultV2): Answer {
  const body = JSON.parse(String(response.body)) as { result: string; detail?: string };
  return { statusCode: response.statusCode!, ...body };
}

/** The task id inside an Answerline body. */
export function taskIdOf(body: string): string {
  return (JSON.parse(body) as { task: { id: string } }).task.id;
}

/** The inbox key of an Answerline body. */
export function keyOf(body: string): string {
  return deliveryKey(PROVIDER, taskIdOf(body));
}

// ---------------------------------------------------------------------------------------------
// Stored state, decoded
// ---------------------------------------------------------------------------------------------

export type Item = Record<string, unknown>;

/**
 * Plain values from DynamoDB attributes (binary as Buffer, numbers as number); an inline body as
 * the exact bytes received (inflated when stored deflated), under `body`; a digest as hex (delivery
 * rows keep its 32 bytes).
 */
export function decodeItem(item: Record<string, AttributeValue>): Item {
  const decoded = Object.fromEntries(Object.entries(item).map(([name, value]) => [name, decodeValue(value)]));
  const digest = item[InboxAttr.DIGEST]?.B;
  if (digest) decoded[InboxAttr.DIGEST] = Buffer.from(digest).toString('hex');
  if (item[InboxAttr.BODY] || item[InboxAttr.BODY_DEFLATED]) {
    decoded[InboxAttr.BODY] = inlineBodyOf(item);
    delete decoded[InboxAttr.BODY_DEFLATED];
  }
  return decoded;
}

/** The event id a decoded delivery row is stored under: its key after `<provider>#` (provider names hold no `#`). */
export function eventIdOf(row: Item): string {
  const key = String(row.pk);
  return key.slice(key.indexOf('#') + 1);
}

/** The provider a decoded delivery row is stored under: its key before the first `#`. */
export function providerOf(row: Item): string {
  const key = String(row.pk);
  return key.slice(0, key.indexOf('#'));
}

function decodeValue(value: AttributeValue): unknown {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return Number(value.N);
  if (value.B !== undefined) return Buffer.from(value.B);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  if (value.M !== undefined) return decodeItem(value.M);
  if (value.L !== undefined) return value.L.map(decodeValue);
  if (value.SS !== undefined) return [...value.SS];
  throw new Error(`unexpected attribute value ${JSON.stringify(value)}`);
}

// ---------------------------------------------------------------------------------------------
// One inbox: its tables and queues on the emulators, its stores, and its handlers
// ---------------------------------------------------------------------------------------------

export interface HarnessOptions {
  /** Work queue settings: short visibility timeouts keep redelivery tests fast. */
  readonly queue?: QueueSettings;
  readonly clock?: Clock;
}

/**
 * One inbox on the emulators, with its own uniquely named tables and queues, a signing secret
 * in the stand-in, a controllable clock, a line capture, and builders for the three handlers
 * wired to the real stores.
 */
export class InboxHarness {
  readonly dynamodb = new DynamoDBClient({});
  readonly sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  readonly inbox: DynamoDbInboxStore;
  readonly results: DynamoDbResultsStore;
  readonly queue: SqsWorkQueue;
  readonly capture = new LineCapture();
  /** Everything that must never appear in a log line: secrets, bodies, signatures. */
  readonly sensitive = new Set<string>();
  private defaultVerifier?: ReturnType<typeof createVerifier>;
  /** The bus and the processing function effects go to, once a test made them (`busSink`, `functionSink`). */
  private effectTargets: { eventBusName?: string; processingFunctionArn?: string } = {};
  private eventSourceClient?: SQSClient;
  /** Where the role clients built from now on call AWS: the fault proxy once a test asked for it (`faults`). */
  private faultProxyUrl?: string;

  private constructor(
    readonly names: InboxResourceNames,
    readonly workQueueUrl: string,
    readonly deadLetterQueueUrl: string,
    readonly secrets: SecretsFixture,
    readonly secret: { id: string; value: string },
    readonly clock: Clock,
  ) {
    this.inbox = new DynamoDbInboxStore(this.dynamodb, names.inboxTable);
    this.results = new DynamoDbResultsStore(this.dynamodb, names.resultsTable);
    this.queue = new SqsWorkQueue(this.sqs, workQueueUrl);
    this.markSensitive(secret.value);
  }

  static async create(secrets: SecretsFixture, label: string, options: HarnessOptions = {}): Promise<InboxHarness> {
    await iamReady();
    const names = resourceNames(uniqueName(label));
    const dynamodb = new DynamoDBClient({});
    const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
    try {
      await createTables(dynamodb, names);
      const queues = await createQueues(sqs, names, options.queue);
      const secret = await secrets.create();
      return new InboxHarness(names, queues.workQueueUrl, queues.deadLetterQueueUrl, secrets, secret, options.clock ?? new Clock());
    } finally {
      dynamodb.destroy();
      sqs.destroy();
    }
  }

  destroy(): void {
    this.dynamodb.destroy();
    this.sqs.destroy();
  }

  markSensitive(...values: string[]): void {
    // Short strings could match a log line by chance; everything we track is long.
    for (const value of values) if (value.length >= 16) this.sensitive.add(value);
  }

  /** Fails when any captured line carries a secret, a body, a signature or an answer. */
  expectLogsClean(): void {
    this.capture.expectNoLineContains(this.sensitive);
  }

  providerConfig(secretId: string = this.secret.id): ProviderRuntimeConfig {
    return providerRuntimeConfig({ name: PROVIDER, adapter: AdapterKind.ANSWERLINE, secretId });
  }

  /** A secret cache on the clock; the reader reads as the verifier by default. */
  secretCache(reader: SecretVersionReader = this.secretReader(this.as('verifier').secretsManager), minRefreshIntervalMs = MIN_MISS_REFRESH_MS): SecretCache {
    return new SecretCache(reader, { ttlMs: Defaults.SECRET_CACHE_SECONDS * 1000, minRefreshIntervalMs }, this.clock.now);
  }

  /** The real Secrets Manager reader over a role's client, counted: how often a handler really went to Secrets Manager. */
  countingReader(role: InboxRole = 'verifier', structure?: InboxStructure): CountingReader {
    return new CountingReader(this.secretReader(this.as(role, structure).secretsManager));
  }

  private secretReader(client: SecretsManagerClient): SecretVersionReader {
    return new SecretsManagerReader(client);
  }

  /**
   * Real SDK clients of one of this inbox's roles, judged by the policies its template gives
   * for `structure` (the Answerline provider by default), bound to this inbox's resources.
   */
  as(role: InboxRole, structure: InboxStructure = { providers: [this.providerConfig()] }, maxAttempts?: number): RoleClients {
    return fixtureGateway().clientsAs(role, structure, this.localResources(), maxAttempts, this.faultProxyUrl);
  }

  /**
   * The fault proxy between the handlers and AWS (`packages/webhook-inbox-local/src/faults/proxy.ts`): the handlers and role
   * clients built after this call go through it, so a test can throttle their calls, answer their
   * batches in part and make the indexes lag, as AWS does. Its faults end with the test.
   */
  async faults(): Promise<FaultProxy> {
    const { proxy, url } = await fixtureGateway().faultProxy();
    this.faultProxyUrl = url;
    return proxy;
  }

  /**
   * How many attempts the handlers' SDK client of `service` makes at one call (its retry
   * strategy's `maxAttempts`: DynamoDB's is not the others'): a fault of this many calls in a row
   * reaches the handler's own handling.
   */
  sdkAttempts(service: 'dynamodb' | 'sqs' | 'eventBridge'): Promise<number> {
    return this.as('verifier')[service].config.maxAttempts();
  }

  /** The fault proxy's endpoint, for an operator's client (the ops CLI) that should go through it too. */
  async faultEndpoint(): Promise<string> {
    return (await fixtureGateway().faultProxy()).url;
  }

  /** A shipped bundle's environment as one of this inbox's roles (credentials, region, endpoints at the gateway). */
  environmentAs(role: InboxRole, structure: InboxStructure = { providers: [this.providerConfig()] }): Record<string, string> {
    return fixtureGateway().environmentAs(role, structure, this.localResources());
  }

  /** The bus and the processing function this inbox's effects go to (the template's are bound to them). */
  useEffectTargets(targets: { eventBusName?: string; processingFunctionArn?: string }): void {
    this.effectTargets = { ...this.effectTargets, ...targets };
  }

  /** The local resources that stand for this inbox's template. */
  private localResources(): LocalInbox {
    return {
      inboxTable: this.names.inboxTable,
      resultsTable: this.names.resultsTable,
      workQueueUrl: this.workQueueUrl,
      deadLetterQueueUrl: this.deadLetterQueueUrl,
      bodyBucket: this.names.bodyBucket,
      ...this.effectTargets,
    };
  }

  /** The body bucket (the test creates it) as a role's body store. */
  bodyStore(role: InboxRole, structure?: InboxStructure): S3BodyStore {
    return new S3BodyStore(this.as(role, structure).s3, this.names.bodyBucket);
  }

  /**
   * A new bus on the effects stand-in, and the sink that puts the processor's effects on it
   * with the processor's client. `maxAttempts: 1` hands every injected failure to the processor.
   */
  busSink(effects: EffectsFixture, maxAttempts = 1): { bus: string; sink: EventBridgeSink } {
    const bus = effects.createBus();
    this.useEffectTargets({ eventBusName: bus });
    return { bus, sink: new EventBridgeSink(this.as('processor', undefined, maxAttempts).eventBridge, bus) };
  }

  /** Deploys `handler` as the user's processing function; the sink that invokes it with the processor's client. */
  functionSink(effects: EffectsFixture, handler: (payload: unknown) => unknown): { functionName: string; sink: LambdaFunctionSink } {
    const functionName = effects.deployFunction(handler);
    this.useEffectTargets({ processingFunctionArn: functionName });
    return { functionName, sink: new LambdaFunctionSink(this.as('processor', undefined, 1).lambda, functionName) };
  }

  /**
   * A provider served at `/hooks/<name>`, its own `secret` stored in the stand-in; pass the
   * configs to `verifier({ providers })` to serve several providers from one inbox.
   */
  async addProvider(name: string, adapter: string, secret: string, overrides: Partial<ProviderRuntimeConfig> = {}): Promise<ProviderRuntimeConfig> {
    const { id } = await this.secrets.create(secret);
    this.markSensitive(secret);
    return providerRuntimeConfig({ name, adapter, secretId: id, ...overrides });
  }

  /**
   * A verifier serving the Answerline provider, or the `providers` given; its calls judged by the
   * template of an inbox serving them, or of the inbox `judgedBy` describes.
   */
  verifier(
    overrides: Partial<VerifierDependencies> & { secretId?: string; providers?: readonly ProviderRuntimeConfig[]; judgedBy?: InboxStructure } = {},
  ): ReturnType<typeof createVerifier> {
    const { secretId, providers = [this.providerConfig(secretId)], judgedBy = { providers }, ...deps } = overrides;
    return createVerifier({ ...verifierDependenciesFromEnv(this.environments({ providers }).verifier, this.runtime('verifier', judgedBy)), ...deps });
  }

  /**
   * A processor for the Answerline provider, or the `providers` given (with the authoritative
   * reads they configure, their API keys read from the stand-in through the real reader).
   */
  processor(overrides: Partial<ProcessorDependencies> & { providers?: readonly ProviderRuntimeConfig[] } = {}): (event: SQSEvent) => Promise<SQSBatchResponse> {
    const { providers = [this.providerConfig()], ...deps } = overrides;
    return createProcessor({ ...processorDependenciesFromEnv(this.environments({ providers }).processor, this.runtime('processor', { providers })), ...deps });
  }

  /** The processor's effects configuration for `sink`, named after this inbox. */
  effects(sink: EffectSink, options: Partial<EffectsConfig> = {}): EffectsConfig {
    return { sink, inboxName: INBOX_NAME, ...options };
  }

  /** The reconciler of the Answerline provider: the sweep, then the ledger (`ledger(...)` for another one). */
  reconciler(overrides: Partial<ReconcilerDependencies> = {}): ReturnType<typeof createReconciler> {
    const structure = { providers: [this.providerConfig()] };
    return createReconciler({ ...reconcilerDependenciesFromEnv(this.environments(structure).reconciler, this.runtime('reconciler', structure)), ...overrides });
  }

  /** A reconciler of the inbox `structure` describes (its providers, polling and recovery), its clients judged by that template's reconciler role. */
  reconcilerOf(structure: InboxStructure, overrides: Partial<ReconcilerDependencies> = {}): ReturnType<typeof createReconciler> {
    return createReconciler({ ...reconcilerDependenciesFromEnv(this.environments(structure).reconciler, this.runtime('reconciler', structure)), ...overrides });
  }

  /** The environments the construct gives this inbox's handlers when it serves `structure`. */
  private environments(structure: InboxStructure): HandlerEnvironments {
    return handlerEnvironments(
      handlerSettingsWithDefaults({
        inboxName: INBOX_NAME,
        inboxTable: this.names.inboxTable,
        resultsTable: this.names.resultsTable,
        workQueueUrl: this.workQueueUrl,
        providers: structure.providers,
        polling: structure.polling ?? [],
        recovery: structure.recovery ?? [],
        retentionSeconds: RETENTION_SECONDS,
        leaseSeconds: LEASE_MS / 1000,
        // Emulators on a shared 2-core machine are no measure of DynamoDB's latency: a budget no call here exceeds.
        rejectionRecordBudgetMs: REJECTION_RECORD_BUDGET_MS,
      }),
    );
  }

  /** A role's clients, judged by its policies for `structure`, on the clock, logging into the capture. */
  private runtime(role: InboxRole, structure: InboxStructure): HandlerRuntime {
    const clients = this.as(role, structure);
    return {
      clients,
      bodyStore: (bucket) => new S3BodyStore(clients.s3, bucket),
      functionSink: (functionArn) => new LambdaFunctionSink(clients.lambda, functionArn),
      now: this.clock.now,
      write: this.capture.write,
    };
  }

  /** This inbox as the ops CLI sees it: the OpsConfig the construct publishes as a stack output. */
  opsConfig(overrides: Partial<OpsConfig> = {}): OpsConfig {
    return {
      inboxName: INBOX_NAME,
      inboxTable: this.names.inboxTable,
      resultsTable: this.names.resultsTable,
      workQueueUrl: this.workQueueUrl,
      deadLetterQueueUrl: this.deadLetterQueueUrl,
      reconcilerFunctionName: `${this.names.inboxTable}-reconciler`,
      providers: [PROVIDER],
      ...overrides,
    };
  }

  /** The document the local twin writes for the CLI's `--config`: this inbox's OpsConfig and the emulators' endpoints. */
  localOpsConfig(lambdaEndpoint: string, overrides: Partial<LocalOpsConfig> = {}): LocalOpsConfig {
    const env = process.env;
    return {
      ...this.opsConfig(),
      endpoints: {
        dynamodb: env.AWS_ENDPOINT_URL_DYNAMODB!,
        sqs: env.AWS_ENDPOINT_URL_SQS!,
        s3: env.AWS_ENDPOINT_URL_S3!,
        lambda: lambdaEndpoint,
        region: LOCAL_REGION,
      },
      ...overrides,
    };
  }

  /** A work queue whose URL names no queue: every enqueue fails as SQS fails it. */
  missingQueue(): SqsWorkQueue {
    return new SqsWorkQueue(this.sqs, `${this.workQueueUrl}-does-not-exist`);
  }

  /** An inbox store whose DynamoDB endpoint refuses connections: the store is down. */
  unreachableInbox(): DynamoDbInboxStore {
    return new DynamoDbInboxStore(new DynamoDBClient({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 }), this.names.inboxTable);
  }

  // --- the submission ledger ----------------------------------------------------------------

  /** The ledger's store, as the reconciler uses it. */
  submissionStore(): DynamoDbSubmissionStore {
    return new DynamoDbSubmissionStore(this.dynamodb, this.names.inboxTable);
  }

  /** The apps' client on this inbox's table and clock; Answerline's horizon for the Answerline provider. */
  submissionLedger(options: Partial<SubmissionLedgerOptions> = {}): SubmissionLedger {
    return new SubmissionLedger({
      // An app granted grantRecordSubmission, as docs/SUBMISSION-LEDGER.md shows.
      client: this.as('app').dynamodb,
      tableName: this.names.inboxTable,
      now: this.clock.now,
      horizonSeconds: { [PROVIDER]: AnswerlineLifecycle.HORIZON_SECONDS },
      ...options,
    });
  }

  /** How the reconciler polls a (fake) provider API: its key stored in the stand-in, Answerline's defaults. */
  async pollingConfig(apiKey: string, taskUrlTemplate: string, overrides: Partial<PollingRuntimeConfig> = {}): Promise<PollingRuntimeConfig> {
    const { id } = await this.secrets.create(apiKey);
    this.markSensitive(apiKey);
    return {
      provider: PROVIDER,
      taskUrlTemplate,
      apiKeySecretId: id,
      horizonSeconds: PollingDefaults.answerline.horizonSeconds,
      recheckSeconds: PollingDefaults.answerline.recheckSeconds,
      ...overrides,
    };
  }

  /**
   * The reconciler's ledger step: the providers served (Answerline unless told), polled as
   * `polling` says through the real HTTP clients (or the `apis` given).
   */
  ledger(
    options: Partial<LedgerDependencies> & {
      configs?: readonly ProviderRuntimeConfig[];
      polling?: readonly PollingRuntimeConfig[];
      apis?: ReadonlyMap<string, ProviderApi>;
    } = {},
  ): LedgerDependencies {
    const { configs = [this.providerConfig()], polling = [], apis, ...deps } = options;
    const structure = { providers: configs, polling };
    const { ledger } = reconcilerDependenciesFromEnv(this.environments(structure).reconciler, { ...this.runtime('reconciler', structure), apis });
    return { ...ledger!, ...deps };
  }

  /** A submission item, decoded. */
  submission(key: string): Promise<Item | undefined> {
    return this.row(key, InboxItemKind.SUBMISSION);
  }

  /** A signed delivery event for `body`, signed now (by the clock) with the inbox's secret. */
  signed(
    body: Buffer | string,
    options: Partial<SignOptions> = {},
    headers: Record<string, string | undefined> = {},
    eventOptions: EventOptions = {},
  ): APIGatewayProxyEventV2 {
    const event = signedEvent(body, { secret: this.secret.value, timestamp: this.clock.seconds, ...options }, headers, eventOptions);
    this.markSensitive(Buffer.isBuffer(body) ? body.toString('utf8') : body, event.body ?? '', event.headers['webhook-signature'] ?? '');
    for (const marker of contentMarkers(body)) this.markSensitive(marker);
    return event;
  }

  /** Signs `body` and hands it to the default verifier (or the one given); returns the parsed answer. */
  async deliver(
    body: Buffer | string,
    verifier: ReturnType<typeof createVerifier> = (this.defaultVerifier ??= this.verifier()),
    options: Partial<SignOptions> = {},
  ): Promise<Answer> {
    return answerOf(await verifier(this.signed(body, options)));
  }

  // --- reading state back -------------------------------------------------------------------

  /** Nothing stored, nothing enqueued: the invariant of every rejection. */
  async expectNothingAdmitted(): Promise<void> {
    expect(await this.inboxItems()).toEqual([]);
    expect(await this.takeMessages()).toEqual([]);
  }

  async row(key: string, sk: string = InboxItemKind.DELIVERY): Promise<Item | undefined> {
    const out = await this.dynamodb.send(
      new GetItemCommand({ TableName: this.names.inboxTable, Key: { pk: { S: key }, sk: { S: sk } }, ConsistentRead: true }),
    );
    return out.Item && decodeItem(out.Item);
  }

  /** A job's result item, its `response` read as a consumer reads it: the text, inflated when `responseEncoding` is `deflate-raw`. */
  async result(jobKey: string, provider: string = PROVIDER): Promise<Item | undefined> {
    const out = await this.dynamodb.send(
      new GetItemCommand({ TableName: this.names.resultsTable, Key: { pk: { S: resultKey(provider, jobKey) } }, ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const item = decodeItem(out.Item);
    const deflated = out.Item.responseEncoding?.S === 'deflate-raw' ? out.Item.response?.B : undefined;
    return deflated ? { ...item, response: inflateRawSync(deflated).toString('utf8') } : item;
  }

  /**
   * Every item of the inbox table but the records of refused requests (a scan: tests only).
   * Those live in partitions of their own, `rejected:...`, and `rejectionItems()` reads them.
   */
  async inboxItems(): Promise<Item[]> {
    return (await this.scan(this.names.inboxTable)).filter((item) => !String(item.pk).startsWith(REJECTED_PARTITION));
  }

  /** The delivery rows of the inbox table: `inboxItems()` without the body items (`sk` `body#<digest>`) beside some rows. */
  async deliveryRows(): Promise<Item[]> {
    return (await this.inboxItems()).filter((item) => !String(item.sk).startsWith(InboxItemKind.BODY_PREFIX));
  }

  /** The items of refused requests: their records, the per-minute counters, the source-hash key (a scan: tests only). */
  async rejectionItems(): Promise<Item[]> {
    return (await this.scan(this.names.inboxTable)).filter((item) => String(item.pk).startsWith(REJECTED_PARTITION));
  }

  resultItems(): Promise<Item[]> {
    return this.scan(this.names.resultsTable);
  }

  private async scan(tableName: string): Promise<Item[]> {
    const items: Item[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.dynamodb.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []).map(decodeItem));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** Receives and deletes every visible message of a queue; returns the inbox keys they carry. */
  async takeMessages(queueUrl: string = this.workQueueUrl): Promise<string[]> {
    const keys: string[] = [];
    for (;;) {
      const out = await this.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      const messages = out.Messages ?? [];
      if (messages.length === 0) return keys;
      keys.push(...messages.map((message) => decodeWorkMessage(message.Body ?? '')));
      await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! })),
        }),
      );
    }
  }

  // --- running the processor the way Lambda's SQS event source does -------------------------

  /** Polls the work queue until a receive comes back empty. */
  drain(handler: SqsHandler): Promise<PollReport> {
    return drain(this.eventSource(), this.workQueueUrl, handler);
  }

  pollOnce(handler: SqsHandler, waitTimeSeconds = 0): Promise<PollReport> {
    return pollOnce(this.eventSource(), this.workQueueUrl, handler, { waitTimeSeconds });
  }

  /** The SQS event source mapping polls with the processor's execution role, as in AWS. */
  private eventSource(): SQSClient {
    return (this.eventSourceClient ??= this.as('processor').sqs);
  }

  /**
   * Keeps polling (long polls of a second, so redeliveries after the visibility timeout are
   * picked up) until `done` holds; a bounded wait, not a timing assertion.
   */
  async pollUntil(handler: SqsHandler, done: () => Promise<boolean>, maxPolls = 10): Promise<void> {
    for (let polls = 0; !(await done()); polls++) {
      if (polls >= maxPolls) throw new Error(`condition still false after ${maxPolls} polls`);
      await this.pollOnce(handler, 1);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Effects: the EventBridge and Lambda Invoke stand-ins, a provider's API, a worker that crashes
// ---------------------------------------------------------------------------------------------

/**
 * Where effects go in the tests: the EventBridge stand-in (PutEvents) and the Lambda Invoke
 * stand-in (the user's processing function), each behind the real SDK client, so the sinks run
 * exactly as they do in Lambda.
 */
/**
 * The secrets stand-in and the effect targets a test file with effects needs, started before its
 * tests and stopped after them.
 */
export function effectsFixtures(): { secrets: SecretsFixture; fx: EffectsFixture } {
  const secrets = new SecretsFixture();
  const fx = new EffectsFixture();
  beforeAll(() => Promise.all([secrets.start(), fx.start()]));
  afterAll(() => Promise.all([secrets.stop(), fx.stop()]));
  return { secrets, fx };
}

export class EffectsFixture {
  readonly eventBridge = new EventBridgeStandIn();
  readonly lambda = new LambdaInvokeStandIn();
  private eventBridgeUrl?: string;
  private lambdaUrl?: string;

  async start(): Promise<this> {
    [this.eventBridgeUrl, this.lambdaUrl] = await Promise.all([this.eventBridge.start(), this.lambda.start()]);
    fixtureGateway().useEffects(this.eventBridgeUrl, this.lambdaUrl);
    return this;
  }

  async stop(): Promise<void> {
    await Promise.all([this.eventBridge.stop(), this.lambda.stop()]);
  }

  /** What a handler configured only by its environment needs: `AWS_ENDPOINT_URL_*` for both stand-ins. */
  get endpointEnv(): Record<string, string> {
    return { AWS_ENDPOINT_URL_EVENTBRIDGE: this.eventBridgeUrl!, AWS_ENDPOINT_URL_LAMBDA: this.lambdaUrl! };
  }

  /** A new bus on the stand-in; its name. The processor's sink on it: `InboxHarness.busSink`. */
  createBus(): string {
    const bus = uniqueName('effects-bus');
    this.eventBridge.createBus(bus);
    return bus;
  }

  /** Deploys `handler` as a user's processing function; returns its ARN. */
  deployFunction(handler: (payload: unknown) => unknown): string {
    const functionName = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${uniqueName('user-processing')}`;
    this.lambda.deploy(functionName, handler);
    return functionName;
  }

  /** The invocations of one function, in order. */
  invocationsOf(functionName: string): unknown[] {
    return this.lambda.invocations.filter((invocation) => invocation.functionName === functionName).map((invocation) => invocation.payload);
  }
}

/** A request the fake provider API received. */
export interface ProviderApiRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * A provider's REST API on 127.0.0.1 (OpenAI's `GET /v1/responses/{id}`, say) for the
 * authoritative read: it serves the resources it is given, answers a chosen status for an id,
 * 404 for anything unknown, and records every request.
 */
export class FakeProviderApi {
  readonly requests: ProviderApiRequest[] = [];
  private readonly resources = new Map<string, string>();
  private readonly statuses = new Map<string, number[]>();
  private server?: Server;
  private baseUrl?: string;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      this.requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers });
      const queued = this.statuses.get(url.pathname);
      const status = queued?.shift() ?? (this.resources.has(url.pathname) ? 200 : 404);
      const body = status === 200 ? this.resources.get(url.pathname)! : JSON.stringify({ error: { message: `status ${status}` } });
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  get url(): string {
    return this.baseUrl!;
  }

  /** Serves `body` (JSON text) at `path`. */
  serve(path: string, body: string): void {
    this.resources.set(path, body);
  }

  /** The next requests for `path` are answered with these statuses, in order, before the resource. */
  answer(path: string, ...statuses: number[]): void {
    this.statuses.set(path, [...(this.statuses.get(path) ?? []), ...statuses]);
  }

  requestsFor(path: string): ProviderApiRequest[] {
    return this.requests.filter((request) => request.path === path);
  }
}

/** What a dying worker throws: nothing it would do after this point happens. */
export class WorkerCrashed extends Error {
  override readonly name = 'WorkerCrashed';
}

/**
 * One worker process that dies at a chosen step. The processor catches the crash like any error,
 * but the stores it hands out drop every write after the crash (the release, the completion),
 * so the row keeps its lease and the message comes back, exactly as after a real crash.
 */
export class CrashingWorker {
  private crashed = false;

  constructor(private readonly inner: InboxStore) {}

  private crash(): never {
    this.crashed = true;
    throw new WorkerCrashed('the worker died');
  }

  /** The inbox as this worker sees it: the writes that settle a claimed row are lost after the crash. */
  inbox(): InboxStore {
    const lostAfterCrash = new Set<string | symbol>(['complete', 'release', 'touchPending']);
    return new Proxy(this.inner, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => (this.crashed && lostAfterCrash.has(property) ? Promise.resolve(false) : value.apply(target, args));
      },
    });
  }

  /** A sink that dies before sending anything: the row is decided, its effect never left. */
  crashBeforeSending(): EffectSink {
    return { dispatch: async (): Promise<DispatchOutcome[]> => this.crash() };
  }

  /** A sink that sends through `sink`, then dies before the row is completed. */
  crashAfterSending(sink: EffectSink): EffectSink {
    return {
      dispatch: async (effects: readonly Effect[]): Promise<DispatchOutcome[]> => {
        await sink.dispatch(effects);
        return this.crash();
      },
    };
  }
}

/** Distinctive content inside an Answerline body (answers, error messages) that logs must not carry. */
function contentMarkers(body: Buffer | string): string[] {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : body;
  return [...text.matchAll(/(?:answer|failed)-[0-9a-f-]{36}/g)].map((match) => match[0]);
}

/**
 * Stores an Answerline `body` as a row and enqueues it, bypassing the verifier: a row the adapter
 * cannot read, as only an earlier version's edge could admit one (the edge now refuses such a
 * body). Returns its inbox key.
 */
export async function storeUncheckedRow(h: InboxHarness, body: string): Promise<string> {
  const bytes = Buffer.from(body, 'utf8');
  const now = h.clock.now();
  const key = keyOf(body);
  await h.inbox.insert({
    provider: PROVIDER,
    eventId: taskIdOf(body),
    body: bytes,
    digest: sha256Hex(bytes),
    receivedAt: now,
    meta: {},
    expiresAt: Math.floor(now / 1000) + RETENTION_SECONDS,
  });
  await h.queue.enqueue([key]);
  return key;
}

/**
 * The methods of a store, its class's and those it inherits, bound to it: a copy whose methods a
 * test can replace one by one (a store that dies at a chosen call).
 */
export function bind<T extends object>(instance: T): { [K in keyof T]: T[K] } {
  const bound: Record<string, unknown> = {};
  for (
    let proto = Object.getPrototypeOf(instance) as Record<string, unknown>;
    proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as Record<string, unknown>
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = proto[name];
      // A subclass's method overrides the one it inherits.
      if (name !== 'constructor' && !(name in bound) && typeof value === 'function') bound[name] = (value as (...args: unknown[]) => unknown).bind(instance);
    }
  }
  return bound as T;
}
