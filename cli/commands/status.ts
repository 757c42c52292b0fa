import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { AwaitingIndex, Defaults, InboxAttr as A, InboxItemKind, OpsConfig, PendingIndex } from '../../lib/contract';
import { allShards } from '../../lambda/shared/digest';
import { ShardedIndex } from '../../lambda/shared/dynamo';
import { OpsClients } from '../clients';
import { isMissingIndex, scanAll } from './common';

export interface QueueDepth {
  /** Messages waiting to be received. */
  readonly visible: number;
  /** Messages received and not yet deleted (being processed, or waiting out a visibility timeout). */
  readonly inFlight: number;
}

/** A count from bounded index queries: at most `perShardLimit` per shard are counted. */
export interface BoundedCount {
  readonly count: number;
  /** True when a shard had more than the limit: the real number is at least `count`. */
  readonly atLeast: boolean;
}

export interface StatusReport {
  readonly inboxName: string;
  readonly workQueue: QueueDepth;
  /** Null when the inbox has no dead-letter queue. */
  readonly deadLetterQueue: QueueDepth | null;
  /** Rows in the pending index since longer than `olderThanSeconds`: the reconciler's sweep owes them. */
  readonly stranded: BoundedCount & { readonly olderThanSeconds: number };
  /** Altered duplicates kept beside their originals (a Scan); null with `skipScan`. */
  readonly quarantined: { readonly count: number; readonly itemsRead: number } | null;
  /** Submissions from the awaiting index; null when the table has no such index (yet). */
  readonly submissions: { readonly awaiting: BoundedCount; readonly overdue: BoundedCount } | null;
}

export interface StatusOptions {
  readonly now: number;
  /** Skip the Scan that counts quarantined copies (large tables). */
  readonly skipScan?: boolean;
  /** Rows counted per shard and question at most; bounds the read. */
  readonly perShardLimit?: number;
}

export const STRANDED_AFTER_SECONDS = Defaults.SWEEP_AFTER_SECONDS;
const PER_SHARD_LIMIT = 1000;

export async function status(clients: OpsClients, config: OpsConfig, options: StatusOptions): Promise<StatusReport> {
  const limit = options.perShardLimit ?? PER_SHARD_LIMIT;
  const [workQueue, deadLetterQueue, stranded, quarantined, submissions] = await Promise.all([
    queueDepth(clients.sqs, config.workQueueUrl),
    config.deadLetterQueueUrl ? queueDepth(clients.sqs, config.deadLetterQueueUrl) : Promise.resolve(null),
    countIndex(
      clients.dynamodb,
      { tableName: config.inboxTable, indexName: PendingIndex.NAME, shardCount: PendingIndex.SHARD_COUNT, shardAttribute: A.PENDING_SHARD, sortAttribute: A.PENDING_SINCE },
      limit,
      options.now - STRANDED_AFTER_SECONDS * 1000,
    ),
    options.skipScan ? Promise.resolve(null) : countQuarantined(clients.dynamodb, config.inboxTable),
    countSubmissions(clients.dynamodb, config.inboxTable, options.now, limit),
  ]);
  return {
    inboxName: config.inboxName,
    workQueue,
    deadLetterQueue,
    stranded: { ...stranded, olderThanSeconds: STRANDED_AFTER_SECONDS },
    quarantined,
    submissions,
  };
}

async function queueDepth(client: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const out = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/**
 * One Query per shard, `Select: COUNT`, at most `limit` entries each: bounded whatever the inbox
 * size. `before`: count only entries whose sort key is below it (strictly); absent: all.
 */
async function countIndex(client: DynamoDBClient, index: ShardedIndex, limit: number, before?: number): Promise<BoundedCount> {
  const pages = await Promise.all(
    allShards(index.shardCount).map((shard) =>
      client.send(
        new QueryCommand({
          TableName: index.tableName,
          IndexName: index.indexName,
          KeyConditionExpression: before === undefined ? '#shard = :shard' : '#shard = :shard AND #sort < :before',
          ExpressionAttributeNames: { '#shard': index.shardAttribute, ...(before === undefined ? {} : { '#sort': index.sortAttribute }) },
          ExpressionAttributeValues: { ':shard': { S: shard }, ...(before === undefined ? {} : { ':before': { N: String(before) } }) },
          Select: 'COUNT',
          Limit: limit,
        }),
      ),
    ),
  );
  return {
    count: pages.reduce((total, page) => total + (page.Count ?? 0), 0),
    atLeast: pages.some((page) => page.LastEvaluatedKey !== undefined),
  };
}

async function countQuarantined(client: DynamoDBClient, tableName: string): Promise<{ count: number; itemsRead: number }> {
  const { matched, itemsRead } = await scanAll(
    client,
    {
      TableName: tableName,
      FilterExpression: 'begins_with(#sk, :quarantine)',
      ExpressionAttributeNames: { '#sk': A.SK },
      ExpressionAttributeValues: { ':quarantine': { S: InboxItemKind.QUARANTINE_PREFIX } },
      Select: 'COUNT',
    },
    () => undefined,
  );
  return { count: matched, itemsRead };
}

/**
 * Submissions still AWAITING a result (the awaiting index), and those of them due for a check
 * now: first due at their provider's horizon, so an entry due now is past it with no result.
 */
async function countSubmissions(
  client: DynamoDBClient,
  tableName: string,
  now: number,
  limit: number,
): Promise<{ awaiting: BoundedCount; overdue: BoundedCount } | null> {
  const index: ShardedIndex = { tableName, indexName: AwaitingIndex.NAME, shardCount: AwaitingIndex.SHARD_COUNT, shardAttribute: A.AWAIT_SHARD, sortAttribute: A.AWAIT_DUE_AT };
  try {
    const [awaiting, overdue] = await Promise.all([countIndex(client, index, limit), countIndex(client, index, limit, now + 1)]);
    return { awaiting, overdue };
  } catch (error) {
    if (isMissingIndex(error)) return null;
    throw error;
  }
}
