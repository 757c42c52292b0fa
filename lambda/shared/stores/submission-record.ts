/**
 * A submission of the ledger as recorded: its identity and the checks on it, its keys, the
 * conditional PutItems that record it (shared by the apps' client and the reconciler's store),
 * and its item read back. The store (`submission-store.ts`) holds the later steps.
 */
import type { AttributeValue, PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import {
  AwaitingIndex,
  BATCH_CHILD_STATES,
  childStateAttr,
  InboxAttr as A,
  InboxItemKind,
  Limits,
  MESSAGE_BATCH_CUSTOM_ID_PATTERN,
  MESSAGE_BATCH_MAX_REQUESTS,
  PROVIDER_NAME_PATTERN,
  SUBMISSION_KEY_ONLY_PREFIX,
  SUBMISSION_KIND_BATCH,
  SUBMISSION_PARTITION_PREFIX,
  SubmissionState,
} from '../../../lib/contract';
import { shardOf } from '../runtime/digest';
import { N, S } from './dynamo';
import { jobRefKey } from './inbox';

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

/** A batch submission's progress, from its item (counters absent until a page added to them). */
export function batchProgressOf(item: Record<string, AttributeValue>): BatchProgress {
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
