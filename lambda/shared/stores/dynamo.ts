import {
  AttributeValue,
  DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  QueryCommandInput,
  QueryCommandOutput,
  ScanCommand,
  ScanCommandInput,
} from '@aws-sdk/client-dynamodb';
import { AwaitingIndex, InboxAttr, PendingIndex } from '../../../lib/contract';
import { allShards } from '../runtime/digest';
import { isConditionalCheckFailed } from '../runtime/errors';

/** DynamoDB attribute values, written by hand to keep the handler bundles free of lib-dynamodb. */
export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: number): AttributeValue => ({ N: String(value) });
export const stringMap = (values: Record<string, string>): AttributeValue => ({
  M: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, S(value)])),
});

/**
 * Writes an item unless one with its partition key exists: true when written, false when one was
 * there (and nothing is changed). One conditional PutItem, safe to repeat.
 */
export async function putIfAbsent(
  client: DynamoDBClient,
  tableName: string,
  item: Record<string, AttributeValue>,
  options: { abortSignal?: AbortSignal } = {},
): Promise<boolean> {
  try {
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': InboxAttr.PK },
      }),
      options,
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/** The clauses, names and values of an update that writes a value held in one of several forms. */
export interface FormReplacement {
  /** `#f0 = :f0, …`, to join into a SET clause. */
  readonly set: string;
  /** `#r0, …`, to join into a REMOVE clause (never empty: a value takes fewer attributes than its forms have). */
  readonly remove: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, AttributeValue>;
}

/**
 * Sets `attributes` and removes every other attribute of `forms` (the bytes, the bytes deflated,
 * their encoding, a body store's reference), so that an item rewritten in one form keeps no
 * stale attribute of another.
 */
export function replaceForms(attributes: Record<string, AttributeValue>, forms: readonly string[]): FormReplacement {
  const set = Object.entries(attributes);
  const removed = forms.filter((name) => !(name in attributes));
  return {
    set: set.map((_, i) => `#form${i} = :form${i}`).join(', '),
    remove: removed.map((_, i) => `#stale${i}`).join(', '),
    names: {
      ...Object.fromEntries(set.map(([name], i) => [`#form${i}`, name])),
      ...Object.fromEntries(removed.map((name, i) => [`#stale${i}`, name])),
    },
    values: Object.fromEntries(set.map(([, value], i) => [`:form${i}`, value])),
  };
}

/** One of the sharded sparse indexes (pending rows, awaiting submissions): which, and its attributes. */
export interface ShardedIndex {
  readonly tableName: string;
  readonly indexName: string;
  readonly shardCount: number;
  readonly shardAttribute: string;
  readonly sortAttribute: string;
}

/** The inbox's sparse index of rows not processed yet, sorted by when each became pending, read over `shardCount` shards. */
export function pendingIndexOf(tableName: string, shardCount: number): ShardedIndex {
  return {
    tableName,
    indexName: PendingIndex.NAME,
    shardCount,
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
 * The entries of a sharded index whose sort value is at most `bound`, lowest first, at most
 * `limit`: one bounded Query per shard, in parallel, never a Scan.
 */
export async function queryShardedIndex(client: DynamoDBClient, index: ShardedIndex, bound: number, limit: number): Promise<ShardedEntry[]> {
  if (limit <= 0) return [];
  const pages = await queryEachShard(client, index, { range: { operator: '<=', bound }, limit });
  return pages
    .flatMap((page) => page.Items ?? [])
    .map((item) => ({ key: item[InboxAttr.PK].S!, sort: Number(item[index.sortAttribute].N) }))
    .sort((a, b) => a.sort - b.sort || (a.key < b.key ? -1 : 1))
    .slice(0, limit);
}

/** How much one read of a sharded index may take: entries per page, and pages of each shard. */
export interface ReadBound {
  readonly pageEntries: number;
  readonly pagesPerShard: number;
}

/** What a bounded read of a range of a sharded index found. */
export interface RangeRead {
  /** The entries read, lowest first: every one of the range below `readBefore`, and some at or above it. */
  readonly entries: ShardedEntry[];
  /** The range's end, or less: the lowest sort value a shard's last page ended at, when the bound stopped it there. */
  readonly readBefore: number;
}

/**
 * The entries of a sharded index whose sort value is in [from, before), lowest first across the
 * shards: each shard read page by page (in parallel, never a Scan), at most `pagesPerShard` pages.
 * A shard the bound stopped is read completely only below the value its last page ended at (its
 * next page may hold more of that value), which bounds `readBefore`. A shard whose pages have not got past
 * `from` is read on beyond the bound: entries sharing one sort value (an operator's replay revives
 * rows at one instant) would otherwise hold `readBefore` at `from` for ever.
 */
export async function readShardedRange(client: DynamoDBClient, index: ShardedIndex, from: number, before: number, bound: ReadBound): Promise<RangeRead> {
  // An empty range (a saved watermark past a cutoff that a longer sweepAfter moved back): nothing to read.
  if (from >= before) return { entries: [], readBefore: before };
  const shards = await Promise.all(
    allShards(index.shardCount).map(async (shard) => {
      const entries: ShardedEntry[] = [];
      let start: Record<string, AttributeValue> | undefined;
      let endedAt = from;
      for (let pages = 1; ; pages++) {
        const page = await client.send(
          new QueryCommand({
            TableName: index.tableName,
            IndexName: index.indexName,
            // BETWEEN includes `before`; those entries, the last of the range, are dropped below.
            KeyConditionExpression: '#shard = :shard AND #sort BETWEEN :from AND :before',
            // Only what an entry is read for: a smaller answer to parse (the page's last key comes whole regardless).
            ProjectionExpression: '#pk, #sort',
            ExpressionAttributeNames: { '#shard': index.shardAttribute, '#sort': index.sortAttribute, '#pk': InboxAttr.PK },
            ExpressionAttributeValues: { ':shard': S(shard), ':from': N(from), ':before': N(before) },
            Limit: bound.pageEntries,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) entries.push({ key: item[InboxAttr.PK].S!, sort: Number(item[index.sortAttribute].N) });
        start = page.LastEvaluatedKey;
        if (!start) return { entries, readBefore: before };
        endedAt = Number(start[index.sortAttribute].N);
        if (pages >= bound.pagesPerShard && endedAt > from) return { entries, readBefore: endedAt };
      }
    }),
  );
  const readBefore = Math.min(...shards.map((shard) => shard.readBefore));
  return {
    entries: shards
      .flatMap((shard) => shard.entries)
      .filter((entry) => entry.sort < before)
      .sort((a, b) => a.sort - b.sort || (a.key < b.key ? -1 : 1)),
    readBefore,
  };
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
