import { DynamoDBClient, GetItemCommand, UpdateItemCommand, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { BreakerState, FlowAttr as F, FlowControlKey } from '../../../../lib/contract';
import { isConditionalCheckFailed } from '../../runtime/errors';
import { N, S } from '../dynamo';
import { itemKey } from '../inbox/row';
import type { FlowStore, ProbeOutcome } from './port';
import { FlowState, flowStateOf } from './state';

/** Every attribute of the item, by placeholder: each request names what it uses from here. */
const NAMES = Object.fromEntries(Object.values(F).map((name) => [`#${name}`, name]));

/** The longest open reason kept: a reason is a short sentence, never content. */
const REASON_CHARACTERS = 300;

/** The flow-control item in the inbox table, one request per method. */
export class DynamoDbFlowStore implements FlowStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async read(): Promise<FlowState> {
    const out = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: itemKey(FlowControlKey.PARTITION, FlowControlKey.SORT), ConsistentRead: true }),
    );
    return flowStateOf(out.Item);
  }

  async pause(now: number, by: string): Promise<FlowState> {
    return (await this.update({
      UpdateExpression: `SET #${F.PAUSED_AT} = if_not_exists(#${F.PAUSED_AT}, :now), #${F.PAUSED_BY} = if_not_exists(#${F.PAUSED_BY}, :by)`,
      ExpressionAttributeValues: { ':now': N(now), ':by': S(by) },
    }))!;
  }

  async resume(now: number): Promise<FlowState> {
    return (await this.update({
      UpdateExpression:
        `SET #${F.BREAKER} = :closed, #${F.CLOSED_AT} = :now, #${F.PROBE_SUCCESSES} = :zero ` +
        `REMOVE #${F.PAUSED_AT}, #${F.PAUSED_BY}, #${F.PROBE_OWNER}, #${F.PROBE_UNTIL}`,
      ExpressionAttributeValues: { ':closed': S(BreakerState.CLOSED), ':now': N(now), ':zero': N(0) },
    }))!;
  }

  async open(now: number, reason: string): Promise<boolean> {
    const opened = await this.update({
      UpdateExpression: `SET ${OPENED} ADD #${F.OPENINGS} :one REMOVE #${F.PROBE_OWNER}, #${F.PROBE_UNTIL}`,
      ConditionExpression: `attribute_not_exists(#${F.BREAKER}) OR #${F.BREAKER} = :closed`,
      ExpressionAttributeValues: { ...openedValues(now, reason), ':closed': S(BreakerState.CLOSED), ':one': N(1) },
    });
    return opened !== undefined;
  }

  async takeProbe(owner: string, now: number, coolDownMs: number, leaseMs: number): Promise<boolean> {
    const taken = await this.update({
      UpdateExpression: `SET #${F.BREAKER} = :half, #${F.PROBE_OWNER} = :owner, #${F.PROBE_UNTIL} = :until`,
      ConditionExpression:
        `(#${F.BREAKER} = :open AND #${F.OPENED_AT} <= :cooled) OR ` +
        `(#${F.BREAKER} = :half AND (attribute_not_exists(#${F.PROBE_UNTIL}) OR #${F.PROBE_UNTIL} < :now))`,
      ExpressionAttributeValues: {
        ':half': S(BreakerState.HALF_OPEN),
        ':open': S(BreakerState.OPEN),
        ':owner': S(owner),
        ':until': N(now + leaseMs),
        ':cooled': N(now - coolDownMs),
        ':now': N(now),
      },
    });
    return taken !== undefined;
  }

  async endProbe(owner: string, outcome: ProbeOutcome, now: number, probesToClose: number, reason?: string): Promise<FlowState | undefined> {
    const mine = `#${F.BREAKER} = :half AND #${F.PROBE_OWNER} = :owner`;
    const base = { ':half': S(BreakerState.HALF_OPEN), ':owner': S(owner) };
    const free = `REMOVE #${F.PROBE_OWNER}, #${F.PROBE_UNTIL}`;
    if (outcome === 'failed') {
      return this.update({
        UpdateExpression: `SET ${OPENED} ADD #${F.OPENINGS} :one ${free}`,
        ConditionExpression: mine,
        ExpressionAttributeValues: { ...base, ...openedValues(now, reason ?? 'a probe failed downstream'), ':one': N(1) },
      });
    }
    if (outcome === 'inconclusive') return this.update({ UpdateExpression: free, ConditionExpression: mine, ExpressionAttributeValues: base });
    // The success that makes `probesToClose` closes the breaker; any other only counts.
    const closed = await this.update({
      UpdateExpression: `SET #${F.BREAKER} = :closed, #${F.CLOSED_AT} = :now, #${F.PROBE_SUCCESSES} = :zero ${free}`,
      ConditionExpression: probesToClose > 1 ? `${mine} AND #${F.PROBE_SUCCESSES} >= :need` : mine,
      ExpressionAttributeValues: {
        ...base,
        ':closed': S(BreakerState.CLOSED),
        ':now': N(now),
        ':zero': N(0),
        ...(probesToClose > 1 ? { ':need': N(probesToClose - 1) } : {}),
      },
    });
    if (closed) return closed;
    return this.update({
      UpdateExpression: `ADD #${F.PROBE_SUCCESSES} :one ${free}`,
      ConditionExpression: mine,
      ExpressionAttributeValues: { ...base, ':one': N(1) },
    });
  }

  /** One UpdateItem of the item; the state after, or undefined when its condition failed. */
  private async update(
    input: Pick<UpdateItemCommandInput, 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeValues'>,
  ): Promise<FlowState | undefined> {
    const expressions = `${input.UpdateExpression} ${input.ConditionExpression ?? ''}`;
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(FlowControlKey.PARTITION, FlowControlKey.SORT),
          ...input,
          // Only the names an expression uses: DynamoDB refuses unused ones.
          ExpressionAttributeNames: Object.fromEntries(Object.entries(NAMES).filter(([placeholder]) => new RegExp(`${placeholder}\\b`).test(expressions))),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return flowStateOf(out.Attributes);
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }
}

/** What opening the breaker sets: open since now, why, no probe successes yet. */
const OPENED = `#${F.BREAKER} = :opened, #${F.OPENED_AT} = :now, #${F.OPEN_REASON} = :reason, #${F.PROBE_SUCCESSES} = :zero`;

function openedValues(now: number, reason: string) {
  return { ':opened': S(BreakerState.OPEN), ':now': N(now), ':reason': S(reason.slice(0, REASON_CHARACTERS)), ':zero': N(0) };
}
