/**
 * The two receivers the bench compares, each built from real handlers on real SDK clients
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
import { observeAnswerlineTask } from '../lambda/shared/providers/answerline/adapter';
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

export type ReceiverName = 'ours' | 'powertools';

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
