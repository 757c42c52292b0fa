/**
 * The submission ledger's client, for apps that submit tasks to a provider: record every task
 * when you create it, so that the inbox's reconciler can poll for its result if the delivery
 * never arrives (an outage longer than the provider's retries, a disabled webhook).
 *
 * ```ts
 * const ledger = new SubmissionLedger({ client: new DynamoDBClient({}), tableName: process.env.WEBHOOK_INBOX_TABLE! });
 * const task = await answerline.createTask({ ..., idempotencyKey });
 * await ledger.recordSubmission({ provider: 'answerline', taskId: task.id, idempotencyKey });
 * // The create timed out and its retry got 409 RESOURCE_CONFLICT: the task exists, its id is unknown.
 * await ledger.recordSubmission({ provider: 'answerline', idempotencyKey });
 * ```
 *
 * Each call is one conditional PutItem (IAM: `grantRecordSubmission`, `dynamodb:PutItem` on the
 * inbox table for partition keys starting `ledger:`, the submissions' own). Recording
 * the same submission again changes nothing and answers `already_recorded`, so a retried
 * submission step may record again freely.
 *
 * Key-only and by-id records of the same key: each is its own item; nothing is rewritten at
 * record time. The reconciler resolves a key-only record through the `jobRef` index: when the
 * delivery (or a polled result) for that key is in the inbox, the record becomes DELIVERED with
 * its task id filled in; when a record by id with the same key exists, it becomes LINKED to that
 * task id, and the record by id carries on (polled, recovered). So recording by id later, once
 * the id is known, is the way to have a key-only task polled.
 *
 * This module is outside `lib/` on purpose: `lib/` is compiled by jsii and stays free of AWS SDK
 * types. Apps bring their own `@aws-sdk/client-dynamodb`.
 */
