import { randomBytes } from 'node:crypto';
import { AttributeValue, DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { InboxAttr as A, RejectionKey } from '../../../lib/contract';
import { isConditionalCheckFailed } from '../runtime/errors';
import { N, putIfAbsent, queryPages, S } from './dynamo';

/**
 * A request refused at the authenticity check, as kept for an operator: what was refused and
 * why, never what it carried (no body, no header value, no secret, no plain address).
 */
export interface RejectionRecord {
  readonly provider: string;
  /** The reason code it was answered with (`bad_signature`, `stale_timestamp`, `malformed`, `source_not_allowed`, ...). */
  readonly reason: string;
  readonly httpStatus: number;
  /** Epoch milliseconds. */
  readonly receivedAt: number;
  /** API Gateway's request id, or another id unique to the request. */
  readonly requestId: string;
  /** `hmac-sha256:<hex>` of the source address under the inbox's source-hash key; absent when the key could not be read. */
  readonly sourceHash?: string;
  readonly headerNames: readonly string[];
  readonly headerNamesTruncated: boolean;
  readonly bodyBytes: number;
  /** SHA-256 hex of the body. */
  readonly digest: string;
  /** Epoch seconds (the table's TTL attribute). */
  readonly expiresAt: number;
}

/** Per-call options: the verifier bounds each call by its budget. */
export interface CallOptions {
  readonly abortSignal?: AbortSignal;
}

/** Where rejection records, their per-minute counters and the source-hash key live. */
export interface RejectionStore {
  /**
   * Takes one of the `limit` record slots of `provider`'s minute starting at `minuteStart` (epoch
   * ms), the same counter for every verifier instance; false when all are taken.
   */
  takeSlot(provider: string, minuteStart: number, limit: number, expiresAt: number, options?: CallOptions): Promise<boolean>;
  put(record: RejectionRecord, options?: CallOptions): Promise<void>;
  /** The inbox's source-hash key: read, or created once (the first writer's key wins). */
  sourceHashKey(options?: CallOptions): Promise<Buffer>;
  /**
   * `provider`'s records received from `since` to `until` (epoch ms) and not expired at `until`,
   * oldest first, at most `limit`. DynamoDB deletes expired items up to a few days late (and a
   * local emulator never does), so expiry is also checked on read.
   */
  list(provider: string, since: number, until: number, limit: number): Promise<RejectionRecord[]>;
}

const DAY_MS = 86_400_000;

/** The day partition of a provider's records: `rejected:<provider>#<YYYY-MM-DD>` (UTC). */
export function rejectionPartition(provider: string, at: number): string {
  return `${RejectionKey.PARTITION_PREFIX}${provider}#${new Date(at).toISOString().slice(0, 10)}`;
}

/** The sort key of a record: its ISO time first, so a day's records read back in order. */
function recordSortKey(receivedAt: number, requestId: string): string {
  return `${RejectionKey.RECORD_PREFIX}${new Date(receivedAt).toISOString()}#${requestId}`;
}

/** The sort key of a minute's counter: `count#<YYYY-MM-DDTHH:MM>`. */
function counterSortKey(minuteStart: number): string {
  return `${RejectionKey.COUNTER_PREFIX}${new Date(minuteStart).toISOString().slice(0, 16)}`;
}

export class DynamoDbRejectionStore implements RejectionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async takeSlot(provider: string, minuteStart: number, limit: number, expiresAt: number, options: CallOptions = {}): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [A.PK]: S(rejectionPartition(provider, minuteStart)), [A.SK]: S(counterSortKey(minuteStart)) },
          UpdateExpression: 'ADD #count :one SET #expiresAt = :expiresAt',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': A.COUNT, '#expiresAt': A.EXPIRES_AT },
          ExpressionAttributeValues: { ':one': N(1), ':limit': N(limit), ':expiresAt': N(expiresAt) },
        }),
        options,
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async put(record: RejectionRecord, options: CallOptions = {}): Promise<void> {
    const item: Record<string, AttributeValue> = {
      [A.PK]: S(rejectionPartition(record.provider, record.receivedAt)),
      [A.SK]: S(recordSortKey(record.receivedAt, record.requestId)),
      [A.PROVIDER]: S(record.provider),
      [A.REASON]: S(record.reason),
      [A.HTTP_STATUS]: N(record.httpStatus),
      [A.RECEIVED_AT]: N(record.receivedAt),
      [A.HEADER_NAMES]: { L: record.headerNames.map(S) },
      [A.HEADER_NAMES_TRUNCATED]: { BOOL: record.headerNamesTruncated },
      [A.BODY_BYTES]: N(record.bodyBytes),
      [A.DIGEST]: S(record.digest),
      [A.EXPIRES_AT]: N(record.expiresAt),
      ...(record.sourceHash ? { [A.SOURCE_HASH]: S(record.sourceHash) } : {}),
    };
    // A repeated request id (a direct re-invocation) keeps the first record.
    await putIfAbsent(this.client, this.tableName, item, options);
  }

  async sourceHashKey(options: CallOptions = {}): Promise<Buffer> {
    const key = { [A.PK]: S(RejectionKey.PARTITION_PREFIX), [A.SK]: S(RejectionKey.HASH_KEY_SORT) };
    const read = async () =>
      (await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }), options)).Item?.[A.HASH_KEY]?.B;
    const existing = await read();
    if (existing) return Buffer.from(existing);
    const created = randomBytes(32);
    if (await putIfAbsent(this.client, this.tableName, { ...key, [A.HASH_KEY]: { B: created } }, options)) return created;
    // Another instance created it first: use that one.
    const winner = await read();
    if (!winner) throw new Error('the source-hash key vanished');
    return Buffer.from(winner);
  }

  async list(provider: string, since: number, until: number, limit: number): Promise<RejectionRecord[]> {
    const records: RejectionRecord[] = [];
    // One bounded Query per day partition from `since` to `until`, never a Scan.
    for (let day = Math.floor(since / DAY_MS) * DAY_MS; day <= until && records.length < limit; day += DAY_MS) {
      await queryPages(
        this.client,
        {
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          FilterExpression: '#expiresAt > :until',
          ExpressionAttributeNames: { '#pk': A.PK, '#sk': A.SK, '#expiresAt': A.EXPIRES_AT },
          ExpressionAttributeValues: {
            ':until': N(Math.floor(until / 1000)),
            ':pk': S(rejectionPartition(provider, day)),
            ':from': S(recordSortKey(Math.max(since, day), '')),
            // `~` sorts after every request id character.
            ':to': S(recordSortKey(Math.min(until, day + DAY_MS - 1), '~')),
          },
          Limit: limit,
        },
        (items) => {
          for (const item of items) records.push(recordOf(item));
          return records.length < limit;
        },
      );
    }
    return records.slice(0, limit);
  }
}

function recordOf(item: Record<string, AttributeValue>): RejectionRecord {
  const sortKey = item[A.SK].S!;
  return {
    provider: item[A.PROVIDER]?.S ?? '',
    reason: item[A.REASON]?.S ?? '',
    httpStatus: Number(item[A.HTTP_STATUS]?.N ?? 0),
    receivedAt: Number(item[A.RECEIVED_AT]?.N ?? 0),
    requestId: sortKey.slice(sortKey.indexOf('#', RejectionKey.RECORD_PREFIX.length) + 1),
    ...(item[A.SOURCE_HASH]?.S ? { sourceHash: item[A.SOURCE_HASH].S } : {}),
    headerNames: (item[A.HEADER_NAMES]?.L ?? []).map((name) => name.S ?? ''),
    headerNamesTruncated: item[A.HEADER_NAMES_TRUNCATED]?.BOOL ?? false,
    bodyBytes: Number(item[A.BODY_BYTES]?.N ?? 0),
    digest: item[A.DIGEST]?.S ?? '',
    expiresAt: Number(item[A.EXPIRES_AT]?.N ?? 0),
  };
}
