/**
 * Creates the tables and queues of an inbox against any DynamoDB/SQS endpoint, from the same
 * schema and defaults the construct deploys (`TableSchema` in `lib/contract/table-schema.ts`,
 * `Defaults` in `lib/contract/defaults.ts`), for the handler tests and the bench: they never keep
 * a copy of the resource definitions. (The local twin creates its resources from the template.)
 */
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, TableSchema } from '../lib/contract';

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
  const { inbox, results } = TableSchema;
  await client.send(
    new CreateTableCommand({
      TableName: names.inboxTable,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: inbox.partitionKey, AttributeType: 'S' },
        { AttributeName: inbox.sortKey, AttributeType: 'S' },
        { AttributeName: inbox.pendingIndex.partitionKey, AttributeType: 'S' },
        { AttributeName: inbox.pendingIndex.sortKey, AttributeType: 'N' },
        { AttributeName: inbox.awaitingIndex.partitionKey, AttributeType: 'S' },
        { AttributeName: inbox.awaitingIndex.sortKey, AttributeType: 'N' },
        { AttributeName: inbox.jobRefIndex.partitionKey, AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: inbox.partitionKey, KeyType: 'HASH' },
        { AttributeName: inbox.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: inbox.pendingIndex.name,
          KeySchema: [
            { AttributeName: inbox.pendingIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: inbox.pendingIndex.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: inbox.awaitingIndex.name,
          KeySchema: [
            { AttributeName: inbox.awaitingIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: inbox.awaitingIndex.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: inbox.jobRefIndex.name,
          KeySchema: [{ AttributeName: inbox.jobRefIndex.partitionKey, KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    }),
  );
  await client.send(
    new CreateTableCommand({
      TableName: names.resultsTable,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: results.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: results.partitionKey, KeyType: 'HASH' }],
    }),
  );
  await Promise.all([waitForActiveTable(client, names.inboxTable), waitForActiveTable(client, names.resultsTable)]);
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
