import { AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { InboxAttr, RecoveryCursorKey } from '../../../lib/contract';
import { isConditionalCheckFailed } from '../runtime/errors';
import { N, S } from './dynamo';

/**
 * Where a provider's recovery has got to in its event log: one item per provider, read at a run's
 * start and moved with a conditional write at its end, so that of two runs at once only one moves
 * it (the other's work is repeated by the next run, and admission makes that harmless).
 */
export interface RecoveryCursor {
  /** The provider's own position (JSON its recovery wrote), absent before the first run. */
  readonly position?: string;
  /** Bumped by every write: the condition of the next. */
  readonly revision: number;
  /** When a run last went through everything it had to (epoch ms); the item's creation before that. */
  readonly completedAt: number;
  /** What answered 404 (a GitHub hook): not asked again while the configuration names it. */
  readonly gone?: string;
}

/** A cursor's next state; `completedAt` and `gone` left out are kept as they were. */
export interface CursorUpdate {
  readonly position?: string;
  readonly completedAt?: number;
  readonly gone?: string | null;
}

export interface RecoveryCursorStore {
  /** The cursor, created (completed at `now`) when there is none yet. */
  read(provider: string, now: number): Promise<RecoveryCursor>;
  /** Writes the update when the cursor is still at `revision`: false when another run moved it first. */
  write(provider: string, revision: number, update: CursorUpdate): Promise<boolean>;
}

const A = {
  POSITION: 'position',
  REVISION: 'revision',
  COMPLETED_AT: 'completedAt',
  GONE: 'gone',
} as const;

export class DynamoDbRecoveryCursorStore implements RecoveryCursorStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async read(provider: string, now: number): Promise<RecoveryCursor> {
    const key = cursorKey(provider);
    const out = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    if (out.Item) {
      return {
        ...(out.Item[A.POSITION]?.S !== undefined ? { position: out.Item[A.POSITION].S } : {}),
        revision: Number(out.Item[A.REVISION]?.N ?? 0),
        completedAt: Number(out.Item[A.COMPLETED_AT]?.N ?? now),
        ...(out.Item[A.GONE]?.S !== undefined ? { gone: out.Item[A.GONE].S } : {}),
      };
    }
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { ...key, [A.REVISION]: N(0), [A.COMPLETED_AT]: N(now) },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': InboxAttr.PK },
        }),
      );
      return { revision: 0, completedAt: now };
    } catch (error) {
      // Another run created it a moment ago: read what it wrote.
      if (isConditionalCheckFailed(error)) return this.read(provider, now);
      throw error;
    }
  }

  async write(provider: string, revision: number, update: CursorUpdate): Promise<boolean> {
    const sets = [`#revision = :next`];
    const removes: string[] = [];
    const names: Record<string, string> = { '#revision': A.REVISION };
    const values: Record<string, AttributeValue> = { ':next': N(revision + 1), ':revision': N(revision) };
    if (update.position !== undefined) {
      sets.push('#position = :position');
      names['#position'] = A.POSITION;
      values[':position'] = S(update.position);
    }
    if (update.completedAt !== undefined) {
      sets.push('#completedAt = :completedAt');
      names['#completedAt'] = A.COMPLETED_AT;
      values[':completedAt'] = N(update.completedAt);
    }
    if (update.gone !== undefined) {
      names['#gone'] = A.GONE;
      if (update.gone === null) removes.push('#gone');
      else {
        sets.push('#gone = :gone');
        values[':gone'] = S(update.gone);
      }
    }
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: cursorKey(provider),
          UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: '#revision = :revision',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}

function cursorKey(provider: string) {
  return { [InboxAttr.PK]: S(`${RecoveryCursorKey.PARTITION_PREFIX}${provider}`), [InboxAttr.SK]: S(RecoveryCursorKey.SORT) };
}
