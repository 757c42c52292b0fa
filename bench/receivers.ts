/**
 * The three receivers the bench compares, each built from real handlers on real SDK clients
 * against the same emulators and stand-ins:
 *
 * - ours: the shipped handlers' composition roots (`lambda/<handler>/from-env.ts`, what each
 *   `index.ts` calls), on the environments the construct sets, with SDK clients handed in so
 *   that every client carries the bench's request counter;
 * - powertools: what a careful engineer builds from Powertools for AWS Lambda (TypeScript) to do
 *   the same work: verify the signature (the reference `standardwebhooks` library), then, made
 *   idempotent by `@aws-lambda-powertools/idempotency` on its DynamoDB persistence layer (keyed
 *   by the signed task id), store the delivery and enqueue it; a processor on
 *   `@aws-lambda-powertools/batch` (partial batch responses) whose record handler is idempotent
 *   too, writes the job's result by the same rule (a conditional write on the winner order) and
 *   publishes the same effect to EventBridge;
 * - lean: what a careful engineer writes by hand with no library beyond the SDK: the edge checks
 *   the HMAC itself, writes the delivery with one conditional PutItem (`attribute_not_exists`: a
 *   duplicate is answered 200 and not enqueued) and sends it to the queue; the processor offers
 *   each record's result by the same conditional write and publishes the batch's effects in one
 *   PutEvents, with a partial batch response. No sweep, no telemetry, no ledger.
 *
 * Both comparison receivers store the body and the result the way ours does (`BODY_ENCODING`):
 * the UTF-8 bytes deflated (raw deflate) when that makes them smaller, in a binary attribute, so
 * that no ratio comes from one side compressing and the other not.
 */
import { AttributeValue, CreateTableCommand, DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand, PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { AdapterKind, Defaults, EffectEvent, ProviderRuntimeConfig, providerRuntimeConfig } from '../lib/contract';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JobObservation } from '../lambda/shared/providers/adapter';
import { observeAnswerlineTask } from '../lambda/shared/providers/answerline/adapter';
import { deflatedIfSmaller } from '../lambda/shared/stores/inline-body';
import { isConditionalCheckFailed } from '../lambda/shared/runtime/errors';
import { winnerOrder } from '../lambda/shared/winner-order';
import { createProcessorFromEnv } from '../lambda/processor/from-env';
import { S3BodyStore } from '../lambda/shared/stores/s3-body-store';
import { createReconcilerFromEnv, reconcilerDependenciesFromEnv } from '../lambda/reconciler/from-env';
import { createReconciler } from '../lambda/reconciler/reconciler';
import { verifierDependenciesFromEnv } from '../lambda/verifier/from-env';
import { createVerifier } from '../lambda/verifier/verifier';
import { handlerEnvironments, handlerSettingsWithDefaults } from '../lib/private/handler-environment';
import { createQueues, createTables, InboxResourceNames, resourceNames } from '#twin/testing';
import { CapacityMeter } from './capacity';
import { RequestCounter, SdkClient } from './counting';
import { BenchEnvironment, lambdaContext, LogSink, runPrefix } from './environment';

/** The pipeline stages requests are counted under. */
export const Stage = {
  EDGE: 'edge',
  EVENT_SOURCE: 'event source',
  PROCESSOR: 'processor',
  RECONCILER: 'reconciler',
  /** The sweep's examination of the load's pending-index entries once they are older than sweepAfter: once per delivery. */
  SWEEP: 'sweep',
  SECRETS: 'secrets',
} as const;

export const RECEIVER_NAMES = ['ours', 'powertools', 'lean'] as const;
export type ReceiverName = (typeof RECEIVER_NAMES)[number];

