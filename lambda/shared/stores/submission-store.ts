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
import { AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand, PutItemCommandInput, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import {
  BATCH_CHILD_STATES,
  childStateAttr,
  Limits,
  MESSAGE_BATCH_CUSTOM_ID_PATTERN,
  MESSAGE_BATCH_MAX_REQUESTS,
  SUBMISSION_KIND_BATCH,
  AwaitingIndex,
  InboxAttr as A,
  InboxItemKind,
  JobRefIndex,
  PROVIDER_NAME_PATTERN,
  SUBMISSION_KEY_ONLY_PREFIX,
  SUBMISSION_PARTITION_PREFIX,
  SubmissionState,
} from '../../../lib/contract';
import { shardOf } from '../runtime/digest';
import { awaitingIndexOf, BoundedCount, countShardedIndex, N, queryShardedIndex, S } from './dynamo';
import { isConditionalCheckFailed } from '../runtime/errors';
import { isDeliveryKey, jobRefKey } from './inbox';

export { splitKey } from './inbox';

export type SubmissionStateName = (typeof SubmissionState)[keyof typeof SubmissionState];

/** Who a submission is: its provider, and its task id or idempotency key (or both). */
export interface SubmissionIdentity {
  readonly provider: string;
  readonly taskId?: string;
  readonly idempotencyKey?: string;
}

/** A submission about to be recorded. */
export interface NewSubmission extends SubmissionIdentity {
  /** Epoch milliseconds. */
  readonly submittedAt: number;
  /** When it is first due for a check (submission + horizon), epoch milliseconds. */
  readonly dueAt: number;
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
  /** When its provider resource is gone, epoch milliseconds; none when absent. */
  readonly deadlineAt?: number;
  /** A batch (its task id is the batch id): the custom ids of its requests. */
  readonly childIds?: readonly string[];
}

/** What the reconciler has learnt of a batch submission so far. */
export interface BatchProgress {
  /** The requests (children) the app recorded. */
  readonly childCount: number;
  /** How many child-id items hold their custom ids. */
  readonly childChunks: number;
  /** The provider's `processing_status` at the last poll that recorded it. */
  readonly status?: string;
  /** The provider's `expires_at`, epoch ms. */
  readonly expiresAt?: number;
  /** The provider's `ended_at`, epoch ms; set once the batch ended. */
  readonly endedAt?: number;
  /** The results page to read next; undefined before the first. */
  readonly cursor?: string;
  /** Every results page was read. */
  readonly done: boolean;
  /** Results read of recorded children, in all and per state. */
  readonly read: number;
  readonly counts: Readonly<Record<string, number>>;
  /** Results read that named no recorded child. */
  readonly unexpected: number;
}

/** What one results page added to a batch's progress. */
export interface ResultsTally {
  readonly read: number;
  readonly unexpected: number;
  readonly counts: Readonly<Record<string, number>>;
}

/** A submission as stored. */
export interface Submission extends SubmissionIdentity {
  readonly key: string;
  readonly submittedAt: number;
  readonly state: SubmissionStateName;
  readonly checks: number;
  readonly lastCheck?: string;
  /** When it was last checked, epoch milliseconds; absent before its first check. */
  readonly checkedAt?: number;
  readonly expiresAt: number;
  readonly dueAt?: number;
  /** Absent on items recorded without one (and on every item recorded before deadlines existed). */
  readonly deadlineAt?: number;
  /** Present for a batch. */
  readonly batch?: BatchProgress;
}

/** A due submission as the awaiting index lists it. */
export interface DueSubmission {
  readonly key: string;
  readonly dueAt: number;
}

/** An item of the job-ref index: a delivery row or a submission recorded by id. */
export interface JobRefEntry {
  readonly key: string;
  readonly kind: 'delivery' | 'submission';
}

const MAX_ID_LENGTH = 512;

/** What is wrong with a submission's identity; empty when it can be recorded. */
export function submissionProblems(identity: SubmissionIdentity): string[] {
  const problems: string[] = [];
  if (typeof identity.provider !== 'string' || !PROVIDER_NAME_PATTERN.test(identity.provider)) problems.push('provider must be a provider name (a-z, 0-9, -)');
  if (identity.taskId === undefined && identity.idempotencyKey === undefined) problems.push('taskId or idempotencyKey is required');
  for (const field of ['taskId', 'idempotencyKey'] as const) {
    const value = identity[field];
    if (value !== undefined && (typeof value !== 'string' || value === '' || value.length > MAX_ID_LENGTH)) {
      problems.push(`${field} must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
    }
  }
  if (typeof identity.taskId === 'string' && identity.taskId.startsWith(SUBMISSION_KEY_ONLY_PREFIX)) {
    problems.push(`taskId must not start with "${SUBMISSION_KEY_ONLY_PREFIX}"`);
  }
  return problems;
}

/** What is wrong with a batch's custom ids; empty when they can be recorded. */
export function batchChildProblems(childIds: readonly unknown[]): string[] {
  if (!Array.isArray(childIds) || childIds.length === 0) return ['childIds must list the custom id of every request of the batch'];
  if (childIds.length > MESSAGE_BATCH_MAX_REQUESTS) return [`childIds holds ${childIds.length} ids; a batch holds at most ${MESSAGE_BATCH_MAX_REQUESTS}`];
  const problems: string[] = [];
  const bad = childIds.findIndex((id) => typeof id !== 'string' || !MESSAGE_BATCH_CUSTOM_ID_PATTERN.test(id));
  if (bad >= 0) problems.push(`childIds[${bad}] must be 1 to 64 letters, digits, _ or -`);
  const seen = new Set<unknown>();
  const repeated = childIds.findIndex((id) => seen.size === seen.add(id).size);
  if (repeated >= 0) problems.push(`childIds[${repeated}] repeats an earlier custom id`);
  return problems;
}

/** The sort key of a batch's n-th child-id item. */
export function childChunkSortKey(index: number): string {
  return `${InboxItemKind.BATCH_CHILDREN_PREFIX}${String(index).padStart(5, '0')}`;
}

/** The custom ids of a batch, split into items of at most `Limits.BATCH_CHILD_IDS_PER_ITEM`. */
function childChunks(childIds: readonly string[]): string[][] {
  const chunks: string[][] = [];
  for (let start = 0; start < childIds.length; start += Limits.BATCH_CHILD_IDS_PER_ITEM)
    chunks.push(childIds.slice(start, start + Limits.BATCH_CHILD_IDS_PER_ITEM));
  return chunks;
}

/**
 * The conditional PutItems of a batch's child-id items, written before the submission item (so
 * the reconciler never sees a batch without its children). A retry after a partial recording
 * writes the missing ones and leaves the others as first written.
 */
export function recordBatchChildrenInputs(tableName: string, submission: NewSubmission): PutItemCommandInput[] {
  const key = submissionKey(submission);
  return childChunks(submission.childIds ?? []).map((ids, index) => ({
    TableName: tableName,
    Item: { [A.PK]: S(key), [A.SK]: S(childChunkSortKey(index)), [A.CHILD_IDS]: { SS: ids } },
    ConditionExpression: 'attribute_not_exists(#pk)',
    ExpressionAttributeNames: { '#pk': A.PK },
  }));
}

/** The partition key of a submission: by task id when known, else by idempotency key. */
export function submissionKey(identity: SubmissionIdentity): string {
  const rest = identity.taskId !== undefined ? identity.taskId : `${SUBMISSION_KEY_ONLY_PREFIX}${identity.idempotencyKey}`;
  return `${SUBMISSION_PARTITION_PREFIX}${identity.provider}#${rest}`;
}

/** The conditional PutItem that records a submission; shared by the apps' client and the tests. */
export function recordSubmissionInput(tableName: string, submission: NewSubmission): PutItemCommandInput {
  const key = submissionKey(submission);
  const { taskId, idempotencyKey } = submission;
  return {
    TableName: tableName,
    Item: {
      [A.PK]: S(key),
      [A.SK]: S(InboxItemKind.SUBMISSION),
      [A.PROVIDER]: S(submission.provider),
      ...(taskId !== undefined ? { [A.TASK_ID]: S(taskId) } : {}),
      ...(idempotencyKey !== undefined ? { [A.IDEMPOTENCY_KEY]: S(idempotencyKey) } : {}),
      // Recorded by id with its key: a key-only record of the same key finds this one.
      ...(taskId !== undefined && idempotencyKey !== undefined ? { [A.JOB_REF]: S(jobRefKey(submission.provider, idempotencyKey)) } : {}),
      [A.SUBMITTED_AT]: N(submission.submittedAt),
      [A.STATE]: S(SubmissionState.AWAITING),
      [A.CHECKS]: N(0),
      [A.EXPIRES_AT]: N(submission.expiresAt),
      ...(submission.deadlineAt !== undefined ? { [A.DEADLINE_AT]: N(submission.deadlineAt) } : {}),
      [A.AWAIT_SHARD]: S(shardOf(key, AwaitingIndex.SHARD_COUNT)),
      [A.AWAIT_DUE_AT]: N(submission.dueAt),
      ...(submission.childIds
        ? {
            [A.SUBMISSION_KIND]: S(SUBMISSION_KIND_BATCH),
            [A.CHILD_COUNT]: N(submission.childIds.length),
            [A.CHILD_CHUNKS]: N(childChunks(submission.childIds).length),
          }
        : {}),
    },
    ConditionExpression: 'attribute_not_exists(#pk)',
    ExpressionAttributeNames: { '#pk': A.PK },
  };
}

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

/** A batch submission's progress, from its item (counters absent until a page added to them). */
function batchProgressOf(item: Record<string, AttributeValue>): BatchProgress {
  const number = (name: string): number => Number(item[name]?.N ?? 0);
  const optional = (name: string): number | undefined => (item[name]?.N !== undefined ? Number(item[name].N) : undefined);
  const expiresAt = optional(A.BATCH_EXPIRES_AT);
  const endedAt = optional(A.BATCH_ENDED_AT);
  return {
    childCount: number(A.CHILD_COUNT),
    childChunks: number(A.CHILD_CHUNKS),
    ...(item[A.BATCH_STATUS]?.S !== undefined ? { status: item[A.BATCH_STATUS].S } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
    ...(item[A.RESULTS_CURSOR]?.S !== undefined ? { cursor: item[A.RESULTS_CURSOR].S } : {}),
    done: item[A.RESULTS_DONE]?.BOOL === true,
    read: number(A.RESULTS_READ),
    counts: Object.fromEntries(BATCH_CHILD_STATES.map((state) => [state, number(childStateAttr(state))])),
    unexpected: number(A.RESULTS_UNEXPECTED),
  };
}
