/**
 * The submission ledger: one item per task an app submitted to a provider, in the inbox table
 * beside the delivery rows (sort key `submission`), so the reconciler can poll for results that
 * were never delivered (docs/DESIGN.md#invariant-10).
 *
 * Items and indexes (names in `lib/contract/table-schema.ts`):
 * - by id: pk `ledger:<provider>#<taskId>`; known only by its idempotency key (a create that
 *   timed out and whose retry got 409): pk `ledger:<provider>#key:<idempotencyKey>`. The prefix
 *   keeps submissions out of the delivery rows' key space, so the apps' grant cannot write those;
 * - while AWAITING, the sparse `awaiting` index (`awaitShard` sharded 16 ways, `awaitDueAt` =
 *   when it is next due, epoch ms) finds due submissions with bounded queries, never a scan;
 * - a submission recorded by id with its key also carries `jobRef` = `<provider>#<key>`, as the
 *   delivery rows do, so a key-only submission of the same key finds it (state LINKED) or finds
 *   the delivery (state DELIVERED) in the `jobRef` index, and fills in the task id.
 *
 * Recording is one conditional PutItem: recording the same submission twice changes nothing.
 * Every later step is one single-item write conditioned on the item still being AWAITING, so a
 * reconciler run that crashes anywhere is repeated safely by the next.
 */
import { AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { BATCH_CHILD_STATES, childStateAttr, SUBMISSION_KIND_BATCH, InboxAttr as A, InboxItemKind, JobRefIndex, SubmissionState } from '../../../lib/contract';
import { awaitingIndexOf, BoundedCount, countShardedIndex, N, queryShardedIndex, S } from './dynamo';
import { isConditionalCheckFailed } from '../runtime/errors';
import { isDeliveryKey, jobRefKey } from './inbox';
import {
  batchProgressOf,
  childChunkSortKey,
  DueSubmission,
  JobRefEntry,
  NewSubmission,
  recordSubmissionInput,
  ResultsTally,
  Submission,
  SubmissionStateName,
} from './submission-record';

export { splitKey } from './inbox';

/** Persistence of the ledger; every method is one single-item request (or one query per shard). */
export interface SubmissionStore {
  /** Records a submission; false when it was recorded before (nothing is changed). */
  record(submission: NewSubmission): Promise<boolean>;
  /** AWAITING submissions due at `now`, earliest due first, at most `limit`. */
  findDue(now: number, limit: number): Promise<DueSubmission[]>;
  /** A submission, read consistently; undefined when absent. */
  get(key: string): Promise<Submission | undefined>;
  /** AWAITING → `state`: it leaves the awaiting index; false when it was no longer AWAITING. */
  settle(key: string, state: SubmissionStateName, lastCheck: string, now: number, taskId?: string): Promise<boolean>;
  /** A check without a result: it stays AWAITING, due again at `dueAt`; false when no longer AWAITING. */
  recheck(key: string, dueAt: number, lastCheck: string, now: number): Promise<boolean>;
  /** Not due yet by its provider's horizon: moves its due time without counting a check. */
  reschedule(key: string, dueAt: number): Promise<boolean>;
  /** AWAITING submissions due at or before `dueBy`, at most `limitPerShard` per shard. */
  countDue(dueBy: number, limitPerShard: number): Promise<BoundedCount>;
  /** Items of the job-ref index for `<provider>#<jobRef>`, at most `limit`. */
  findByJobRef(provider: string, jobRef: string, limit: number): Promise<JobRefEntry[]>;
  /** A batch's recorded custom ids (one consistent GetItem per child-id item). */
  childIds(key: string, chunks: number): Promise<Set<string>>;
  /** Records what the provider said of a batch (status, expiry, end); false when no longer AWAITING. */
  noteBatch(key: string, status: { processingStatus: string; expiresAt?: number; endedAt?: number }): Promise<boolean>;
  /**
   * Moves a batch's results cursor from `from` to `next` (undefined: the last page was read)
   * and adds the page's tally, in one write conditioned on the cursor still being `from`: a page
   * is counted once however often it is read. False when the cursor moved or the batch settled.
   */
  advanceResults(key: string, from: string | undefined, next: string | undefined, tally: ResultsTally): Promise<boolean>;
}

export class DynamoDbSubmissionStore implements SubmissionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  private itemKey(key: string): Record<string, AttributeValue> {
    return { [A.PK]: S(key), [A.SK]: S(InboxItemKind.SUBMISSION) };
  }

  async record(submission: NewSubmission): Promise<boolean> {
    try {
      await this.client.send(new PutItemCommand(recordSubmissionInput(this.tableName, submission)));
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async findDue(now: number, limit: number): Promise<DueSubmission[]> {
    const entries = await queryShardedIndex(this.client, awaitingIndexOf(this.tableName), now, limit);
    return entries.map((entry) => ({ key: entry.key, dueAt: entry.sort }));
  }

  /** Submissions still AWAITING, and those of them due for a check at `now` (an operator's status), at most `limitPerShard` per shard each. */
  async countAwaiting(now: number, limitPerShard: number): Promise<{ awaiting: BoundedCount; due: BoundedCount }> {
    const index = awaitingIndexOf(this.tableName);
    const [awaiting, due] = await Promise.all([countShardedIndex(this.client, index, limitPerShard), this.countDue(now, limitPerShard)]);
    return { awaiting, due };
  }

  countDue(dueBy: number, limitPerShard: number): Promise<BoundedCount> {
    return countShardedIndex(this.client, awaitingIndexOf(this.tableName), limitPerShard, dueBy + 1);
  }

  async get(key: string): Promise<Submission | undefined> {
    const out = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.itemKey(key), ConsistentRead: true }));
    const item = out.Item;
    if (!item) return undefined;
    return {
      key,
      provider: item[A.PROVIDER].S!,
      ...(item[A.TASK_ID]?.S !== undefined ? { taskId: item[A.TASK_ID].S } : {}),
      ...(item[A.IDEMPOTENCY_KEY]?.S !== undefined ? { idempotencyKey: item[A.IDEMPOTENCY_KEY].S } : {}),
      submittedAt: Number(item[A.SUBMITTED_AT].N),
      state: item[A.STATE].S as SubmissionStateName,
      checks: Number(item[A.CHECKS]?.N ?? 0),
      ...(item[A.LAST_CHECK]?.S !== undefined ? { lastCheck: item[A.LAST_CHECK].S } : {}),
      ...(item[A.CHECKED_AT]?.N !== undefined ? { checkedAt: Number(item[A.CHECKED_AT].N) } : {}),
      expiresAt: Number(item[A.EXPIRES_AT].N),
      ...(item[A.AWAIT_DUE_AT]?.N !== undefined ? { dueAt: Number(item[A.AWAIT_DUE_AT].N) } : {}),
      ...(item[A.DEADLINE_AT]?.N !== undefined ? { deadlineAt: Number(item[A.DEADLINE_AT].N) } : {}),
      ...(item[A.SUBMISSION_KIND]?.S === SUBMISSION_KIND_BATCH ? { batch: batchProgressOf(item) } : {}),
    };
  }

  async childIds(key: string, chunks: number): Promise<Set<string>> {
    const ids = new Set<string>();
    for (let index = 0; index < chunks; index++) {
      const out = await this.client.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: { [A.PK]: S(key), [A.SK]: S(childChunkSortKey(index)) },
          ConsistentRead: true,
        }),
      );
      for (const id of out.Item?.[A.CHILD_IDS]?.SS ?? []) ids.add(id);
    }
    return ids;
  }

  async noteBatch(key: string, status: { processingStatus: string; expiresAt?: number; endedAt?: number }): Promise<boolean> {
    const sets: [string, string, AttributeValue][] = [
      ['#status', A.BATCH_STATUS, S(status.processingStatus)],
      ...(status.expiresAt !== undefined ? [['#expires', A.BATCH_EXPIRES_AT, N(status.expiresAt)] as [string, string, AttributeValue]] : []),
      ...(status.endedAt !== undefined ? [['#ended', A.BATCH_ENDED_AT, N(status.endedAt)] as [string, string, AttributeValue]] : []),
    ];
    return this.updateAwaiting(key, {
      update: `SET ${sets.map(([name]) => `${name} = :${name.slice(1)}`).join(', ')}`,
      names: Object.fromEntries(sets.map(([name, attr]) => [name, attr])),
      values: Object.fromEntries(sets.map(([name, , value]) => [`:${name.slice(1)}`, value])),
    });
  }

  async advanceResults(key: string, from: string | undefined, next: string | undefined, tally: ResultsTally): Promise<boolean> {
    const counted = BATCH_CHILD_STATES.filter((state) => (tally.counts[state] ?? 0) > 0);
    const names: Record<string, string> = {
      '#cursor': A.RESULTS_CURSOR,
      '#done': A.RESULTS_DONE,
      '#read': A.RESULTS_READ,
      '#unexpected': A.RESULTS_UNEXPECTED,
    };
    const values: Record<string, AttributeValue> = { ':read': N(tally.read), ':unexpected': N(tally.unexpected) };
    counted.forEach((state, index) => {
      names[`#c${index}`] = childStateAttr(state);
      values[`:c${index}`] = N(tally.counts[state]);
    });
    const adds = ['#read :read', '#unexpected :unexpected', ...counted.map((_, index) => `#c${index} :c${index}`)].join(', ');
    let set: string;
    if (next === undefined) {
      values[':true'] = { BOOL: true };
      set = 'SET #done = :true';
    } else {
      values[':next'] = S(next);
      set = 'SET #cursor = :next';
    }
    // The first page has no cursor yet: the condition is that none was stored.
    const cursorCondition = from === undefined ? 'attribute_not_exists(#cursor)' : '#cursor = :from';
    if (from !== undefined) values[':from'] = S(from);
    return this.updateAwaiting(key, { update: `${set} ADD ${adds}`, names, values }, `${cursorCondition} AND attribute_not_exists(#done)`);
  }

  async settle(key: string, state: SubmissionStateName, lastCheck: string, now: number, taskId?: string): Promise<boolean> {
    return this.updateAwaiting(key, {
      update:
        `SET #state = :state, #lastCheck = :lastCheck, #checkedAt = :now, #resolvedAt = :now${taskId !== undefined ? ', #taskId = :taskId' : ''} ` +
        'ADD #checks :one REMOVE #shard, #due',
      names: {
        '#state': A.STATE,
        '#lastCheck': A.LAST_CHECK,
        '#checkedAt': A.CHECKED_AT,
        '#resolvedAt': A.RESOLVED_AT,
        '#checks': A.CHECKS,
        '#shard': A.AWAIT_SHARD,
        '#due': A.AWAIT_DUE_AT,
        ...(taskId !== undefined ? { '#taskId': A.TASK_ID } : {}),
      },
      values: {
        ':state': S(state),
        ':lastCheck': S(lastCheck),
        ':now': N(now),
        ':one': N(1),
        ...(taskId !== undefined ? { ':taskId': S(taskId) } : {}),
      },
    });
  }

  async recheck(key: string, dueAt: number, lastCheck: string, now: number): Promise<boolean> {
    return this.updateAwaiting(key, {
      update: 'SET #due = :due, #lastCheck = :lastCheck, #checkedAt = :now ADD #checks :one',
      names: { '#due': A.AWAIT_DUE_AT, '#lastCheck': A.LAST_CHECK, '#checkedAt': A.CHECKED_AT, '#checks': A.CHECKS },
      values: { ':due': N(dueAt), ':lastCheck': S(lastCheck), ':now': N(now), ':one': N(1) },
    });
  }

  async reschedule(key: string, dueAt: number): Promise<boolean> {
    return this.updateAwaiting(key, { update: 'SET #due = :due', names: { '#due': A.AWAIT_DUE_AT }, values: { ':due': N(dueAt) } });
  }

  async findByJobRef(provider: string, jobRef: string, limit: number): Promise<JobRefEntry[]> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: JobRefIndex.NAME,
        KeyConditionExpression: '#jobRef = :jobRef',
        ExpressionAttributeNames: { '#jobRef': A.JOB_REF },
        ExpressionAttributeValues: { ':jobRef': S(jobRefKey(provider, jobRef)) },
        Limit: limit,
      }),
    );
    return (out.Items ?? []).flatMap((item): JobRefEntry[] => {
      const sk = item[A.SK].S;
      // A delivery is a delivery row at a delivery key: an item under a ledger key is none, whatever its sort key.
      if (sk === InboxItemKind.DELIVERY && isDeliveryKey(item[A.PK].S!)) return [{ key: item[A.PK].S!, kind: 'delivery' }];
      if (sk === InboxItemKind.SUBMISSION) return [{ key: item[A.PK].S!, kind: 'submission' }];
      return [];
    });
  }

  /** One UpdateItem conditioned on the submission still AWAITING. */
  private async updateAwaiting(
    key: string,
    expression: { update: string; names: Record<string, string>; values: Record<string, AttributeValue> },
    condition?: string,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(key),
          UpdateExpression: expression.update,
          ConditionExpression: `#state = :awaiting${condition ? ` AND ${condition}` : ''}`,
          ExpressionAttributeNames: { ...expression.names, '#state': A.STATE },
          ExpressionAttributeValues: { ...expression.values, ':awaiting': S(SubmissionState.AWAITING) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
