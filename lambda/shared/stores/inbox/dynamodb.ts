import {
  AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { InboxAttr as A, DeliveryStatus, InboxItemKind } from '../../../../lib/contract';
import { shardOf } from '../../runtime/digest';
import { isConditionalCheckFailed } from '../../runtime/errors';
import { N, pendingIndexOf, putIfAbsent, RangeRead, ReadBound, readShardedRange, replaceForms, S, stringMap } from '../dynamo';
import { Completion, InboxStore, StrandedRows } from './port';
import {
  BODY_ATTRIBUTES,
  bodyAttributes,
  bodyItemKey,
  ClaimedDelivery,
  completedItem,
  deliveryItems,
  itemKey,
  NewDelivery,
  OriginalRow,
  pendingStateOf,
  QuarantinedCopy,
  rowDigestOf,
  RowState,
  rowStateOf,
  toStoredDelivery,
} from './row';
import { DynamoDbSweepWatermark } from './dynamodb-watermark';
import { examinePending, PendingIndexReader, ReadState, reviveFenced, SweepFence, UNREAD } from './sweep';

/**
 * The inbox in DynamoDB: each method one request (the rules that combine them are `examinePending`
 * and `reviveFenced`), every write conditional on the row's state; the sweep's watermark item's
 * requests are `DynamoDbSweepWatermark`'s.
 */
export class DynamoDbInboxStore extends DynamoDbSweepWatermark implements InboxStore, PendingIndexReader, SweepFence {
  /** BatchGetItem's limit of keys per call. */
  readonly statesPerRead = 100;

  async insert(delivery: NewDelivery): Promise<boolean> {
    const { row, body } = deliveryItems(delivery, this.pendingShards);
    // The body item first, so a row never lacks its body. It is keyed by the body's digest: a repeat
    // writes the same bytes again, and an altered copy (whose row insert then fails) never
    // overwrites the original's; that copy's item expires with the row.
    if (body) await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: body }));
    return putIfAbsent(this.client, this.tableName, row);
  }

  async originalOf(key: string): Promise<OriginalRow | undefined> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: itemKey(key),
        ConsistentRead: true,
        ProjectionExpression: '#digest, #recovered',
        ExpressionAttributeNames: { '#digest': A.DIGEST, '#recovered': A.RECOVERED },
      }),
    );
    return out.Item?.[A.DIGEST] === undefined ? undefined : { digest: rowDigestOf(out.Item), recovered: out.Item[A.RECOVERED]?.BOOL === true };
  }

  async quarantine(key: string, copy: QuarantinedCopy): Promise<void> {
    // The item is keyed by the copy's digest, so every repeat holds the same bytes; the body
    // attributes of another form (a copy kept before `deflated` existed) are removed.
    const body = replaceForms(bodyAttributes(copy), BODY_ATTRIBUTES);
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: itemKey(key, `${InboxItemKind.QUARANTINE_PREFIX}${copy.digest}`),
        UpdateExpression:
          `SET #provider = :provider, #digest = :digest, ${body.set}, #meta = :meta, ` +
          '#receivedAt = if_not_exists(#receivedAt, :receivedAt), #lastSeen = :receivedAt, #expiresAt = :expiresAt ' +
          `REMOVE ${body.remove} ADD #count :one`,
        ExpressionAttributeNames: {
          '#provider': A.PROVIDER,
          '#digest': A.DIGEST,
          ...body.names,
          '#meta': A.META,
          '#receivedAt': A.RECEIVED_AT,
          '#expiresAt': A.EXPIRES_AT,
          '#count': A.COUNT,
          '#lastSeen': A.LAST_SEEN_AT,
        },
        ExpressionAttributeValues: {
          ':provider': S(copy.provider),
          ':digest': S(copy.digest),
          ...body.values,
          ':meta': stringMap(copy.meta),
          ':receivedAt': N(copy.receivedAt),
          ':expiresAt': N(copy.expiresAt),
          ':one': N(1),
        },
      }),
    );
  }

  async claim(key: string, owner: string, now: number, leaseMs: number, maxAttempts: number): Promise<ClaimedDelivery | undefined> {
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          UpdateExpression: 'SET #status = :processing, #owner = :owner, #until = :until ADD #attempts :one',
          ConditionExpression: `attribute_exists(#pk) AND ${CLAIMABLE} AND (attribute_not_exists(#attempts) OR #attempts < :max)`,
          ExpressionAttributeNames: {
            '#pk': A.PK,
            '#status': A.STATUS,
            '#owner': A.LEASE_OWNER,
            '#until': A.LEASE_UNTIL,
            '#attempts': A.ATTEMPTS,
          },
          ExpressionAttributeValues: {
            ':received': S(DeliveryStatus.RECEIVED),
            ':processing': S(DeliveryStatus.PROCESSING),
            ':owner': S(owner),
            ':until': N(now + leaseMs),
            ':now': N(now),
            ':one': N(1),
            ':max': N(maxAttempts),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const row = out.Attributes!;
      const body = row[A.BODY_ITEM]?.BOOL ? await readBodyItem(this.client, this.tableName, row) : undefined;
      return { ...toStoredDelivery(row, body), item: row };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  async status(key: string): Promise<RowState | undefined> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: itemKey(key),
        ConsistentRead: true,
        ProjectionExpression: '#status, #until, #attempts',
        ExpressionAttributeNames: { '#status': A.STATUS, '#until': A.LEASE_UNTIL, '#attempts': A.ATTEMPTS },
      }),
    );
    return out.Item ? rowStateOf(out.Item) : undefined;
  }

  async markExhausted(key: string, error: string, now: number, maxAttempts: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          // Out of the pending index, like any dead row (rare, so the index write costs little, and the
          // sweep and the status count need not read it): the alarm and the operator own it from here.
          UpdateExpression: 'SET #status = :dead, #lastError = :error REMOVE #owner, #until, #shard, #since',
          ConditionExpression: `${CLAIMABLE} AND #attempts >= :max`,
          ExpressionAttributeNames: {
            '#status': A.STATUS,
            '#lastError': A.LAST_ERROR,
            '#owner': A.LEASE_OWNER,
            '#until': A.LEASE_UNTIL,
            '#shard': A.PENDING_SHARD,
            '#since': A.PENDING_SINCE,
            '#attempts': A.ATTEMPTS,
          },
          ExpressionAttributeValues: {
            ':dead': S(DeliveryStatus.DEAD),
            ':error': S(error.slice(0, 1000)),
            ':received': S(DeliveryStatus.RECEIVED),
            ':processing': S(DeliveryStatus.PROCESSING),
            ':now': N(now),
            ':max': N(maxAttempts),
          },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  async complete(key: string, owner: string, outcome: string, now: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          // The pending attributes stay: removing them would delete the index entry, a write billed like
          // the table's, while the TTL deletes it for nothing. The sweep reads a processed row's status.
          UpdateExpression: 'SET #status = :processed, #processedAt = :now, #outcome = :outcome REMOVE #owner, #until, #lastError',
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: {
            '#status': A.STATUS,
            '#processedAt': A.PROCESSED_AT,
            '#outcome': A.OUTCOME,
            '#owner': A.LEASE_OWNER,
            '#until': A.LEASE_UNTIL,
            '#lastError': A.LAST_ERROR,
          },
          ExpressionAttributeValues: { ':processed': S(DeliveryStatus.PROCESSED), ':now': N(now), ':outcome': S(outcome), ':owner': S(owner) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * One request for a batch's completions instead of one conditional UpdateItem per row. A put
   * has no condition, and needs none while the lease holds: no other worker can claim a row before
   * its lease runs out (`CLAIMABLE`), release and completion are the lease holder's, revive and
   * markExhausted act only on rows no live lease holds, and the one write anyone else makes to a
   * leased row, the sweep's restart of its pending clock, matters no more once the row is
   * PROCESSED (the put may take its entry back to the claim's `pendingSince`: the sweep never
   * enqueues a processed row, wherever its entry is). So the
   * caller sends it only while every lease in it has a margin left, and aborts it (then completes
   * the rows one by one, conditionally) when it is still unanswered at the margin.
   */
  async completeLeased(completions: readonly Completion[], now: number, signal?: AbortSignal): Promise<string[]> {
    const unprocessed: string[] = [];
    for (let start = 0; start < completions.length; start += BATCH_WRITE_LIMIT) {
      const chunk = completions.slice(start, start + BATCH_WRITE_LIMIT);
      const out = await this.client.send(
        new BatchWriteItemCommand({
          RequestItems: { [this.tableName]: chunk.map(({ row, outcome }) => ({ PutRequest: { Item: completedItem(row.item, outcome, now) } })) },
        }),
        { abortSignal: signal },
      );
      for (const request of out.UnprocessedItems?.[this.tableName] ?? []) unprocessed.push(request.PutRequest!.Item![A.PK].S!);
    }
    return unprocessed;
  }

  async release(key: string, owner: string, error: string, dead: boolean, now: number): Promise<void> {
    await this.releaseAs(key, owner, error, dead ? 'dead' : 'live', now);
  }

  async giveBack(key: string, owner: string, error: string, now: number): Promise<void> {
    await this.releaseAs(key, owner, error, 'given_back', now);
  }

  /**
   * A release by the lease holder. A dead row leaves the pending index (rare, so the index write
   * costs little, and the sweep and the status count need not read it): the DLQ and its alarm own
   * it from here. A live row's entry moves to now, past the sweep's watermark; a row given back
   * also gets the claim's attempt back (only a row that has one).
   */
  private async releaseAs(key: string, owner: string, error: string, mode: 'dead' | 'live' | 'given_back', now: number): Promise<void> {
    const dead = mode === 'dead';
    const givenBack = mode === 'given_back';
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          UpdateExpression: dead
            ? 'SET #status = :status, #lastError = :error REMOVE #owner, #until, #shard, #since'
            : `SET #status = :status, #lastError = :error, #since = :now REMOVE #owner, #until${givenBack ? ' ADD #attempts :minusOne' : ''}`,
          ConditionExpression: givenBack ? '#owner = :owner AND #attempts > :zero' : '#owner = :owner',
          ExpressionAttributeNames: {
            '#status': A.STATUS,
            '#lastError': A.LAST_ERROR,
            '#owner': A.LEASE_OWNER,
            '#until': A.LEASE_UNTIL,
            '#since': A.PENDING_SINCE,
            ...(dead ? { '#shard': A.PENDING_SHARD } : {}),
            ...(givenBack ? { '#attempts': A.ATTEMPTS } : {}),
          },
          ExpressionAttributeValues: {
            ':status': S(dead ? DeliveryStatus.DEAD : DeliveryStatus.RECEIVED),
            ':error': S(error.slice(0, 1000)),
            ':owner': S(owner),
            ...(dead ? {} : { ':now': N(now) }),
            ...(givenBack ? { ':minusOne': N(-1), ':zero': N(0) } : {}),
          },
        }),
      );
    } catch (err) {
      // Another worker took the lease after ours expired; its outcome stands.
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  async revive(key: string, seen: DeliveryStatus, now: number): Promise<boolean> {
    return reviveFenced(this, key, seen, now);
  }

  async reviveRow(key: string, seen: DeliveryStatus, since: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          UpdateExpression: 'SET #status = :received, #attempts = :zero, #shard = :shard, #since = :since REMOVE #owner, #until',
          ConditionExpression: '#status = :seen',
          ExpressionAttributeNames: {
            '#status': A.STATUS,
            '#attempts': A.ATTEMPTS,
            '#shard': A.PENDING_SHARD,
            '#since': A.PENDING_SINCE,
            '#owner': A.LEASE_OWNER,
            '#until': A.LEASE_UNTIL,
          },
          ExpressionAttributeValues: {
            ':received': S(DeliveryStatus.RECEIVED),
            ':zero': N(0),
            ':seen': S(seen),
            ':shard': S(shardOf(key, this.pendingShards)),
            ':since': N(since),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async findStranded(cutoff: number, bound: ReadBound): Promise<StrandedRows> {
    return examinePending(this, cutoff, bound);
  }

  async pendingEntries(from: number, before: number, bound: ReadBound, shards: number): Promise<RangeRead> {
    return readShardedRange(this.client, pendingIndexOf(this.tableName, shards), from, before, bound);
  }

  /** Rows' states in one BatchGetItem, eventually consistent (`examinePending` says why that is safe). */
  async pendingStates(keys: readonly string[]): Promise<Map<string, ReadState>> {
    const out = await this.client.send(
      new BatchGetItemCommand({
        RequestItems: {
          [this.tableName]: {
            Keys: keys.map((key) => itemKey(key)),
            ProjectionExpression: '#pk, #status, #since',
            ExpressionAttributeNames: { '#pk': A.PK, '#status': A.STATUS, '#since': A.PENDING_SINCE },
          },
        },
      }),
    );
    const states = new Map<string, ReadState>(keys.map((key) => [key, undefined]));
    for (const item of out.Responses?.[this.tableName] ?? []) states.set(item[A.PK].S!, pendingStateOf(item));
    for (const key of out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) states.set(key[A.PK].S!, UNREAD);
    return states;
  }

  async touchPending(key: string, now: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          UpdateExpression: 'SET #since = :now',
          // A row processed meanwhile keeps its entry where it is: moving it would be an index write for nothing.
          ConditionExpression: '#status IN (:received, :processing)',
          ExpressionAttributeNames: { '#since': A.PENDING_SINCE, '#status': A.STATUS },
          ExpressionAttributeValues: { ':now': N(now), ':received': S(DeliveryStatus.RECEIVED), ':processing': S(DeliveryStatus.PROCESSING) },
        }),
      );
    } catch (error) {
      // PROCESSED or DEAD meanwhile: nothing to restart.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}

/**
 * The body item of a row that keeps its body apart (`bodyItem`), read strongly consistent: it was
 * written before the row. A missing one is an error (the row is then retried and, after its
 * attempts, dead), never an empty body.
 */
export async function readBodyItem(client: DynamoDBClient, tableName: string, row: Record<string, AttributeValue>): Promise<Record<string, AttributeValue>> {
  const out = await client.send(new GetItemCommand({ TableName: tableName, Key: bodyItemKey(row[A.PK].S!, rowDigestOf(row)), ConsistentRead: true }));
  if (!out.Item) throw new Error('the row keeps its body in an item of its own, and that item is missing');
  return out.Item;
}

/** BatchWriteItem's limit of requests per call. */
const BATCH_WRITE_LIMIT = 25;

/** A row a worker may take: waiting (RECEIVED), or PROCESSING by a worker whose lease ran out. Never PROCESSED or DEAD. */
const CLAIMABLE = '(#status = :received OR #status = :processing) AND (attribute_not_exists(#until) OR #until < :now)';