export interface Receiver {
  readonly name: ReceiverName;
  /** The API Gateway integration: one delivery in, the HTTP answer out. */
  edge(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2>;
  /** The SQS-triggered processor: one batch in, the partial batch response out. */
  processor(event: SQSEvent): Promise<SQSBatchResponse>;
  /** One scheduled reconciler run (ours only: the Powertools receiver has no sweep). */
  readonly reconciler?: () => Promise<unknown>;
  /**
   * The sweep as the runs after `sweepAfter` see the load: its clock `sweepAfter` ahead, so it
   * examines every entry the load left in the pending index (processed rows keep theirs). What a
   * run right after the load costs is per run; this is per delivery.
   */
  readonly sweep?: () => Promise<unknown>;
  /** Reads the signing secret into the cache, as the first delivery of an environment would. */
  warm(): Promise<void>;
  /** The signing secret, as the provider holds it. */
  readonly signingSecret: string;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly bus: string;
  /** The event source mapping's own SQS client (receive, delete), counted under `event source`. */
  readonly eventSourceSqs: SQSClient;
  /** The log lines each function wrote (CloudWatch Logs ingestion). */
  readonly logs: { readonly edge: LogSink; readonly processor: LogSink; readonly reconciler: LogSink };
  /** Its inbox and results tables (what DynamoDB stores per delivery is read from them). */
  readonly tables: { readonly inbox: string; readonly results: string };
  /** The edge's DynamoDB and SQS clients (the verifier latency floor sends through the same ones). */
  readonly edgeClients: { readonly dynamodb: DynamoDBClient; readonly sqs: SQSClient };
}

/** How a receiver's clients are instrumented: counted always, metered on the unit trace. */
export interface Instruments {
  readonly counter: RequestCounter;
  readonly meter?: CapacityMeter;
}

function instrument<C extends SdkClient>(client: C, stage: string, instruments: Instruments): C {
  instruments.counter.attach(client, stage);
  instruments.meter?.attach(client, stage);
  return client;
}

export const PROVIDER = 'answerline';
const INBOX_NAME = 'bench-inbox';

type SharedParts = Pick<Receiver, 'signingSecret' | 'queueUrl' | 'deadLetterQueueUrl' | 'bus' | 'eventSourceSqs' | 'logs'>;

/** What both receivers build alike once their tables exist; `secretId` names their signing secret. */
async function sharedParts(
  env: BenchEnvironment,
  instruments: Instruments,
  names: InboxResourceNames,
  label: string,
): Promise<{ secretId: string; parts: SharedParts }> {
  const queues = await createQueues(env.sqs(), names);
  const secret = await env.signingSecret();
  return {
    secretId: secret.id,
    parts: {
      signingSecret: secret.value,
      queueUrl: queues.workQueueUrl,
      deadLetterQueueUrl: queues.deadLetterQueueUrl,
      bus: env.bus(label),
      eventSourceSqs: instrument(env.sqs(), Stage.EVENT_SOURCE, instruments),
      logs: { edge: new LogSink(), processor: new LogSink(), reconciler: new LogSink() },
    },
  };
}

/** What our receiver is built with beyond the construct's defaults. */
export interface OurReceiverOptions {
  /** The processor archives to this bucket (the construct's `archive`), its S3 calls counted as the processor's. */
  readonly archiveBucket?: string;
}

/** Our receiver: the shipped wiring, from the construct's environments. */
export async function buildOurReceiver(env: BenchEnvironment, instruments: Instruments, label = 'ours', options: OurReceiverOptions = {}): Promise<Receiver> {
  const names = resourceNames(runPrefix(label));
  await createTables(env.dynamodb(), names);
  const { secretId, parts } = await sharedParts(env, instruments, names, label);
  const { bus, logs } = parts;
  const provider: ProviderRuntimeConfig = providerRuntimeConfig({ name: PROVIDER, adapter: AdapterKind.ANSWERLINE, secretId });
  // The environments the construct sets with its defaults (no body bucket, effects on the bench's bus).
  const environments = handlerEnvironments(
    handlerSettingsWithDefaults({
      inboxName: INBOX_NAME,
      inboxTable: names.inboxTable,
      resultsTable: names.resultsTable,
      workQueueUrl: parts.queueUrl,
      providers: [provider],
      effectBusName: bus,
      archiveBucket: options.archiveBucket,
    }),
  );

  // Each handler's own composition root, with clients that count its calls.
  const edgeDynamodb = instrument(env.dynamodb(), Stage.EDGE, instruments);
  const edgeSqs = instrument(env.sqs(), Stage.EDGE, instruments);
  const verifierDependencies = verifierDependenciesFromEnv(environments.verifier, {
    clients: { dynamodb: edgeDynamodb, sqs: edgeSqs, secretsManager: instrument(env.secretsManager(), Stage.SECRETS, instruments) },
    write: logs.edge.write,
  });
  const verifier = createVerifier(verifierDependencies);
  const processor = createProcessorFromEnv(environments.processor, {
    clients: { dynamodb: instrument(env.dynamodb(), Stage.PROCESSOR, instruments), eventBridge: instrument(env.events(), Stage.PROCESSOR, instruments) },
    archiveStore: (bucket) => new S3BodyStore(instrument(env.s3(), Stage.PROCESSOR, instruments), bucket),
    write: logs.processor.write,
  });
  const reconciler = createReconcilerFromEnv(environments.reconciler, {
    clients: {
      dynamodb: instrument(env.dynamodb(), Stage.RECONCILER, instruments),
      sqs: instrument(env.sqs(), Stage.RECONCILER, instruments),
      secretsManager: instrument(env.secretsManager(), Stage.RECONCILER, instruments),
    },
    write: logs.reconciler.write,
  });

  const sweepDependencies = reconcilerDependenciesFromEnv(environments.reconciler, {
    clients: { dynamodb: instrument(env.dynamodb(), Stage.SWEEP, instruments), sqs: instrument(env.sqs(), Stage.SWEEP, instruments) },
    write: logs.reconciler.write,
  });
  const sweep = createReconciler({
    ...sweepDependencies,
    // The ledger's part is the scheduled run's, counted there.
    ledger: undefined,
    now: () => Date.now() + sweepDependencies.sweepAfterMs,
  });

  return {
    ...parts,
    name: 'ours',
    tables: { inbox: names.inboxTable, results: names.resultsTable },
    edge: verifier,
    processor,
    reconciler: () => reconciler(undefined, lambdaContext('bench-reconciler', 120_000)),
    sweep: () => sweep(undefined, lambdaContext('bench-sweep', 120_000)),
    warm: async () => {
      await verifierDependencies.secrets.versions(secretId);
    },
    edgeClients: { dynamodb: edgeDynamodb, sqs: edgeSqs },
  };
}

/** Tables with a string partition key only, named `<prefix>-<name>`, by name. */
async function createKeyTables<N extends string>(client: DynamoDBClient, prefix: string, keys: Record<N, string>): Promise<Record<N, string>> {
  const tables = {} as Record<N, string>;
  for (const [name, key] of Object.entries(keys) as [N, string][]) {
    tables[name] = `${prefix}-${name}`;
    await client.send(
      new CreateTableCommand({
        TableName: tables[name],
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: key, KeyType: 'HASH' }],
      }),
    );
  }
  return tables;
}

