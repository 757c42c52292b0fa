import { DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { InboxAttr as A, PendingIndex, SweepWatermark } from '../../../../lib/contract';
import { isConditionalCheckFailed } from '../../runtime/errors';
import { N } from '../dynamo';
import { itemKey } from './row';
import { SweepMark } from './sweep';

/**
 * The sweep's watermark item of the inbox table (how far the sweep has read, the revision that
 * fences a sweep from an older one, the pending index's shard count): one request per method,
 * every write conditional, so two reconcilers never move it backwards.
 */
export class DynamoDbSweepWatermark {
  /** `pendingShards`: the shard count a new or revived row's pending-index entry is written under (`pendingIndexShards`). */
  constructor(
    protected readonly client: DynamoDBClient,
    protected readonly tableName: string,
    readonly pendingShards: number = PendingIndex.SHARD_COUNT,
  ) {}

  async sweepWatermark(): Promise<number> {
    return (await this.sweepMark()).watermark;
  }

  async sweepMark(): Promise<SweepMark> {
    const out = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: itemKey(SweepWatermark.PARTITION, SweepWatermark.SORT),
        ConsistentRead: true,
        ProjectionExpression: '#before, #revision, #shards',
        ExpressionAttributeNames: { '#before': A.SWEPT_BEFORE, '#revision': A.SWEEP_REVISION, '#shards': A.SWEEP_SHARDS },
      }),
    );
    const [revision, shards] = [out.Item?.[A.SWEEP_REVISION]?.N, out.Item?.[A.SWEEP_SHARDS]?.N];
    return {
      watermark: Number(out.Item?.[A.SWEPT_BEFORE]?.N ?? 0),
      ...(revision !== undefined ? { revision: Number(revision) } : {}),
      ...(shards !== undefined ? { shards: Number(shards) } : {}),
    };
  }

  async notePendingShards(recorded: number | undefined): Promise<void> {
    if (this.pendingShards <= (recorded ?? PendingIndex.SHARD_COUNT)) return;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(SweepWatermark.PARTITION, SweepWatermark.SORT),
          UpdateExpression: 'SET #shards = :shards',
          // Only ever raised: a reconciler still on a smaller count (a deployment in progress) never lowers it.
          ConditionExpression: 'attribute_not_exists(#shards) OR #shards < :shards',
          ExpressionAttributeNames: { '#shards': A.SWEEP_SHARDS },
          ExpressionAttributeValues: { ':shards': N(this.pendingShards) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async fenceSweep(): Promise<number> {
    const out = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: itemKey(SweepWatermark.PARTITION, SweepWatermark.SORT),
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
          Key: itemKey(SweepWatermark.PARTITION, SweepWatermark.SORT),
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
}
