import { AttributeValue, DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { Defaults, ResultAttr as R } from '../../../lib/contract';
import { JobObservation } from '../providers/adapter';
import { N, replaceForms, S } from './dynamo';
import { sha256Hex } from '../runtime/digest';
import { isConditionalCheckFailed } from '../runtime/errors';
import { winnerOrder } from '../winner-order';
import { DEFLATE_RAW, deflatedIfSmaller } from './inline-body';

/** One job's candidate result, from one processed delivery. */
export interface ResultOffer {
  readonly provider: string;
  readonly eventKey: string;
  readonly observation: JobObservation;
  /** Set when the response was too large for the item and lives in the body store. */
  readonly responseRef?: string;
  readonly now: number;
}

/**
 * How an offer ended:
 * - `won`: it beat the stored winner (or there was none) and is now the job's winner;
 * - `already_won`: the stored winner is this very delivery's result, offered by an earlier attempt
 *   that stopped before completing the row (a crash, a failed effect): the decision stands and its
 *   effect must be sent again, with the same key;
 * - `lost`: another delivery's result ranks at least as high.
 */
export type OfferOutcome = 'won' | 'already_won' | 'lost';

/** An offer's outcome; a winner's with the job's result version it holds. */
export type OfferResult = { readonly outcome: 'won' | 'already_won'; readonly version: number } | { readonly outcome: 'lost' };

/** The job's winner as stored. */
export interface StoredWinner {
  /** The inbox key of the delivery whose result won. */
  readonly eventKey: string;
  /** How many times the job's winner changed, this one included: 1 for the first winner. */
  readonly version: number;
}

/**
 * The per-job results: the winner of each logical job under the conflict rule. A job's item
 * expires `retentionSeconds` after its winner was last decided; an expired item is absent to
 * every read and every offer, whether DynamoDB's TTL has deleted it yet or not (it takes up to
 * about two days, and the local emulator never does).
 */
export interface ResultsStore {
  /** Stores the offer if it beats the current winner; says whether it is (now or already) the winner. */
  offer(offer: ResultOffer): Promise<OfferResult>;
  /** The job's winner now; undefined when it has none, or its result expired. */
  winnerOf(provider: string, jobKey: string): Promise<StoredWinner | undefined>;
}

/** How long results are kept, and the clock `winnerOf` judges expiry by (an offer judges by its own `now`). */
export interface ResultLifecycle {
  /** @default Defaults.RETENTION_DAYS */
  readonly retentionSeconds?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * Job keys longer than this (UTF-8 bytes) are hashed in the item's key: DynamoDB caps a
 * partition key at 2,048 bytes, and a job key comes from the provider's body (an idempotency
 * key of any length). The item keeps the job key itself in `jobKey`.
 */
export const MAX_PLAIN_JOB_KEY_BYTES = 1024;

/** The job's item in the results table: `<provider>#<jobKey>`, or `<provider>#sha256:<hex of the job key>` for a long one. */
export function resultKey(provider: string, jobKey: string): string {
  return Buffer.byteLength(jobKey, 'utf8') > MAX_PLAIN_JOB_KEY_BYTES ? `${provider}#sha256:${sha256Hex(jobKey)}` : `${provider}#${jobKey}`;
}

export class DynamoDbResultsStore implements ResultsStore {
  private readonly retentionSeconds: number;
  private readonly now: () => number;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    lifecycle: ResultLifecycle = {},
  ) {
    this.retentionSeconds = lifecycle.retentionSeconds ?? Defaults.RETENTION_DAYS * 86_400;
    this.now = lifecycle.now ?? Date.now;
  }

  async offer(offer: ResultOffer): Promise<OfferResult> {
    const { provider, eventKey, observation, now } = offer;
    // Each pass ends unless the item changed between its write and its read (a concurrent offer).
    for (;;) {
      const won = await this.decide(offer, 'over_live');
      if (won) return won;
      // Only on this path: is the winner that stopped us our own earlier offer? (DynamoDB could
      // return the item with the failure, but dynalite returns nothing, so read it.) The same
      // delivery always makes the same observation, so its event key alone identifies it.
      const stored = await this.read(provider, observation.jobKey);
      if (stored === undefined) continue;
      if (isLive(stored, now, this.retentionSeconds)) {
        return stored.eventKey === eventKey ? { outcome: 'already_won', version: stored.version } : { outcome: 'lost' };
      }
      // Expired: the job is decided anew, as one never seen (what it is once the TTL deletes the item).
      const anew = await this.decide(offer, 'over_expired');
      if (anew) return anew;
    }
  }

  async winnerOf(provider: string, jobKey: string): Promise<StoredWinner | undefined> {
    const stored = await this.read(provider, jobKey);
    return stored && isLive(stored, this.now(), this.retentionSeconds) ? { eventKey: stored.eventKey, version: stored.version } : undefined;
  }

  /**
   * One conditional write of the offer as the job's winner, with its expiry: over a live item it
   * ranks above (or none), adding a version; or over an expired item, starting again at version 1.
   * Undefined when the condition failed.
   */
  private async decide(
    { provider, eventKey, observation, responseRef, now }: ResultOffer,
    over: 'over_live' | 'over_expired',
  ): Promise<OfferResult | undefined> {
    // A new winner's result replaces the old one's in whichever form that one took.
    const response = replaceForms(responseAttributes(observation.response, responseRef), [R.RESPONSE, R.RESPONSE_ENCODING, R.RESPONSE_REF]);
    const version = over === 'over_live' ? { set: '', add: ' ADD #version :one' } : { set: ', #version = :one', add: '' };
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [R.PK]: S(resultKey(provider, observation.jobKey)) },
          UpdateExpression:
            'SET #provider = :provider, #jobKey = :jobKey, #taskId = :taskId, #eventKey = :eventKey, #status = :status, ' +
            `#createdAt = :createdAt, #order = :order, ${response.set}, #updatedAt = :now, #expiresAt = :expiresAt${version.set} ` +
            `REMOVE ${response.remove}${version.add}`,
          // Equal order means the same observation again (a retry): nothing changes.
          ConditionExpression:
            over === 'over_live' ? `attribute_not_exists(#order) OR (#order < :order AND ${LIVE})` : `attribute_exists(#order) AND NOT ${LIVE}`,
          ExpressionAttributeNames: {
            '#provider': R.PROVIDER,
            '#jobKey': R.JOB_KEY,
            '#taskId': R.TASK_ID,
            '#eventKey': R.EVENT_KEY,
            '#status': R.STATUS,
            '#createdAt': R.CREATED_AT,
            '#order': R.WINNER_ORDER,
            ...response.names,
            '#updatedAt': R.UPDATED_AT,
            '#expiresAt': R.EXPIRES_AT,
            '#version': R.VERSION,
          },
          ExpressionAttributeValues: {
            ':provider': S(provider),
            ':jobKey': S(observation.jobKey),
            ':taskId': S(observation.taskId),
            ':eventKey': S(eventKey),
            ':status': S(observation.status),
            ':createdAt': S(observation.createdAt),
            ':order': S(winnerOrder(observation)),
            ...response.values,
            ':now': N(now),
            ':expiresAt': N(Math.floor(now / 1000) + this.retentionSeconds),
            ':nowSeconds': N(Math.floor(now / 1000)),
            ':liveSince': N(now - this.retentionSeconds * 1000),
            ':one': N(1),
          },
          // The version this decision made: what orders the job's effects.
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return { outcome: 'won', version: Number(out.Attributes?.[R.VERSION]?.N) };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  /** The job's item as the rules need it, live or not; undefined when there is none. */
  private async read(provider: string, jobKey: string): Promise<StoredResult | undefined> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { [R.PK]: S(resultKey(provider, jobKey)) },
        ConsistentRead: true,
        ProjectionExpression: '#eventKey, #version, #expiresAt, #updatedAt',
        ExpressionAttributeNames: { '#eventKey': R.EVENT_KEY, '#version': R.VERSION, '#expiresAt': R.EXPIRES_AT, '#updatedAt': R.UPDATED_AT },
      }),
    );
    const item = out.Item;
    const eventKey = item?.[R.EVENT_KEY]?.S;
    if (!item || eventKey === undefined) return undefined;
    const expiresAt = item[R.EXPIRES_AT]?.N;
    return {
      eventKey,
      version: Number(item[R.VERSION]?.N ?? 1),
      updatedAt: Number(item[R.UPDATED_AT]?.N ?? 0),
      ...(expiresAt !== undefined ? { expiresAt: Number(expiresAt) } : {}),
    };
  }
}