/** The signing secret, cached like ours (the same TTL): one GetSecretValue per TTL. */
function cachedSecret(client: SecretsManagerClient, secretId: string): () => Promise<string> {
  let value: string | undefined;
  let fetchedAt = 0;
  return async () => {
    if (value === undefined || Date.now() - fetchedAt >= Defaults.SECRET_CACHE_SECONDS * 1000) {
      value = (await client.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString!;
      fetchedAt = Date.now();
    }
    return value;
  };
}

/**
 * How both comparison receivers store a body or a result, the way ours does: the UTF-8 bytes
 * deflated (raw deflate) in `deflated` when that makes them smaller, else the bytes in `body`.
 */
export const BODY_ENCODING = 'UTF-8 bytes, raw-deflated when smaller (binary attribute), as ours stores them';

function storedBody(bytes: Buffer, name = 'body'): Record<string, AttributeValue> {
  const deflated = deflatedIfSmaller(bytes);
  return deflated ? { [`${name}Deflated`]: { B: deflated } } : { [name]: { B: bytes } };
}

/**
 * Offers a job's result under the winner rule: one conditional write, kept when the job has no
 * result yet or this one's order is not lower. False when a better result is already kept.
 */
async function offerResult(client: DynamoDBClient, table: string, observation: JobObservation): Promise<boolean> {
  const values: Record<string, AttributeValue> = {
    ':taskId': { S: observation.taskId },
    ':eventKey': { S: `${PROVIDER}#${observation.taskId}` },
    ':status': { S: observation.status },
    ':createdAt': { S: observation.createdAt },
    ':order': { S: winnerOrder(observation) },
    ':now': { N: String(Date.now()) },
  };
  const [[responseName, responseValue]] = Object.entries(storedBody(Buffer.from(observation.response, 'utf8'), 'response'));
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: `${PROVIDER}#${observation.jobKey}` } },
        UpdateExpression:
          'SET #taskId = :taskId, #eventKey = :eventKey, #status = :status, #createdAt = :createdAt, #order = :order, #response = :response, #updatedAt = :now',
        // A retried record offers its result again and publishes again: effects are at least once.
        ConditionExpression: 'attribute_not_exists(#order) OR #order <= :order',
        ExpressionAttributeNames: {
          '#taskId': 'taskId',
          '#eventKey': 'eventKey',
          '#status': 'status',
          '#createdAt': 'createdAt',
          '#order': 'winnerOrder',
          '#response': responseName,
          '#updatedAt': 'updatedAt',
        },
        ExpressionAttributeValues: { ...values, ':response': responseValue },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/** The effect both comparison receivers publish for a decided job: the same event as ours. */
