import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { AwaitingIndex, Defaults, InboxAttr as A, InboxItemKind, OpsConfig, PendingIndex } from '../../lib/contract';
import { allShards } from '../../lambda/shared/digest';
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
    countIndex(clients.dynamodb, config.inboxTable, {
      index: PendingIndex.NAME,
      shards: allShards(PendingIndex.SHARD_COUNT),
      shardAttr: A.PENDING_SHARD,
      sortAttr: A.PENDING_SINCE,
      before: options.now - STRANDED_AFTER_SECONDS * 1000,
      limit,
    }),
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

interface IndexCount {
  readonly index: string;
  readonly shards: readonly string[];
  readonly shardAttr: string;
  readonly sortAttr: string;
  /** Count only entries whose sort key is below this (strictly); absent: all. */
  readonly before?: number;
  readonly limit: number;
}

/** One Query per shard, `Select: COUNT`, at most `limit` entries each: bounded whatever the inbox size. */
async function countIndex(client: DynamoDBClient, tableName: string, q: IndexCount): Promise<BoundedCount> {
  const pages = await Promise.all(
    q.shards.map((shard) =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: q.index,
          KeyConditionExpression: q.before === undefined ? '#shard = :shard' : '#shard = :shard AND #sort < :before',
          ExpressionAttributeNames: { '#shard': q.shardAttr, ...(q.before === undefined ? {} : { '#sort': q.sortAttr }) },
          ExpressionAttributeValues: { ':shard': { S: shard }, ...(q.before === undefined ? {} : { ':before': { N: String(q.before) } }) },
          Select: 'COUNT',
          Limit: q.limit,
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
  const base = {
    index: AwaitingIndex.NAME,
    shards: allShards(AwaitingIndex.SHARD_COUNT),
    shardAttr: A.AWAIT_SHARD,
    sortAttr: A.AWAIT_DUE_AT,
    limit,
  };
  try {
    const [awaiting, overdue] = await Promise.all([
      countIndex(client, tableName, base),
      countIndex(client, tableName, { ...base, before: now + 1 }),
    ]);
    return { awaiting, overdue };
  } catch (error) {
    if (isMissingIndex(error)) return null;
    throw error;
  }
}
