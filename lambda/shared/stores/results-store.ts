import { AttributeValue, DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { ResultAttr as R } from '../../../lib/contract';
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

/** The per-job results: the winner of each logical job under the conflict rule. */
export interface ResultsStore {
  /** Stores the offer if it beats the current winner; says whether it is (now or already) the winner. */
  offer(offer: ResultOffer): Promise<OfferResult>;
  /** The job's winner now; undefined when it has none. */
  winnerOf(provider: string, jobKey: string): Promise<StoredWinner | undefined>;
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
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async offer({ provider, eventKey, observation, responseRef, now }: ResultOffer): Promise<OfferResult> {
    const key = { [R.PK]: S(resultKey(provider, observation.jobKey)) };
    // A new winner's result replaces the old one's in whichever form that one took.
    const response = replaceForms(responseAttributes(observation.response, responseRef), [R.RESPONSE, R.RESPONSE_ENCODING, R.RESPONSE_REF]);
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression:
            'SET #provider = :provider, #jobKey = :jobKey, #taskId = :taskId, #eventKey = :eventKey, #status = :status, ' +
            `#createdAt = :createdAt, #order = :order, ${response.set}, #updatedAt = :now ` +
            `REMOVE ${response.remove} ADD #version :one`,
          // Equal order means the same observation again (a retry): nothing changes.
          ConditionExpression: 'attribute_not_exists(#order) OR #order < :order',
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
            ':one': N(1),
          },
          // The version this decision made: what orders the job's effects.
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return { outcome: 'won', version: Number(out.Attributes?.[R.VERSION]?.N) };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
    // Only on this path: is the winner that stopped us our own earlier offer? (DynamoDB could
    // return the item with the failure, but dynalite returns nothing, so read it.) The same
    // delivery always makes the same observation, so its event key alone identifies it.
    const winner = await this.winnerOf(provider, observation.jobKey);
    return winner?.eventKey === eventKey ? { outcome: 'already_won', version: winner.version } : { outcome: 'lost' };
  }

  async winnerOf(provider: string, jobKey: string): Promise<StoredWinner | undefined> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { [R.PK]: S(resultKey(provider, jobKey)) },
        ConsistentRead: true,
        ProjectionExpression: '#eventKey, #version',
        ExpressionAttributeNames: { '#eventKey': R.EVENT_KEY, '#version': R.VERSION },
      }),
    );
    const eventKey = out.Item?.[R.EVENT_KEY]?.S;
    return eventKey === undefined ? undefined : { eventKey, version: Number(out.Item?.[R.VERSION]?.N ?? 1) };
  }
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