function effectEntry(bus: string, observation: JobObservation): PutEventsRequestEntry {
  return {
    EventBusName: bus,
    Source: EffectEvent.SOURCE,
    DetailType: EffectEvent.JOB_RESULT_DECIDED,
    Detail: JSON.stringify({
      provider: PROVIDER,
      eventKey: `${PROVIDER}#${observation.taskId}`,
      jobKey: observation.jobKey,
      taskId: observation.taskId,
      status: observation.status,
      createdAt: observation.createdAt,
      response: JSON.parse(observation.response) as unknown,
    }),
  };
}

/** A comparison receiver from its parts: its tables, its cached signing secret, its handlers and edge clients. */
function comparisonReceiver(
  name: ReceiverName,
  parts: SharedParts,
  tables: { readonly deliveries: string; readonly results: string },
  signingSecret: () => Promise<string>,
  handlers: Pick<Receiver, 'edge' | 'processor' | 'edgeClients'>,
): Receiver {
  return {
    ...parts,
    ...handlers,
    name,
    tables: { inbox: tables.deliveries, results: tables.results },
    warm: async () => {
      await signingSecret();
    },
  };
}

const EDGE_TIMEOUT_MS = 10_000;
const PROCESSOR_TIMEOUT_MS = Defaults.PROCESSOR_TIMEOUT_SECONDS * 1000;

/** The comparison receiver built on Powertools idempotency and batch processing. */
export async function buildPowertoolsReceiver(env: BenchEnvironment, instruments: Instruments, label = 'powertools'): Promise<Receiver> {
  const prefix = runPrefix(label);
  // Idempotency records, deliveries, job results.
  const tables = await createKeyTables(env.dynamodb(), prefix, { idempotency: 'id', deliveries: 'id', results: 'pk' });
  const { secretId, parts } = await sharedParts(env, instruments, resourceNames(prefix), label);
  const signingSecret = cachedSecret(instrument(env.secretsManager(), Stage.SECRETS, instruments), secretId);

  // The edge: verify, then (idempotently, by task id) store the delivery and enqueue it.
  const edgeDynamodb = instrument(env.dynamodb(), Stage.EDGE, instruments);
  const edgeSqs = instrument(env.sqs(), Stage.EDGE, instruments);
  const edgeIdempotency = new IdempotencyConfig({ eventKeyJmesPath: 'powertools_json(body).task.id' });
  const admit = makeIdempotent(
    async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
      const body = event.body ?? '';
      const taskId = String((JSON.parse(body) as { task: { id: string } }).task.id);
      await edgeDynamodb.send(
        new PutItemCommand({
          TableName: tables.deliveries,
          Item: {
            id: { S: `${PROVIDER}#${taskId}` },
            ...storedBody(Buffer.from(body, 'utf8')),
            receivedAt: { N: String(Date.now()) },
            webhookId: { S: event.headers['webhook-id'] ?? '' },
          },
        }),
      );
      await edgeSqs.send(new SendMessageCommand({ QueueUrl: parts.queueUrl, MessageBody: body }));
      return { statusCode: 202, headers: { 'content-type': 'application/json' }, body: '{"result":"accepted"}' };
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName: tables.idempotency, awsSdkV3Client: edgeDynamodb }),
      config: edgeIdempotency,
      keyPrefix: `${prefix}-edge`,
    },
  );
  let webhook: { secret: string; verifier: Webhook } | undefined;
  const edge = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    edgeIdempotency.registerLambdaContext(lambdaContext(`${prefix}-edge`, EDGE_TIMEOUT_MS));
    const value = await signingSecret();
    if (webhook?.secret !== value) webhook = { secret: value, verifier: new Webhook(value) };
    const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
    try {
      webhook.verifier.verify(raw, event.headers as Record<string, string>, { jsonParse: false });
    } catch {
      return { statusCode: 401, body: '{"result":"bad_signature"}' };
    }
    return admit({ ...event, body: raw, isBase64Encoded: false });
  };

  // The processor: partial batch responses, each record idempotent by task id.
  const processorDynamodb = instrument(env.dynamodb(), Stage.PROCESSOR, instruments);
  const events = instrument(env.events(), Stage.PROCESSOR, instruments);
  const recordIdempotency = new IdempotencyConfig({ eventKeyJmesPath: 'powertools_json(body).task.id' });
  const handleRecord = makeIdempotent(
    async (record: SQSRecord): Promise<{ outcome: string }> => {
      const observation = observeAnswerlineTask(Buffer.from(record.body, 'utf8'));
      if (!observation) return { outcome: 'no_final_result' };
      if (!(await offerResult(processorDynamodb, tables.results, observation))) return { outcome: 'superseded' };
      const out = await events.send(new PutEventsCommand({ Entries: [effectEntry(parts.bus, observation)] }));
      if (out.FailedEntryCount) throw new Error('PutEvents failed');
      return { outcome: 'winner' };
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName: tables.idempotency, awsSdkV3Client: processorDynamodb }),
      config: recordIdempotency,
      keyPrefix: `${prefix}-processor`,
    },
  );
  const batch = new BatchProcessor(EventType.SQS);
  const processor = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const context = lambdaContext(`${prefix}-processor`, PROCESSOR_TIMEOUT_MS);
    recordIdempotency.registerLambdaContext(context);
    return processPartialResponse(event, handleRecord, batch, { context });
  };

  return comparisonReceiver('powertools', parts, tables, signingSecret, { edge, processor, edgeClients: { dynamodb: edgeDynamodb, sqs: edgeSqs } });
}

