import { DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { ResultAttr as R } from '../../lib/contract';
import { JobObservation } from './adapters/adapter';
import { N, S } from './dynamo';
import { isConditionalCheckFailed } from './errors';
import { winnerOrder } from './job-result';

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

/** The per-job results: the winner of each logical job under the conflict rule. */
export interface ResultsStore {
  /** Stores the offer if it beats the current winner; says whether it is (now or already) the winner. */
  offer(offer: ResultOffer): Promise<OfferOutcome>;
  /** The inbox key of the delivery whose result is the job's winner now; undefined when it has none. */
  winnerOf(provider: string, jobKey: string): Promise<string | undefined>;
}

/** The job's item in the results table. */
export function resultKey(provider: string, jobKey: string): string {
  return `${provider}#${jobKey}`;
}

export class DynamoDbResultsStore implements ResultsStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async offer({ provider, eventKey, observation, responseRef, now }: ResultOffer): Promise<OfferOutcome> {
    const key = { [R.PK]: S(resultKey(provider, observation.jobKey)) };
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression:
            'SET #provider = :provider, #jobKey = :jobKey, #taskId = :taskId, #eventKey = :eventKey, #status = :status, ' +
            '#createdAt = :createdAt, #order = :order, #response = :response, #updatedAt = :now ' +
            'REMOVE #otherResponse ADD #version :one',
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
            // A result lives inline or in the body store; a new winner removes the other form.
            '#response': responseRef === undefined ? R.RESPONSE : R.RESPONSE_REF,
            '#otherResponse': responseRef === undefined ? R.RESPONSE_REF : R.RESPONSE,
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
            ':response': S(responseRef ?? observation.response),
            ':now': N(now),
            ':one': N(1),
          },
        }),
      );
      return 'won';
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
    // Only on this path: is the winner that stopped us our own earlier offer? (DynamoDB could
    // return the item with the failure, but dynalite returns nothing, so read it.) The same
    // delivery always makes the same observation, so its event key alone identifies it.
    return (await this.winnerOf(provider, observation.jobKey)) === eventKey ? 'already_won' : 'lost';
  }

  async winnerOf(provider: string, jobKey: string): Promise<string | undefined> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { [R.PK]: S(resultKey(provider, jobKey)) },
        ConsistentRead: true,
        ProjectionExpression: '#eventKey',
        ExpressionAttributeNames: { '#eventKey': R.EVENT_KEY },
      }),
    );
    return out.Item?.[R.EVENT_KEY]?.S;
  }
}
