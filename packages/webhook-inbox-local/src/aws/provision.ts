/**
 * Creates the tables and queues of an inbox against any DynamoDB/SQS endpoint, from the same
 * schema and defaults the construct deploys (`TableSchema` in `lib/contract/table-schema.ts`,
 * `Defaults` in `lib/contract/defaults.ts`), for the handler tests and the bench: they never keep
 * a copy of the resource definitions. (The local twin creates its resources from the template.)
 */
import { CreateTableCommand, CreateTableCommandInput, DescribeTableCommand, DynamoDBClient, KeySchemaElement } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, KeyAttributeSchema, TableSchema, TableShape } from '../../../../lib/contract';

export interface InboxResourceNames {
  readonly inboxTable: string;
  readonly resultsTable: string;
  readonly workQueue: string;
  readonly deadLetterQueue: string;
  readonly bodyBucket: string;
}

export interface ProvisionedQueues {
  readonly workQueueUrl: string;
  readonly deadLetterQueueUrl: string;
}

/** Names for one inbox; a prefix keeps several inboxes (or test files) apart on one emulator. */
export function resourceNames(prefix: string): InboxResourceNames {
  return {
    inboxTable: `${prefix}-inbox`,
    resultsTable: `${prefix}-results`,
    workQueue: `${prefix}-work`,
    deadLetterQueue: `${prefix}-dlq`,
    bodyBucket: `${prefix}-bodies`.toLowerCase(),
  };
}

export async function createTables(client: DynamoDBClient, names: InboxResourceNames): Promise<void> {
  await client.send(new CreateTableCommand(createTableInput(names.inboxTable, TableSchema.inbox)));
  await client.send(new CreateTableCommand(createTableInput(names.resultsTable, TableSchema.results)));
  await Promise.all([waitForActiveTable(client, names.inboxTable), waitForActiveTable(client, names.resultsTable)]);
}

/** A CreateTable request of a table of `shape` (its TTL is not set: no emulator here applies one). */
function createTableInput(tableName: string, shape: TableShape): CreateTableCommandInput {
  const keySchema = (partitionKey: KeyAttributeSchema, sortKey?: KeyAttributeSchema): KeySchemaElement[] => [
    { AttributeName: partitionKey.name, KeyType: 'HASH' },
    ...(sortKey ? [{ AttributeName: sortKey.name, KeyType: 'RANGE' as const }] : []),
  ];
  const keys = [shape.partitionKey, shape.sortKey, ...shape.indexes.flatMap((index) => [index.partitionKey, index.sortKey])];
  const attributes = new Map(keys.flatMap((key) => (key ? [[key.name, key.type] as const] : [])));
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([name, type]) => ({ AttributeName: name, AttributeType: type })),
    KeySchema: keySchema(shape.partitionKey, shape.sortKey),
    ...(shape.indexes.length > 0
      ? {
          GlobalSecondaryIndexes: shape.indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            Projection: { ProjectionType: index.projection },
          })),
        }
      : {}),
  };
}

/**
 * Waits until a new table is ACTIVE: dynalite answers CreateTable with the table CREATING, and
 * an item request before it is ACTIVE fails with ResourceNotFoundException, as in DynamoDB.
 */
export async function waitForActiveTable(client: DynamoDBClient, tableName: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`table ${tableName} is still ${Table?.TableStatus} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface QueueSettings {
  readonly maxReceiveCount?: number;
  readonly visibilityTimeoutSeconds?: number;
}

export async function createQueues(client: SQSClient, names: InboxResourceNames, settings: QueueSettings = {}): Promise<ProvisionedQueues> {
  const dlq = await client.send(new CreateQueueCommand({ QueueName: names.deadLetterQueue }));
  const dlqArn = await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }));
  const work = await client.send(
    new CreateQueueCommand({
      QueueName: names.workQueue,
      Attributes: {
        VisibilityTimeout: String(settings.visibilityTimeoutSeconds ?? Defaults.PROCESSOR_TIMEOUT_SECONDS * Defaults.VISIBILITY_TIMEOUT_FACTOR),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn.Attributes!.QueueArn,
          maxReceiveCount: settings.maxReceiveCount ?? Defaults.MAX_RECEIVE_COUNT,
        }),
      },
    }),
  );
  return { workQueueUrl: work.QueueUrl!, deadLetterQueueUrl: dlq.QueueUrl! };
}

/** The bucket for bodies too large for a row. */
export async function createBodyBucket(client: S3Client, names: InboxResourceNames): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: names.bodyBucket }));
}
