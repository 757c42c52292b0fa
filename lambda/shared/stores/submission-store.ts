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
import { jobRefKey } from './inbox-store';

export { splitKey } from './inbox-store';

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
}

/** A submission as stored. */
export interface Submission extends SubmissionIdentity {
  readonly key: string;
  readonly submittedAt: number;
  readonly state: SubmissionStateName;
  readonly checks: number;
  readonly lastCheck?: string;
  readonly expiresAt: number;
  readonly dueAt?: number;
  /** Absent on items recorded without one (and on every item recorded before deadlines existed). */
  readonly deadlineAt?: number;
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
    const entries = await queryShardedIndex(this.client, awaitingIndexOf(this.tableName), now, limit, true);
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
      expiresAt: Number(item[A.EXPIRES_AT].N),
      ...(item[A.AWAIT_DUE_AT]?.N !== undefined ? { dueAt: Number(item[A.AWAIT_DUE_AT].N) } : {}),
      ...(item[A.DEADLINE_AT]?.N !== undefined ? { deadlineAt: Number(item[A.DEADLINE_AT].N) } : {}),
    };
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
      if (sk === InboxItemKind.DELIVERY) return [{ key: item[A.PK].S!, kind: 'delivery' }];
      if (sk === InboxItemKind.SUBMISSION) return [{ key: item[A.PK].S!, kind: 'submission' }];
      return [];
    });
  }

  /** One UpdateItem conditioned on the submission still AWAITING. */
  private async updateAwaiting(
    key: string,
    expression: { update: string; names: Record<string, string>; values: Record<string, AttributeValue> },
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(key),
          UpdateExpression: expression.update,
          ConditionExpression: '#state = :awaiting',
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
