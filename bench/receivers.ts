/**
 * The two receivers the bench compares, each built from real handlers on real SDK clients
 * against the same emulators and stand-ins:
 *
 * - ours: the shipped handlers' factories (createVerifier, createProcessor, createReconciler)
 *   with the stores and clients their `index.ts` builds, injected here so that every client
 *   carries the bench's request counter;
 * - powertools: what a careful engineer builds from Powertools for AWS Lambda (TypeScript) to do
 *   the same work: verify the signature (the reference `standardwebhooks` library), then, made
 *   idempotent by `@aws-lambda-powertools/idempotency` on its DynamoDB persistence layer (keyed
 *   by the signed task id), store the delivery and enqueue it; a processor on
 *   `@aws-lambda-powertools/batch` (partial batch responses) whose record handler is idempotent
 *   too, writes the job's result by the same rule (a conditional write on the winner order) and
 *   publishes the same effect to EventBridge.
 */
import { CreateTableCommand, DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { AdapterKind, Defaults, EffectEvent, ProviderRuntimeConfig, providerRuntimeConfig } from '../lib/contract';
import { createProcessor } from '../lambda/processor/processor';
import { createReconciler } from '../lambda/reconciler/reconciler';
import { adaptersFor } from '../lambda/shared/providers/registry';
import { observeAnswerlineTask } from '../lambda/shared/providers/answerline/adapter';
import { EventBridgeSink } from '../lambda/shared/effects/sinks';
import { isConditionalCheckFailed } from '../lambda/shared/runtime/errors';
import { DynamoDbInboxStore } from '../lambda/shared/stores/inbox-store';
import { winnerOrder } from '../lambda/shared/winner-order';
import { ledgerProvidersFor } from '../lambda/shared/providers/polling';
import { DynamoDbResultsStore } from '../lambda/shared/stores/results-store';
import { MIN_MISS_REFRESH_MS, SecretCache, SecretsManagerReader } from '../lambda/shared/signatures/secrets';
import { DynamoDbSubmissionStore } from '../lambda/shared/stores/submission-store';
import { Telemetry } from '../lambda/shared/runtime/telemetry';
import { SqsWorkQueue } from '../lambda/shared/stores/work-queue';
import { createVerifier } from '../lambda/verifier/verifier';
import { createQueues, createTables, InboxResourceNames, resourceNames } from '../local/provision';
import { CapacityMeter } from './capacity';
import { RequestCounter, SdkClient } from './counting';
import { BenchEnvironment, lambdaContext, LogSink, runPrefix } from './environment';

/** The pipeline stages requests are counted under. */
export const Stage = {
  EDGE: 'edge',
  EVENT_SOURCE: 'event source',
  PROCESSOR: 'processor',
  RECONCILER: 'reconciler',
  SECRETS: 'secrets',
} as const;

export type ReceiverName = 'ours' | 'powertools';

export interface Receiver {
  readonly name: ReceiverName;
  /** The API Gateway integration: one delivery in, the HTTP answer out. */
  edge(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2>;
  /** The SQS-triggered processor: one batch in, the partial batch response out. */
  processor(event: SQSEvent): Promise<SQSBatchResponse>;
  /** One scheduled reconciler run (ours only: the Powertools receiver has no sweep). */
  readonly reconciler?: () => Promise<unknown>;
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
const RETENTION_SECONDS = Defaults.RETENTION_DAYS * 86_400;

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

/** Our receiver: the shipped handler factories, wired as their `index.ts` wires them. */
export async function buildOurReceiver(env: BenchEnvironment, instruments: Instruments, label = 'ours'): Promise<Receiver> {
  const names = resourceNames(runPrefix(label));
  await createTables(env.dynamodb(), names);
  const { secretId, parts } = await sharedParts(env, instruments, names, label);
  const { bus, logs } = parts;
  const provider: ProviderRuntimeConfig = providerRuntimeConfig({ name: PROVIDER, adapter: AdapterKind.ANSWERLINE, secretId });
  const secretCache = (stage: string) =>
    new SecretCache(new SecretsManagerReader(instrument(env.secretsManager(), stage, instruments)), {
      ttlMs: Defaults.SECRET_CACHE_SECONDS * 1000,
      minRefreshIntervalMs: MIN_MISS_REFRESH_MS,
    });

  // verifier/index.ts
  const edgeDynamodb = instrument(env.dynamodb(), Stage.EDGE, instruments);
  const edgeSqs = instrument(env.sqs(), Stage.EDGE, instruments);
  const verifierSecrets = secretCache(Stage.SECRETS);
  const verifier = createVerifier({
    adapters: adaptersFor([provider]),
    secrets: verifierSecrets,
    inbox: new DynamoDbInboxStore(edgeDynamodb, names.inboxTable),
    queue: new SqsWorkQueue(edgeSqs, parts.queueUrl),
    telemetry: new Telemetry(INBOX_NAME, 'verifier', logs.edge.write),
    now: Date.now,
    maxBodyBytes: Defaults.MAX_BODY_BYTES,
    retentionSeconds: RETENTION_SECONDS,
  });

  // processor/index.ts (no authoritative read configured: no secrets client)
  const processorDynamodb = instrument(env.dynamodb(), Stage.PROCESSOR, instruments);
  const processor = createProcessor({
    adapters: adaptersFor([provider]),
    inbox: new DynamoDbInboxStore(processorDynamodb, names.inboxTable),
    results: new DynamoDbResultsStore(processorDynamodb, names.resultsTable),
    effects: { sink: new EventBridgeSink(instrument(env.events(), Stage.PROCESSOR, instruments), bus), inboxName: INBOX_NAME },
    telemetry: new Telemetry(INBOX_NAME, 'processor', logs.processor.write),
    now: Date.now,
    leaseMs: Defaults.PROCESSOR_TIMEOUT_SECONDS * 1000,
    maxReceiveCount: Defaults.MAX_RECEIVE_COUNT,
  });

  // reconciler/index.ts: the sweep, then the submission ledger for the served provider (no polling configured)
  const reconcilerDynamodb = instrument(env.dynamodb(), Stage.RECONCILER, instruments);
  const reconcilerInbox = new DynamoDbInboxStore(reconcilerDynamodb, names.inboxTable);
  const reconciler = createReconciler({
    inbox: reconcilerInbox,
    queue: new SqsWorkQueue(instrument(env.sqs(), Stage.RECONCILER, instruments), parts.queueUrl),
    telemetry: new Telemetry(INBOX_NAME, 'reconciler', logs.reconciler.write),
    now: Date.now,
    sweepAfterMs: Defaults.SWEEP_AFTER_SECONDS * 1000,
    batchSize: Defaults.SWEEP_BATCH_SIZE,
    ledger: {
      submissions: new DynamoDbSubmissionStore(reconcilerDynamodb, names.inboxTable),
      providers: ledgerProvidersFor([provider], [], secretCache(Stage.RECONCILER)),
      batchSize: Defaults.POLL_BATCH_SIZE,
      retentionSeconds: RETENTION_SECONDS,
    },
  });

  return {
    ...parts,
    name: 'ours',
    edge: verifier,
    processor,
    reconciler: () => reconciler(undefined, lambdaContext('bench-reconciler', 120_000)),
    warm: async () => {
      await verifierSecrets.versions(secretId);
    },
    edgeClients: { dynamodb: edgeDynamodb, sqs: edgeSqs },
  };
}

/** The Powertools receiver's tables: idempotency records, deliveries, job results (partition key only). */
async function createPowertoolsTables(client: DynamoDBClient, prefix: string): Promise<{ idempotency: string; deliveries: string; results: string }> {
  const tables = { idempotency: `${prefix}-idempotency`, deliveries: `${prefix}-deliveries`, results: `${prefix}-results` };
  for (const [table, key] of [
    [tables.idempotency, 'id'],
    [tables.deliveries, 'id'],
    [tables.results, 'pk'],
  ]) {
    await client.send(
      new CreateTableCommand({
        TableName: table,
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

const EDGE_TIMEOUT_MS = 10_000;
const PROCESSOR_TIMEOUT_MS = Defaults.PROCESSOR_TIMEOUT_SECONDS * 1000;

/** The comparison receiver built on Powertools idempotency and batch processing. */
export async function buildPowertoolsReceiver(env: BenchEnvironment, instruments: Instruments, label = 'powertools'): Promise<Receiver> {
  const prefix = runPrefix(label);
  const tables = await createPowertoolsTables(env.dynamodb(), prefix);
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
            body: { S: body },
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
      const eventKey = `${PROVIDER}#${observation.taskId}`;
      try {
        await processorDynamodb.send(
          new UpdateItemCommand({
            TableName: tables.results,
            Key: { pk: { S: `${PROVIDER}#${observation.jobKey}` } },
            UpdateExpression:
              'SET #taskId = :taskId, #eventKey = :eventKey, #status = :status, #createdAt = :createdAt, #order = :order, #response = :response, #updatedAt = :now',
            ConditionExpression: 'attribute_not_exists(#order) OR #order < :order',
            ExpressionAttributeNames: {
              '#taskId': 'taskId',
              '#eventKey': 'eventKey',
              '#status': 'status',
              '#createdAt': 'createdAt',
              '#order': 'winnerOrder',
              '#response': 'response',
              '#updatedAt': 'updatedAt',
            },
            ExpressionAttributeValues: {
              ':taskId': { S: observation.taskId },
              ':eventKey': { S: eventKey },
              ':status': { S: observation.status },
              ':createdAt': { S: observation.createdAt },
              ':order': { S: winnerOrder(observation) },
              ':response': { S: observation.response },
              ':now': { N: String(Date.now()) },
            },
          }),
        );
      } catch (error) {
        if (isConditionalCheckFailed(error)) return { outcome: 'superseded' };
        throw error;
      }
      const out = await events.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: parts.bus,
              Source: EffectEvent.SOURCE,
              DetailType: EffectEvent.JOB_RESULT_DECIDED,
              Detail: JSON.stringify({
                provider: PROVIDER,
                eventKey,
                jobKey: observation.jobKey,
                taskId: observation.taskId,
                status: observation.status,
                createdAt: observation.createdAt,
                response: JSON.parse(observation.response) as unknown,
              }),
            },
          ],
        }),
      );
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

  return {
    ...parts,
    name: 'powertools',
    edge,
    processor,
    warm: async () => {
      await signingSecret();
    },
    edgeClients: { dynamodb: edgeDynamodb, sqs: edgeSqs },
  };
}

/** The builders by name. */
export const RECEIVERS: Readonly<Record<ReceiverName, typeof buildOurReceiver>> = {
  ours: buildOurReceiver,
  powertools: buildPowertoolsReceiver,
};
