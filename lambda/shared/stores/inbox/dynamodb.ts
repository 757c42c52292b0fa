import {
  AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  InboxAttr as A,
  DeliveryStatus,
  InboxItemKind,
  PendingIndex,
  PROVIDER_NAME_PATTERN,
  SUBMISSION_PARTITION_PREFIX,
  SweepWatermark,
} from '../../../../lib/contract';
import { shardOf } from '../../runtime/digest';
import { N, pendingIndexOf, ReadBound, readShardedRange, replaceForms, S, ShardedEntry, stringMap } from '../dynamo';
import { isConditionalCheckFailed } from '../../runtime/errors';
import { inlineBodyAttributes, inlineBodyOf } from '../inline-body';

/** The inbox key of one event: the provider namespaces the provider's stable id. */
export function deliveryKey(provider: string, eventId: string): string {
  return `${provider}#${eventId}`;
}

/**
 * Whether a partition key is a delivery row's: `<provider>#<event id>`, its provider a provider
 * name. A submission's (`ledger:…`), a rejection record's (`rejected:…`) and the sweep's
 * watermark (`sweep:…`) are not: no provider name holds a `:`. The sweep, the processor, the
 * ledger and the ops CLI take nothing else for a delivery (docs/DESIGN.md#invariant-4).
 */
export function isDeliveryKey(key: string): boolean {
  const at = key.indexOf('#');
  return at > 0 && at < key.length - 1 && PROVIDER_NAME_PATTERN.test(key.slice(0, at));
}

/**
 * The provider and the rest of an inbox partition key: `<provider>#<rest>` (provider names carry
 * no `#`), after the submission prefix when there is one.
 */
export function splitKey(key: string): { provider: string; rest: string } {
  const bare = key.startsWith(SUBMISSION_PARTITION_PREFIX) ? key.slice(SUBMISSION_PARTITION_PREFIX.length) : key;
  const at = bare.indexOf('#');
  return { provider: bare.slice(0, at), rest: bare.slice(at + 1) };
}

/**
 * Where a row's body is: inline (`body`) or, when too large for an item, in the body store
 * (`bodyRef`). Exactly one is set.
 */
export interface BodyLocation {
  readonly body?: Buffer;
  readonly bodyRef?: string;
}

/** A verified delivery about to be admitted. */
export interface NewDelivery extends BodyLocation {
  readonly provider: string;
  readonly eventId: string;
  /** SHA-256 of the exact bytes received, in lower-case hex. */
  readonly digest: string;
  readonly receivedAt: number;
  readonly meta: Record<string, string>;
  readonly expiresAt: number;
  /** The provider's job reference (Answerline: `task.idempotencyKey`); kept as `<provider>#<jobRef>` in the job-ref index. */
  readonly jobRef?: string;
  /** Fetched by polling the provider (the reconciler), not delivered. */
  readonly recovered?: boolean;
  /** When the provider signed the delivery (epoch ms), when its scheme signs a time. */
  readonly eventAt?: number;
}

/** What a conflicting insert finds: the stored row's digest and whether polling fed it. */
export interface OriginalRow {
  readonly digest: string;
  readonly recovered: boolean;
}

/** The job-ref index key of a provider's job reference. */
export function jobRefKey(provider: string, jobRef: string): string {
  return `${provider}#${jobRef}`;
}

/** A delivery row as stored. */
export interface StoredDelivery extends BodyLocation {
  readonly key: string;
  readonly provider: string;
  readonly eventId: string;
  readonly digest: string;
  readonly receivedAt: number;
  readonly meta: Record<string, string>;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly expiresAt: number;
  readonly lastError?: string;
  /** Fetched by polling the provider (the reconciler), not delivered. */
  readonly recovered: boolean;
  /** When the provider signed the delivery (epoch ms); absent for a scheme that signs no time, a polled result, and rows written before it was kept. */
  readonly eventAt?: number;
  /** When the row was last processed (epoch ms): set on a row an operator's replay brought back. */
  readonly processedAt?: number;
}

/** A row a claim took: as read, and the item the claim left (what a batched completion writes back). */
export interface ClaimedDelivery extends StoredDelivery {
  readonly item: Record<string, AttributeValue>;
}