import { DynamoDBClient, PutItemCommand, PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import { AnswerlineLifecycle, Defaults, Env, MessageBatchesPolling } from '../lib/contract';
import { isConditionalCheckFailed } from '../lambda/shared/runtime/errors';
import {
  batchChildProblems,
  NewSubmission,
  recordBatchChildrenInputs,
  recordSubmissionInput,
  SubmissionIdentity,
  submissionKey,
  submissionProblems,
} from '../lambda/shared/stores/submission-store';

export interface SubmissionLedgerOptions {
  readonly client: DynamoDBClient;
  /** The inbox table (the construct's `inboxTable.tableName`). */
  readonly tableName: string;
  /**
   * Seconds after submission when each provider's task is first checked, by provider name: the
   * horizons the inbox's reconciler is configured with. A shorter one makes the reconciler
   * postpone the check to its own horizon; a longer one delays recovery.
   * @default - `defaultHorizonSeconds` for every provider
   */
  readonly horizonSeconds?: Readonly<Record<string, number>>;
  /** @default AnswerlineLifecycle.HORIZON_SECONDS (17,405 s) */
  readonly defaultHorizonSeconds?: number;
  /** How long a record is kept (its TTL), in seconds; longer than any horizon. @default 30 days */
  readonly retentionSeconds?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

export interface SubmissionRecord {
  /** The provider's name in the inbox (its path segment, `/hooks/<provider>`). */
  readonly provider: string;
  /** The provider's task (job) id; omit it only when it is unknown. */
  readonly taskId?: string;
  /** The idempotency key the task was created with; required when the task id is unknown. */
  readonly idempotencyKey?: string;
  /** When the task was submitted. @default now */
  readonly submittedAt?: Date | number;
}

export interface BatchRecord {
  /** The provider's name in the inbox (a `messageBatches` provider). */
  readonly provider: string;
  /** The provider's batch id. */
  readonly batchId: string;
  /** The `custom_id` of every request of the batch (1 to 64 letters, digits, `_`, `-`; each once). */
  readonly childIds: readonly string[];
  /** When the batch was created. @default now */
  readonly submittedAt?: Date | number;
}

export interface RecordedSubmission {
  /** `already_recorded`: an earlier call recorded it; nothing was changed. */
  readonly outcome: 'recorded' | 'already_recorded';
  /** The record's partition key in the inbox table (`ledger:<provider>#<taskId>` or `ledger:<provider>#key:<idempotencyKey>`). */
  readonly key: string;
  /** When the reconciler first checks it, epoch milliseconds; absent when it was recorded before. */
  readonly dueAt?: number;
}

/** A record that cannot be stored: the message names every problem. */
export class InvalidSubmissionError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid submission: ${problems.join('; ')}`);
    this.name = 'InvalidSubmissionError';
  }
}

export class SubmissionLedger {
  /**
   * A ledger configured from the environment: `WEBHOOK_INBOX_TABLE` and, optionally,
   * `WEBHOOK_INBOX_SUBMISSION_HORIZONS` (JSON object: provider name → seconds).
   */
  static fromEnvironment(client: DynamoDBClient, env: Record<string, string | undefined> = process.env): SubmissionLedger {
    const tableName = env[Env.INBOX_TABLE];
    if (!tableName) throw new Error(`environment variable ${Env.INBOX_TABLE} is not set`);
    const raw = env[Env.SUBMISSION_HORIZONS];
    let horizonSeconds: Record<string, number> | undefined;
    if (raw) {
      try {
        horizonSeconds = JSON.parse(raw) as Record<string, number>;
      } catch {
        throw new Error(`environment variable ${Env.SUBMISSION_HORIZONS} is not valid JSON`);
      }
    }
    return new SubmissionLedger({ client, tableName, ...(horizonSeconds ? { horizonSeconds } : {}) });
  }

  private readonly now: () => number;

  constructor(private readonly options: SubmissionLedgerOptions) {
    this.now = options.now ?? Date.now;
    const horizons = [options.defaultHorizonSeconds, ...Object.values(options.horizonSeconds ?? {})];
    if (horizons.some((value) => value !== undefined && !(Number.isFinite(value) && value >= 0))) {
      throw new Error('horizon seconds must be non-negative numbers');
    }
  }

  /** Records one submitted task; idempotent. Throws InvalidSubmissionError for a record that cannot be stored. */
  async recordSubmission(record: SubmissionRecord): Promise<RecordedSubmission> {
    const identity = { provider: record.provider, taskId: record.taskId, idempotencyKey: record.idempotencyKey };
    const horizon = this.options.horizonSeconds?.[record.provider] ?? this.options.defaultHorizonSeconds ?? AnswerlineLifecycle.HORIZON_SECONDS;
    return this.record(this.prepare(identity, record.submittedAt, horizon, submissionProblems(record)));
  }

  /**
   * Records one submitted batch with the custom ids of its requests; idempotent. The ids go into
   * items of their own beside the batch's (2,000 per item: a batch of 100,000 requests is 50
   * PutItems and one more), written before it, so the reconciler never sees a batch without its
   * children. Throws InvalidSubmissionError for a record that cannot be stored.
   */
  async recordBatch(record: BatchRecord): Promise<RecordedSubmission> {
    const identity = { provider: record.provider, taskId: record.batchId };
    const horizon = this.options.horizonSeconds?.[record.provider] ?? MessageBatchesPolling.horizonSeconds;
    const problems = [...submissionProblems(identity), ...batchChildProblems(record.childIds)];
    const submission = this.prepare(identity, record.submittedAt, horizon, problems, record.childIds);
    for (const input of recordBatchChildrenInputs(this.options.tableName, submission)) await this.put(input);
    return this.record(submission);
  }

  /** The submission to record, or InvalidSubmissionError naming every problem. */
  private prepare(
    identity: SubmissionIdentity,
    when: Date | number | undefined,
    horizon: number,
    problems: string[],
    childIds?: readonly string[],
  ): NewSubmission {
    const submittedAt = when === undefined ? this.now() : new Date(when).getTime();
    if (!Number.isFinite(submittedAt)) problems.push('submittedAt is not a valid time');
    if (problems.length > 0) throw new InvalidSubmissionError(problems);
    const retention = this.options.retentionSeconds ?? Defaults.RETENTION_DAYS * 86_400;
    return {
      ...identity,
      submittedAt,
      dueAt: submittedAt + horizon * 1000,
      expiresAt: Math.floor(submittedAt / 1000) + Math.max(retention, horizon + 86_400),
      ...(childIds ? { childIds } : {}),
    };
  }

  private async record(submission: NewSubmission): Promise<RecordedSubmission> {
    const key = submissionKey(submission);
    const recorded = await this.put(recordSubmissionInput(this.options.tableName, submission));
    return recorded ? { outcome: 'recorded', key, dueAt: submission.dueAt } : { outcome: 'already_recorded', key };
  }

  /** One conditional PutItem; false when the item was recorded before. */
  private async put(input: PutItemCommandInput): Promise<boolean> {
    try {
      await this.options.client.send(new PutItemCommand(input));
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