/** Standard Webhooks' check, by hand: HMAC-SHA256 of `id.timestamp.body`, any `v1,` signature, five minutes' tolerance. */
function standardWebhooksValid(secret: string, headers: Record<string, string | undefined>, body: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > Defaults.TIMESTAMP_TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest();
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The lean comparison receiver: conditional writes by hand, nothing else. */
export async function buildLeanReceiver(env: BenchEnvironment, instruments: Instruments, label = 'lean'): Promise<Receiver> {
  const prefix = runPrefix(label);
  const tables = await createKeyTables(env.dynamodb(), prefix, { deliveries: 'id', results: 'pk' });
  const { secretId, parts } = await sharedParts(env, instruments, resourceNames(prefix), label);
  const signingSecret = cachedSecret(instrument(env.secretsManager(), Stage.SECRETS, instruments), secretId);

  const edgeDynamodb = instrument(env.dynamodb(), Stage.EDGE, instruments);
  const edgeSqs = instrument(env.sqs(), Stage.EDGE, instruments);
  const edge = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
    if (!standardWebhooksValid(await signingSecret(), event.headers, raw)) return { statusCode: 401, body: '{"result":"bad_signature"}' };
    let taskId: unknown;
    try {
      taskId = (JSON.parse(raw) as { task?: { id?: unknown } }).task?.id;
    } catch {
      return { statusCode: 400, body: '{"result":"malformed"}' };
    }
    if (typeof taskId !== 'string') return { statusCode: 400, body: '{"result":"malformed","field":"task.id"}' };
    try {
      await edgeDynamodb.send(
        new PutItemCommand({
          TableName: tables.deliveries,
          Item: { id: { S: `${PROVIDER}#${taskId}` }, ...storedBody(Buffer.from(raw, 'utf8')), receivedAt: { N: String(Date.now()) } },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { statusCode: 200, body: '{"result":"duplicate"}' };
      throw error;
    }
    await edgeSqs.send(new SendMessageCommand({ QueueUrl: parts.queueUrl, MessageBody: raw }));
    return { statusCode: 202, headers: { 'content-type': 'application/json' }, body: '{"result":"accepted"}' };
  };

  const processorDynamodb = instrument(env.dynamodb(), Stage.PROCESSOR, instruments);
  const events: EventBridgeClient = instrument(env.events(), Stage.PROCESSOR, instruments);
  const processor = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failed: string[] = [];
    const decided: { messageId: string; observation: JobObservation }[] = [];
    for (const record of event.Records) {
      try {
        const observation = observeAnswerlineTask(Buffer.from(record.body, 'utf8'));
        if (observation && (await offerResult(processorDynamodb, tables.results, observation))) decided.push({ messageId: record.messageId, observation });
      } catch {
        failed.push(record.messageId);
      }
    }
    // One PutEvents for the batch's winners (up to 10, its limit); an entry that failed retries its record.
    if (decided.length > 0) {
      const out = await events.send(new PutEventsCommand({ Entries: decided.map(({ observation }) => effectEntry(parts.bus, observation)) }));
      out.Entries?.forEach((entry, index) => {
        if (entry.ErrorCode) failed.push(decided[index].messageId);
      });
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };

  return comparisonReceiver('lean', parts, tables, signingSecret, { edge, processor, edgeClients: { dynamodb: edgeDynamodb, sqs: edgeSqs } });
}

/** The builders by name. */
export const RECEIVERS: Readonly<Record<ReceiverName, typeof buildOurReceiver>> = {
  ours: buildOurReceiver,
  powertools: buildPowertoolsReceiver,
  lean: buildLeanReceiver,
};