/** A job's item as read: its winner, and what its expiry is judged by. */
interface StoredResult extends StoredWinner {
  /** Epoch ms of the last decision. */
  readonly updatedAt: number;
  /** Epoch seconds; absent on items written before results expired. */
  readonly expiresAt?: number;
}

/**
 * A live item, as a condition: its `expiresAt` still ahead, or, for an item written before
 * results expired (no `expiresAt`), its last decision within the retention: what `isLive` says.
 */
const LIVE = '(#expiresAt > :nowSeconds OR (attribute_not_exists(#expiresAt) AND #updatedAt > :liveSince))';

/** Whether an item is live at `now` (epoch ms), by the rule `LIVE` states. */
export function isLive(stored: { readonly expiresAt?: number; readonly updatedAt: number }, now: number, retentionSeconds: number): boolean {
  return stored.expiresAt !== undefined ? stored.expiresAt > Math.floor(now / 1000) : stored.updatedAt > now - retentionSeconds * 1000;
}

/**
 * How a result item holds its winner's result: the body store's key when it was too large; else
 * the text, or its UTF-8 bytes deflated when that makes them smaller (the item's other
 * attributes take about 400 bytes, so a 700-byte result that deflates keeps every offer at one
 * write unit instead of two).
 */
function responseAttributes(response: string, responseRef: string | undefined): Record<string, AttributeValue> {
  if (responseRef !== undefined) return { [R.RESPONSE_REF]: S(responseRef) };
  const deflated = deflatedIfSmaller(Buffer.from(response, 'utf8'));
  return deflated ? { [R.RESPONSE]: { B: deflated }, [R.RESPONSE_ENCODING]: S(DEFLATE_RAW) } : { [R.RESPONSE]: S(response) };
}
