import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { MalformedDeliveryError } from '../../runtime/errors';
import { parseInstant } from '../../runtime/instant';
import { decodeStandardWebhooksKey, STANDARD_WEBHOOKS_HEADERS, verifyStandardWebhooks } from '../../signatures/standard-webhooks';
import { Admission, buildAdapter, FinalStatus, idProblem, JobObservation, keyFieldProblem, parseJsonObject, ProviderAdapter } from '../adapter';

/** A resubmission's suffix: `-r` and a positive number of at most three digits without a leading zero (`report-r2024` has none). */
const RESUBMISSION_SUFFIX = /-r[1-9]\d{0,2}$/;
/**
 * The job of a task created without a key is `~task:<task id>`. A key is never that: one that
 * starts with `~` gets one more `~` in front.
 */
const KEYLESS_JOB_PREFIX = '~task:';
const ESCAPE = '~';
const FINAL_STATUSES: readonly string[] = ['COMPLETED', 'FAILED'] satisfies FinalStatus[];

/**
 * Answerline (docs/providers/answerline.md): Standard Webhooks signatures; the inbox key is `task.id` from the
 * signed body, because `webhook-id` is not covered by the signature; `"test": true` marks a
 * dashboard test delivery; a task that is not final (only COMPLETED and FAILED are) is
 * acknowledged and not stored; the job is `task.idempotencyKey` without a resubmission suffix.
 */
export function answerlineAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: decodeStandardWebhooksKey,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyStandardWebhooks(headers, body, keys, nowSeconds, tolerance, STANDARD_WEBHOOKS_HEADERS),
    admit: (_headers, body) => admitAnswerlineTask(body),
    keptHeaders: [STANDARD_WEBHOOKS_HEADERS.id, STANDARD_WEBHOOKS_HEADERS.timestamp],
    describes: { resourcePath: 'task.id' },
    observe: observeAnswerlineTask,
    // Every row is about a task (one stored before non-final tasks were refused has no result, and no effect).
    reportsJob: () => true,
  });
}

/**
 * What an Answerline body (a delivery, or a polled task: the same shape) says, read by one set
 * of rules for admission and for processing, so that whatever the edge admits, processing can
 * read. `result` is set for a final task.
 */
type TaskReading =
  | { readonly kind: 'test' }
  | { readonly kind: 'malformed'; readonly field: string; readonly problem: string }
  | { readonly kind: 'task'; readonly id: string; readonly idempotencyKey?: string; readonly result?: JobObservation };

function readAnswerlineTask(body: Buffer): TaskReading {
  const delivery = parseJsonObject(body);
  if (!delivery) return { kind: 'malformed', field: 'body', problem: 'is not a JSON object' };
  if (delivery.test === true) return { kind: 'test' };
  const task = typeof delivery.task === 'object' && delivery.task !== null ? (delivery.task as Record<string, unknown>) : {};
  const malformed = (field: string, problem: string): TaskReading => ({ kind: 'malformed', field: `task.${field}`, problem });
  const problem = idProblem(task.id);
  if (problem) return malformed('id', problem);
  const id = task.id as string;
  if (typeof task.status !== 'string') return malformed('status', 'is missing or not a string');
  // null or absent: a task created without a key.
  const key: unknown = task.idempotencyKey ?? undefined;
  const keyProblem = key === undefined ? undefined : idempotencyKeyProblem(key);
  if (keyProblem) return malformed('idempotencyKey', keyProblem);
  const idempotencyKey = key as string | undefined;
  if (!FINAL_STATUSES.includes(task.status)) return { kind: 'task', id, idempotencyKey };
  const createdAt = parseInstant(task.createdAt);
  if (!createdAt) return malformed('createdAt', 'is not an ISO-8601 date and time with a zone');
  return {
    kind: 'task',
    id,
    idempotencyKey,
    result: {
      jobKey: jobKeyOf(idempotencyKey, id),
      taskId: id,
      status: task.status as FinalStatus,
      createdAt,
      response: JSON.stringify(delivery.response ?? null),
    },
  };
}

/**
 * The longest idempotency key admitted, in UTF-8 bytes. Its base names the job: the results table
 * hashes a long one in its key and keeps it whole beside the result, so it must leave room in a
 * 400 KB item; only a key of at most `MAX_ID_BYTES` is also kept as the row's job reference.
 */
const MAX_IDEMPOTENCY_KEY_BYTES = 4096;

/** What is wrong with an idempotency key, whose base names the job. */
function idempotencyKeyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string') return 'is not a string';
  if (key === '') return 'is empty';
  if (key.replace(RESUBMISSION_SUFFIX, '') === '') return 'is only a resubmission suffix';
  return keyFieldProblem(key, MAX_IDEMPOTENCY_KEY_BYTES);
}

/** The job reference a row keeps (an index key): the idempotency key, when it fits one. */
function jobRefOf(idempotencyKey: string | undefined): { jobRef?: string } {
  return idempotencyKey !== undefined && idProblem(idempotencyKey) === undefined ? { jobRef: idempotencyKey } : {};
}

/** The logical job: the key without its resubmission suffix, escaped; a task created without a key is a job of its own. */
function jobKeyOf(idempotencyKey: string | undefined, taskId: string): string {
  if (idempotencyKey === undefined) return `${KEYLESS_JOB_PREFIX}${taskId}`;
  const base = idempotencyKey.replace(RESUBMISSION_SUFFIX, '');
  return base.startsWith(ESCAPE) ? `${ESCAPE}${base}` : base;
}

/**
 * A delivery's (or a polled task's) admission: its `task.id`, and `task.idempotencyKey` as the
 * job reference through which a submission known only by that key finds its task.
 */
export function admitAnswerlineTask(body: Buffer): Admission {
  const reading = readAnswerlineTask(body);
  switch (reading.kind) {
    case 'test':
      return reading;
    case 'malformed':
      return { kind: 'malformed', detail: `${reading.field} ${reading.problem}` };
    case 'task':
      if (!reading.result) return { kind: 'not_final' };
      return { kind: 'event', eventId: reading.id, ...jobRefOf(reading.idempotencyKey) };
  }
}

/** The final result an Answerline delivery (or a polled task, which has the same shape) reports. */
export function observeAnswerlineTask(body: Buffer): JobObservation | undefined {
  const reading = readAnswerlineTask(body);
  if (reading.kind === 'malformed') throw new MalformedDeliveryError(reading.field, reading.problem);
  return reading.kind === 'task' ? reading.result : undefined;
}
