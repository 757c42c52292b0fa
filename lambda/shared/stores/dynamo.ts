import { AttributeValue, DynamoDBClient, QueryCommand, QueryCommandInput, QueryCommandOutput, ScanCommand, ScanCommandInput } from '@aws-sdk/client-dynamodb';
import { AwaitingIndex, InboxAttr, PendingIndex } from '../../../lib/contract';
import { allShards } from '../runtime/digest';

/** DynamoDB attribute values, written by hand to keep the handler bundles free of lib-dynamodb. */
export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: number): AttributeValue => ({ N: String(value) });
export const stringMap = (values: Record<string, string>): AttributeValue => ({
  M: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, S(value)])),
});

/** One of the sharded sparse indexes (pending rows, awaiting submissions): which, and its attributes. */
export interface ShardedIndex {
  readonly tableName: string;
  readonly indexName: string;
  readonly shardCount: number;
  readonly shardAttribute: string;
  readonly sortAttribute: string;
}

/** The inbox's sparse index of rows not processed yet, sorted by when each became pending. */
export function pendingIndexOf(tableName: string): ShardedIndex {
  return {
    tableName,
    indexName: PendingIndex.NAME,
    shardCount: PendingIndex.SHARD_COUNT,
    shardAttribute: InboxAttr.PENDING_SHARD,
    sortAttribute: InboxAttr.PENDING_SINCE,
  };
}

/** The inbox's sparse index of submissions still AWAITING, sorted by when each is next due. */
export function awaitingIndexOf(tableName: string): ShardedIndex {
  return {
    tableName,
    indexName: AwaitingIndex.NAME,
    shardCount: AwaitingIndex.SHARD_COUNT,
    shardAttribute: InboxAttr.AWAIT_SHARD,
    sortAttribute: InboxAttr.AWAIT_DUE_AT,
  };
}

/** A count that stopped at its bound: `atLeast` when some shard had more than the limit. */
export interface BoundedCount {
  readonly count: number;
  readonly atLeast: boolean;
}

/** One Query per shard of `index`, in parallel; `range` bounds the sort value. */
function queryEachShard(
  client: DynamoDBClient,
  index: ShardedIndex,
  query: { readonly range?: { readonly operator: '<' | '<='; readonly bound: number }; readonly limit: number; readonly count?: boolean },
): Promise<QueryCommandOutput[]> {
  const { range } = query;
  return Promise.all(
    allShards(index.shardCount).map((shard) =>
      client.send(
        new QueryCommand({
          TableName: index.tableName,
          IndexName: index.indexName,
          KeyConditionExpression: range ? `#shard = :shard AND #sort ${range.operator} :bound` : '#shard = :shard',
          ExpressionAttributeNames: { '#shard': index.shardAttribute, ...(range ? { '#sort': index.sortAttribute } : {}) },
          ExpressionAttributeValues: { ':shard': S(shard), ...(range ? { ':bound': N(range.bound) } : {}) },
          ...(query.count ? { Select: 'COUNT' as const } : {}),
          Limit: query.limit,
        }),
      ),
    ),
  );
}

/**
 * How many entries of a sharded index (whose sort value is below `before`, when given): one
 * Query per shard, `Select: COUNT`, at most `limit` entries each, bounded whatever the inbox size.
 */
export async function countShardedIndex(client: DynamoDBClient, index: ShardedIndex, limit: number, before?: number): Promise<BoundedCount> {
  const range = before === undefined ? undefined : { operator: '<' as const, bound: before };
  const pages = await queryEachShard(client, index, { range, limit, count: true });
  return { count: pages.reduce((total, page) => total + (page.Count ?? 0), 0), atLeast: pages.some((page) => page.LastEvaluatedKey !== undefined) };
}

/** An item of a sharded index: its table key, and its numeric sort value. */
export interface ShardedEntry {
  readonly key: string;
  readonly sort: number;
}

/**
 * The entries of a sharded index whose sort value is at most `bound` (strictly below when
 * `inclusive` is false), lowest first, at most `limit`: one bounded Query per shard, in parallel,
 * never a Scan.
 */
export async function queryShardedIndex(
  client: DynamoDBClient,
  index: ShardedIndex,
  bound: number,
  limit: number,
  inclusive: boolean,
): Promise<ShardedEntry[]> {
  if (limit <= 0) return [];
  const pages = await queryEachShard(client, index, { range: { operator: inclusive ? '<=' : '<', bound }, limit });
  return pages
    .flatMap((page) => page.Items ?? [])
    .map((item) => ({ key: item[InboxAttr.PK].S!, sort: Number(item[index.sortAttribute].N) }))
    .sort((a, b) => a.sort - b.sort || (a.key < b.key ? -1 : 1))
    .slice(0, limit);
}

/** A Query's items, page by page, until the pages run out or `onItems` answers false (enough read). */
export async function queryPages(
  client: DynamoDBClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
  onItems: (items: Record<string, AttributeValue>[]) => boolean | void,
): Promise<void> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    const more = onItems(page.Items ?? []);
    start = more === false ? undefined : page.LastEvaluatedKey;
  } while (start);
}

/** A whole-table Scan, page by page (ops commands only: never on a per-delivery or scheduled path). */
export async function scanAll(
  client: DynamoDBClient,
  input: Omit<ScanCommandInput, 'ExclusiveStartKey'>,
  onItems: (items: Record<string, AttributeValue>[]) => void | Promise<void>,
): Promise<{ itemsRead: number; matched: number }> {
  let itemsRead = 0;
  let matched = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    itemsRead += page.ScannedCount ?? 0;
    matched += page.Count ?? 0;
    await onItems(page.Items ?? []);
    start = page.LastEvaluatedKey;
  } while (start);
  return { itemsRead, matched };
}

/** Every item of a whole-table Scan (the twin's demo and audit; ops commands stream with `scanAll`). */
export async function scanItems(client: DynamoDBClient, input: Omit<ScanCommandInput, 'ExclusiveStartKey'>): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  await scanAll(client, input, (page) => {
    items.push(...page);
  });
  return items;
}