/** A claimed row to mark processed, with the outcome it was decided with. */
export interface Completion {
  readonly row: ClaimedDelivery;
  readonly outcome: string;
}

/** An altered duplicate: the same key with another digest. */
export interface QuarantinedCopy extends BodyLocation {
  readonly provider: string;
  readonly digest: string;
  readonly meta: Record<string, string>;
  readonly receivedAt: number;
  readonly expiresAt: number;
}

/** What one look for stranded rows found. */
export interface StrandedRows {
  /**
   * The pending-index entries of rows neither PROCESSED nor DEAD, oldest first, at most the limit
   * asked: those below `examinedBefore`, and maybe some the read reached beyond it.
   */
  readonly stranded: ShardedEntry[];
  /**
   * Entries below `examinedBefore` whose key is not a delivery row's (`isDeliveryKey`): examined,
   * never read or enqueued, for the caller to count; absent when there are none.
   */
  readonly refused?: ShardedEntry[];
  /** The sweep's watermark the look started from. */
  readonly watermark: number;
  /**
   * The watermark item's revision the look started from (absent: none written yet): the watermark
   * moves only while it is unchanged, since an operator's revive changes it (see `revive`).
   */
  readonly revision?: number;
  /**
   * Every entry below this was examined and is in `stranded` or needs nothing: the watermark may
   * move here once each of `stranded` is handled (enqueued, its clock restarted). Entries at or
   * above it are read again by the next look.
   */
  readonly examinedBefore: number;
}

/**
 * Persistence of the inbox. Every method is one single-item conditional request, safe to
 * repeat after a crash; nothing depends on transactions or streams.
 */
export interface InboxStore {
  /** Writes a new row; false when a row with this key already exists (nothing is changed). */
  insert(delivery: NewDelivery): Promise<boolean>;
  /** The digest of an existing row and whether it was recovered by polling, read without its body. */
  originalOf(key: string): Promise<OriginalRow | undefined>;
  /** Keeps an altered copy beside the original, counting repeats. */
  quarantine(key: string, copy: QuarantinedCopy): Promise<void>;
  /**
   * Takes the lease on a row still to process (RECEIVED, or PROCESSING with its lease expired)
   * that has had fewer than `maxAttempts` attempts; undefined when it is settled (PROCESSED,
   * DEAD), leased, out of attempts or absent. A DEAD row is never claimed: only an operator
   * revives it.
   */
  claim(key: string, owner: string, now: number, leaseMs: number, maxAttempts: number): Promise<ClaimedDelivery | undefined>;
  /** Reads a row's state without its body. */
  status(key: string): Promise<RowState | undefined>;
  /**
   * Marks DEAD a row whose `maxAttempts` attempts all ended without a release (their invocations
   * died: a timeout, out of memory, a kill); false when it changed meanwhile.
   */
  markExhausted(key: string, error: string, now: number, maxAttempts: number): Promise<boolean>;
  /** Marks a claimed row processed (it keeps its pending-index entry); false when the lease was lost meanwhile. */
  complete(key: string, owner: string, outcome: string, now: number): Promise<boolean>;
  /**
   * Marks claimed rows processed in one BatchWriteItem per 25, each written back whole as its
   * claim left it, PROCESSED, without its lease: what `complete` writes.
   * Only for rows whose lease the caller holds with time to spare (see `completeLeased` below);
   * returns the keys DynamoDB left unprocessed, for `complete`.
   */
  completeLeased(completions: readonly Completion[], now: number, signal?: AbortSignal): Promise<string[]>;
  /**
   * Gives a claimed row back after a failure, recording the error. A live row's pending clock
   * restarts, so the sweep leaves it to the queue's own retries; a dead row leaves the index.
   */
  release(key: string, owner: string, error: string, dead: boolean, now: number): Promise<void>;
  /**
   * Rows pending since before `cutoff` that are neither PROCESSED nor DEAD, among the pending-index
   * entries from the sweep's watermark up (`sweepWatermark`), oldest first, at most `limit`,
   * reading at most `bound` of the index.
   */
  findStranded(cutoff: number, limit: number, bound: ReadBound): Promise<StrandedRows>;
  /** Restarts a pending row's clock after it was enqueued again; nothing for a row PROCESSED or DEAD meanwhile. */
  touchPending(key: string, now: number): Promise<void>;
  /** The sweep's watermark: every pending-index entry below it was examined; 0 when none was saved yet. */
  sweepWatermark(): Promise<number>;
  /**
   * Moves the sweep's watermark up to `to`, if the item is still at the `revision` the look read;
   * false when it already is there or beyond (only forward, so concurrent runs are safe), or when an
   * operator revived a row since (the next run reads the index again).
   */
  advanceSweepWatermark(to: number, revision?: number): Promise<boolean>;
}

