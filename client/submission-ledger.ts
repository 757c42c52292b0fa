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
 * // A resource that is gone after a while (an OpenAI background response with store=false): give its deadline.
 * await ledger.recordSubmission({ provider: 'openai', taskId: response.id, deadline: Date.now() + 10 * 60_000 });
 * ```
 *
 * Deadlines: a submission with one (its own `deadline`, or its provider's `deadlineSeconds`) is
 * first due at the earlier of its horizon and `deadlineWarningSeconds` before its deadline, so the
 * reconciler looks for its result before the resource disappears, counts it near its deadline
 * while it is still unread (an alarm), and once the deadline has passed unread settles it
 * UNAVAILABLE with a `ResourceUnavailable` event for an operator to decide.
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
import { AnswerlineLifecycle, Defaults, Env, MESSAGE_BATCH_RESULTS_RETENTION_SECONDS, MessageBatchesPolling } from '../lib/contract';
import { isConditionalCheckFailed } from '../lambda/shared/runtime/errors';
import {
  batchChildProblems,
  NewSubmission,
  recordBatchChildrenInputs,
  recordSubmissionInput,
  SubmissionIdentity,
  submissionKey,
  submissionProblems,
} from '../lambda/shared/stores/submission-record';

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
  /**
   * Seconds after submission when each provider's resource is gone, by provider name (e.g.
   * `ProviderDeadlines.OPENAI_UNSTORED_BACKGROUND_RESPONSE_SECONDS`); a record's own `deadline` wins.
   * @default - no deadline
   */
  readonly deadlineSeconds?: Readonly<Record<string, number>>;
  /**
   * How long before its deadline a submission is first due: the inbox's `deadlineWarning`.
   * @default Defaults.DEADLINE_WARNING_SECONDS (600 s)
   */
  readonly deadlineWarningSeconds?: number;
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
  /** When its provider resource is gone (epoch ms or a Date), later than `submittedAt`. @default - the provider's `deadlineSeconds` after submission, or none */
  readonly deadline?: Date | number;
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
  /** Its deadline as stored, epoch milliseconds; absent without one, or when it was recorded before. */
  readonly deadlineAt?: number;
}

/** When a record was submitted and when its resource is gone, as the app gives them (or its kind implies). */
type SubmissionTiming = Pick<SubmissionRecord, 'submittedAt' | 'deadline'> & { readonly defaultDeadlineSeconds?: number };

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
    const horizonSeconds = secondsByProvider(env, Env.SUBMISSION_HORIZONS);
    const deadlineSeconds = secondsByProvider(env, Env.SUBMISSION_DEADLINES);
    const warning = env[Env.DEADLINE_WARNING_SECONDS];
    return new SubmissionLedger({
      client,
      tableName,
      ...(horizonSeconds ? { horizonSeconds } : {}),
      ...(deadlineSeconds ? { deadlineSeconds } : {}),
      ...(warning ? { deadlineWarningSeconds: Number(warning) } : {}),
    });
  }

  private readonly now: () => number;

  constructor(private readonly options: SubmissionLedgerOptions) {
    this.now = options.now ?? Date.now;
    const horizons = [options.defaultHorizonSeconds, ...Object.values(options.horizonSeconds ?? {})];
    if (horizons.some((value) => value !== undefined && !(Number.isFinite(value) && value >= 0))) {
      throw new Error('horizon seconds must be non-negative numbers');
    }
    const deadlines = [options.deadlineWarningSeconds, ...Object.values(options.deadlineSeconds ?? {})];
    if (deadlines.some((value) => value !== undefined && !(Number.isFinite(value) && value > 0))) {
      throw new Error('deadlineSeconds and deadlineWarningSeconds must be positive numbers');
    }
  }

  /** Records one submitted task; idempotent. Throws InvalidSubmissionError for a record that cannot be stored. */
  async recordSubmission(record: SubmissionRecord): Promise<RecordedSubmission> {
    const identity = { provider: record.provider, taskId: record.taskId, idempotencyKey: record.idempotencyKey };
    const horizon = this.options.horizonSeconds?.[record.provider] ?? this.options.defaultHorizonSeconds ?? AnswerlineLifecycle.HORIZON_SECONDS;
    return this.record(this.prepare(identity, record, horizon, submissionProblems(record)));
  }

  /**
   * Records one submitted batch with the custom ids of its requests; idempotent. The ids go into
   * items of their own beside the batch's (2,000 per item: a batch of 100,000 requests is 50
   * PutItems and one more), written before it, so the reconciler never sees a batch without its
   * children. Its deadline is when its results stop being readable: the provider's results
   * retention after submission (29 days; the provider's `deadlineSeconds` when one is given), so
   * that a batch still unread near it is alarmed on, and settled UNAVAILABLE after it. Throws
   * InvalidSubmissionError for a record that cannot be stored.
   */
  async recordBatch(record: BatchRecord): Promise<RecordedSubmission> {
    const identity = { provider: record.provider, taskId: record.batchId };
    const horizon = this.options.horizonSeconds?.[record.provider] ?? MessageBatchesPolling.horizonSeconds;
    const problems = [...submissionProblems(identity), ...batchChildProblems(record.childIds)];
    // Its results stay readable for the provider's retention after creation: that is its deadline.
    const timing = { submittedAt: record.submittedAt, defaultDeadlineSeconds: MESSAGE_BATCH_RESULTS_RETENTION_SECONDS };
    const submission = this.prepare(identity, timing, horizon, problems, record.childIds);
    for (const input of recordBatchChildrenInputs(this.options.tableName, submission)) await this.put(input);
    return this.record(submission);
  }

  /** The submission to record, or InvalidSubmissionError naming every problem. */
  private prepare(identity: SubmissionIdentity, timing: SubmissionTiming, horizon: number, problems: string[], childIds?: readonly string[]): NewSubmission {
    const submittedAt = timing.submittedAt === undefined ? this.now() : new Date(timing.submittedAt).getTime();
    if (!Number.isFinite(submittedAt)) problems.push('submittedAt is not a valid time');
    const deadlineAt = this.deadlineOf(identity.provider, timing, submittedAt);
    if (deadlineAt !== undefined && !Number.isFinite(deadlineAt)) problems.push('deadline is not a valid time');
    else if (deadlineAt !== undefined && deadlineAt <= submittedAt) problems.push('deadline must be later than submittedAt');
    if (problems.length > 0) throw new InvalidSubmissionError(problems);
    const retention = this.options.retentionSeconds ?? Defaults.RETENTION_DAYS * 86_400;
    const warningMs = (this.options.deadlineWarningSeconds ?? Defaults.DEADLINE_WARNING_SECONDS) * 1000;
    // Kept past its deadline too, so that the reconciler can settle it there.
    const keptSeconds = Math.max(retention, horizon + 86_400, deadlineAt === undefined ? 0 : Math.ceil((deadlineAt - submittedAt) / 1000) + 86_400);
    return {
      ...identity,
      submittedAt,
      // Looked for before its resource disappears: at its horizon, or a warning margin before its deadline.
      dueAt: Math.min(submittedAt + horizon * 1000, deadlineAt === undefined ? Infinity : deadlineAt - warningMs),
      expiresAt: Math.floor(submittedAt / 1000) + keptSeconds,
      ...(deadlineAt !== undefined ? { deadlineAt } : {}),
      ...(childIds ? { childIds } : {}),
    };
  }

  private async record(submission: NewSubmission): Promise<RecordedSubmission> {
    const key = submissionKey(submission);
    const recorded = await this.put(recordSubmissionInput(this.options.tableName, submission));
    if (!recorded) return { outcome: 'already_recorded', key };
    const { dueAt, deadlineAt } = submission;
    return { outcome: 'recorded', key, dueAt, ...(deadlineAt !== undefined ? { deadlineAt } : {}) };
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

  /** The record's own deadline, else its provider's (or its kind's) default after submission; undefined without any. */
  private deadlineOf(provider: string, timing: SubmissionTiming, submittedAt: number): number | undefined {
    if (timing.deadline !== undefined) return new Date(timing.deadline).getTime();
    const seconds = this.options.deadlineSeconds?.[provider] ?? timing.defaultDeadlineSeconds;
    return seconds === undefined ? undefined : submittedAt + seconds * 1000;
  }
}

/** A JSON object of provider name → seconds from an environment variable; undefined when unset. */
function secondsByProvider(env: Record<string, string | undefined>, name: string): Record<string, number> | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as Record<string, number>;
  } catch {
    throw new Error(`environment variable ${name} is not valid JSON`);
  }
}