/** A row's state, read without its body. */
export interface RowState {
  readonly status: DeliveryStatus;
  readonly leaseUntil?: number;
  readonly attempts: number;
}

export class DynamoDbInboxStore implements InboxStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  private itemKey(key: string, sk: string = InboxItemKind.DELIVERY): Record<string, AttributeValue> {
    return { [A.PK]: S(key), [A.SK]: S(sk) };
  }

  async insert(delivery: NewDelivery): Promise<boolean> {
    if (!SHA256_HEX.test(delivery.digest)) throw new Error(`digest must be a SHA-256 in lower-case hex, not ${JSON.stringify(delivery.digest.slice(0, 80))}`);
    const key = deliveryKey(delivery.provider, delivery.eventId);
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            // The provider and event id are the key's (`splitKey`), and the digest is kept as its 32
            // bytes: a claimed 1 KiB row stays within one write unit (docs/DESIGN.md#item-layout).
            ...this.itemKey(key),
            ...bodyAttributes(delivery),
            [A.DIGEST]: { B: Buffer.from(delivery.digest, 'hex') },
            [A.RECEIVED_AT]: N(delivery.receivedAt),
            [A.META]: stringMap(delivery.meta),
            [A.STATUS]: S(DeliveryStatus.RECEIVED),
            [A.ATTEMPTS]: N(0),
            [A.EXPIRES_AT]: N(delivery.expiresAt),
            [A.PENDING_SHARD]: S(shardOf(key, PendingIndex.SHARD_COUNT)),
            [A.PENDING_SINCE]: N(delivery.receivedAt),
            ...(delivery.jobRef ? { [A.JOB_REF]: S(jobRefKey(delivery.provider, delivery.jobRef)) } : {}),
            ...(delivery.recovered ? { [A.RECOVERED]: { BOOL: true } } : {}),
            ...(delivery.eventAt !== undefined ? { [A.EVENT_AT]: N(delivery.eventAt) } : {}),
          },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': A.PK },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async originalOf(key: string): Promise<OriginalRow | undefined> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: this.itemKey(key),
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
        Key: this.itemKey(key, `${InboxItemKind.QUARANTINE_PREFIX}${copy.digest}`),
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
          Key: this.itemKey(key),
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
      return { ...toStoredDelivery(out.Attributes!), item: out.Attributes! };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  async status(key: string): Promise<RowState | undefined> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: this.itemKey(key),
        ConsistentRead: true,
        ProjectionExpression: '#status, #until, #attempts',
        ExpressionAttributeNames: { '#status': A.STATUS, '#until': A.LEASE_UNTIL, '#attempts': A.ATTEMPTS },
      }),
    );
    if (!out.Item) return undefined;
    const leaseUntil = out.Item[A.LEASE_UNTIL]?.N;
    return {
      status: out.Item[A.STATUS].S as DeliveryStatus,
      attempts: Number(out.Item[A.ATTEMPTS]?.N ?? 0),
      ...(leaseUntil ? { leaseUntil: Number(leaseUntil) } : {}),
    };
  }

  async markExhausted(key: string, error: string, now: number, maxAttempts: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(key),
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
          Key: this.itemKey(key),
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
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(key),
          // A dead row leaves the pending index (rare, so the index write costs little, and the sweep and
          // the status count need not read it): the DLQ and its alarm own it from here. A live row's
          // entry moves to now, past the sweep's watermark.
          UpdateExpression: dead
            ? 'SET #status = :status, #lastError = :error REMOVE #owner, #until, #shard, #since'
            : 'SET #status = :status, #lastError = :error, #since = :now REMOVE #owner, #until',
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: {
            '#status': A.STATUS,
            '#lastError': A.LAST_ERROR,
            '#owner': A.LEASE_OWNER,
            '#until': A.LEASE_UNTIL,
            '#since': A.PENDING_SINCE,
            ...(dead ? { '#shard': A.PENDING_SHARD } : {}),
          },
          ExpressionAttributeValues: {
            ':status': S(dead ? DeliveryStatus.DEAD : DeliveryStatus.RECEIVED),
            ':error': S(error.slice(0, 1000)),
            ':owner': S(owner),
            ...(dead ? {} : { ':now': N(now) }),
          },
        }),
      );
    } catch (err) {
      // Another worker took the lease after ours expired; its outcome stands.
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  /**
   * An operator's replay or redrive: puts a PROCESSED or DEAD row back to RECEIVED, with a fresh
   * budget of attempts and a pending-index entry the sweep is sure to read, in one conditional
   * UpdateItem on the status seen (a concurrent change wins). The row keeps its body, digest,
   * outcome and processedAt; processing it again offers the same result under the same job and
   * effect keys. False when the row changed meanwhile.
   *
   * The operator's clock cannot place the entry: one that is behind would put it below the
   * watermark, where no sweep reads. So the entry is written at `now`, then the watermark item's
   * revision is bumped, which returns the watermark. A sweep that read the item before the bump
   * can no longer move the watermark (`advanceSweepWatermark`); one that reads it after reads the
   * index after the entry was written. The entry is therefore seen unless the watermark was
   * already past it (a clock behind, or a sweep between the write and the bump): then its clock
   * restarts at the watermark and the fence is taken again. The store's order decides, no clock.
   */
  async revive(key: string, seen: DeliveryStatus, now: number): Promise<boolean> {
    if (!(await this.reviveRow(key, seen, now))) return false;
    for (let fences = 1, since = now; ; fences++) {
      const watermark = await this.fenceSweep();
      if (watermark <= since) return true;
      if (fences === REVIVE_FENCES) {
        throw new Error(`${key} is RECEIVED again, but the sweep's watermark passed its pending-index entry ${fences} times in a row: replay it again`);
      }
      since = watermark;
      await this.touchPending(key, since);
    }
  }

  /** The revive's conditional write: RECEIVED, a fresh budget, no lease, in the pending index at `since`. */
  private async reviveRow(key: string, seen: DeliveryStatus, since: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(key),
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
            ':shard': S(shardOf(key, PendingIndex.SHARD_COUNT)),
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

  /**
   * The entries from the watermark to `cutoff` (`readShardedRange`), then each row's status and
   * `pendingSince` in BatchGetItem calls of 100 (eventually consistent: a stale status can only
   * enqueue a row once more, which its claim makes harmless), in order, until `limit` rows are
   * found. A row is stranded when it is neither PROCESSED nor DEAD and its clock was not restarted
   * since the entry was read (a later `pendingSince` has its own, newer entry). A key DynamoDB
   * left unprocessed ends the examination there.
   */
  async findStranded(cutoff: number, limit: number, bound: ReadBound): Promise<StrandedRows> {
    const { watermark, revision } = await this.sweepMark();
    const fence = revision !== undefined ? { revision } : {};
    const read = await readShardedRange(this.client, pendingIndexOf(this.tableName), watermark, cutoff, bound);
    // Only a delivery row's entry is read and may be enqueued; any other is refused, never processed.
    const entries = read.entries.filter((entry) => isDeliveryKey(entry.key));
    const refusedBefore = (before: number) => {
      const refused = read.entries.filter((entry) => entry.sort < before && !isDeliveryKey(entry.key));
      return refused.length > 0 ? { refused } : {};
    };
    const stranded: ShardedEntry[] = [];
    for (let start = 0; start < entries.length; start += BATCH_GET_LIMIT) {
      const chunk = entries.slice(start, start + BATCH_GET_LIMIT);
      const states = await this.pendingStates(chunk.map((entry) => entry.key));
      for (const entry of chunk) {
        const state = states.get(entry.key);
        const owed = state !== UNREAD && isStranded(state, entry);
        if (state === UNREAD || (owed && stranded.length === limit)) {
          const examinedBefore = Math.min(entry.sort, read.readBefore);
          return { stranded, ...refusedBefore(examinedBefore), watermark, ...fence, examinedBefore };
        }
        if (owed) stranded.push(entry);
      }
    }
    return { stranded, ...refusedBefore(read.readBefore), watermark, ...fence, examinedBefore: read.readBefore };
  }

  /** The status and `pendingSince` of each row (undefined: gone), or `UNREAD` for those DynamoDB left unprocessed. */
  private async pendingStates(keys: readonly string[]): Promise<Map<string, PendingState | undefined | typeof UNREAD>> {
    const out = await this.client.send(
      new BatchGetItemCommand({
        RequestItems: {
          [this.tableName]: {
            Keys: keys.map((key) => this.itemKey(key)),
            ProjectionExpression: '#pk, #status, #since',
            ExpressionAttributeNames: { '#pk': A.PK, '#status': A.STATUS, '#since': A.PENDING_SINCE },
          },
        },
      }),
    );
    const states = new Map<string, PendingState | undefined | typeof UNREAD>(keys.map((key) => [key, undefined]));
    for (const item of out.Responses?.[this.tableName] ?? []) {
      const since = item[A.PENDING_SINCE]?.N;
      states.set(item[A.PK].S!, { status: item[A.STATUS]?.S as DeliveryStatus, ...(since !== undefined ? { pendingSince: Number(since) } : {}) });
    }
    for (const key of out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) states.set(key[A.PK].S!, UNREAD);
    return states;
  }

  async sweepWatermark(): Promise<number> {
    return (await this.sweepMark()).watermark;
  }

  /** The watermark and the item's revision (absent until a revive fenced it), read together. */
  private async sweepMark(): Promise<{ watermark: number; revision?: number }> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: this.itemKey(SweepWatermark.PARTITION, SweepWatermark.SORT),
        ConsistentRead: true,
        ProjectionExpression: '#before, #revision',
        ExpressionAttributeNames: { '#before': A.SWEPT_BEFORE, '#revision': A.SWEEP_REVISION },
      }),
    );
    const revision = out.Item?.[A.SWEEP_REVISION]?.N;
    return { watermark: Number(out.Item?.[A.SWEPT_BEFORE]?.N ?? 0), ...(revision !== undefined ? { revision: Number(revision) } : {}) };
  }

  /** Bumps the watermark item's revision, so that no sweep that read it before moves the watermark; returns the watermark. */
  private async fenceSweep(): Promise<number> {
    const out = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: this.itemKey(SweepWatermark.PARTITION, SweepWatermark.SORT),
        UpdateExpression: 'ADD #revision :one',
        ExpressionAttributeNames: { '#revision': A.SWEEP_REVISION },
        ExpressionAttributeValues: { ':one': N(1) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Number(out.Attributes?.[A.SWEPT_BEFORE]?.N ?? 0);
  }

  async advanceSweepWatermark(to: number, revision?: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(SweepWatermark.PARTITION, SweepWatermark.SORT),
          UpdateExpression: 'SET #before = :to',
          ConditionExpression: `(attribute_not_exists(#before) OR #before < :to) AND ${revision === undefined ? 'attribute_not_exists(#revision)' : '#revision = :revision'}`,
          ExpressionAttributeNames: { '#before': A.SWEPT_BEFORE, '#revision': A.SWEEP_REVISION },
          ExpressionAttributeValues: { ':to': N(to), ...(revision !== undefined ? { ':revision': N(revision) } : {}) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async touchPending(key: string, now: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(key),
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

/** A SHA-256 digest in hex, as rows' digests are given (kept as their 32 bytes). */
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** BatchWriteItem's limit of requests per call. */
const BATCH_WRITE_LIMIT = 25;

/** BatchGetItem's limit of keys per call. */
const BATCH_GET_LIMIT = 100;

/**
 * How many times a revive fences the sweep before it gives up: each retry needs a sweep to move
 * the watermark in the moment between the revive's write and its fence (sweeps run minutes apart).
 */
const REVIVE_FENCES = 5;

/** A row's state as the sweep reads it. */
interface PendingState {
  readonly status: DeliveryStatus;
  readonly pendingSince?: number;
}

/** A key a BatchGetItem left unprocessed: not examined. */
const UNREAD = Symbol('unread');

/**
 * A row the sweep must enqueue: present, neither PROCESSED nor DEAD, and its clock not restarted
 * since `entry` was read (a `pendingSince` at or before the entry's: an eventually consistent read
 * may show an older one, and enqueueing once more is harmless).
 */
function isStranded(state: PendingState | undefined, entry: ShardedEntry): boolean {
  if (state === undefined || state.status === DeliveryStatus.PROCESSED || state.status === DeliveryStatus.DEAD) return false;
  return state.pendingSince === undefined || state.pendingSince <= entry.sort;
}

/** What completion removes from a claimed row: its lease and a previous attempt's error. */
const REMOVED_AT_COMPLETION: ReadonlySet<string> = new Set([A.LEASE_OWNER, A.LEASE_UNTIL, A.LAST_ERROR]);

/** A claimed row as `complete` leaves it: PROCESSED with its outcome, its pending-index entry kept, no lease, no error. */
function completedItem(claimed: Record<string, AttributeValue>, outcome: string, now: number): Record<string, AttributeValue> {
  return {
    ...Object.fromEntries(Object.entries(claimed).filter(([name]) => !REMOVED_AT_COMPLETION.has(name))),
    [A.STATUS]: S(DeliveryStatus.PROCESSED),
    [A.PROCESSED_AT]: N(now),
    [A.OUTCOME]: S(outcome),
  };
}

/** A row a worker may take: waiting (RECEIVED), or PROCESSING by a worker whose lease ran out. Never PROCESSED or DEAD. */
const CLAIMABLE = '(#status = :received OR #status = :processing) AND (attribute_not_exists(#until) OR #until < :now)';

/** Every attribute that holds (or says the encoding of) a body, in any form an item was written in. */
const BODY_ATTRIBUTES: readonly string[] = [A.BODY, A.BODY_DEFLATED, A.BODY_ENCODING, A.BODY_REF];

/** The row attributes that hold a body: the bytes (deflated when smaller), or the body store's reference to them. */
function bodyAttributes(location: BodyLocation): Record<string, AttributeValue> {
  return location.bodyRef !== undefined ? { [A.BODY_REF]: S(location.bodyRef) } : inlineBodyAttributes(location.body ?? Buffer.alloc(0));
}

/**
 * A delivery row's digest as hex: its 32 bytes (B), or the hex text (S) rows written before the
 * compact row format hold.
 */
export function rowDigestOf(item: Record<string, AttributeValue>): string {
  const digest = item[A.DIGEST];
  return digest?.B !== undefined ? Buffer.from(digest.B).toString('hex') : (digest?.S ?? '');
}

function toStoredDelivery(item: Record<string, AttributeValue>): StoredDelivery {
  const key = item[A.PK].S!;
  const { provider, rest: eventId } = splitKey(key);
  return {
    key,
    provider,
    eventId,
    ...(item[A.BODY_REF]?.S ? { bodyRef: item[A.BODY_REF].S } : { body: inlineBodyOf(item) }),
    digest: rowDigestOf(item),
    receivedAt: Number(item[A.RECEIVED_AT].N),
    meta: Object.fromEntries(Object.entries(item[A.META]?.M ?? {}).map(([name, value]) => [name, value.S ?? ''])),
    status: item[A.STATUS].S as DeliveryStatus,
    attempts: Number(item[A.ATTEMPTS]?.N ?? 0),
    expiresAt: Number(item[A.EXPIRES_AT].N),
    ...(item[A.LAST_ERROR]?.S ? { lastError: item[A.LAST_ERROR].S } : {}),
    recovered: item[A.RECOVERED]?.BOOL === true,
    // Rows written before the signed time was kept have none: their record names no delay from the event.
    ...(item[A.EVENT_AT]?.N !== undefined ? { eventAt: Number(item[A.EVENT_AT].N) } : {}),
    ...(item[A.PROCESSED_AT]?.N !== undefined ? { processedAt: Number(item[A.PROCESSED_AT].N) } : {}),
  };
}
