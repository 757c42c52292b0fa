import { ProviderRuntimeConfig } from '../../../lib/contract';
import { MalformedDeliveryError } from '../errors';
import { decodeStandardWebhooksKey, STANDARD_WEBHOOKS_HEADERS, verifyStandardWebhooks } from '../standard-webhooks';
import { parseInstant } from '../instant';
import { Admission, buildAdapter, eventIdFrom, FinalStatus, JobObservation, parseJsonObject, ProviderAdapter, valueAtPath } from './adapter';

const RESUBMISSION_SUFFIX = /-r\d+$/;
const FINAL_STATUSES: readonly string[] = ['COMPLETED', 'FAILED'] satisfies FinalStatus[];

/**
 * Answerline (seed 000): Standard Webhooks signatures; the inbox key is `task.id` from the
 * signed body, because `webhook-id` is not covered by the signature; `"test": true` marks a
 * dashboard test delivery; the job is `task.idempotencyKey` without a trailing `-rN`.
 */
export function answerlineAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: decodeStandardWebhooksKey,
    verify: (headers, body, keys, nowSeconds, tolerance) =>
      verifyStandardWebhooks(headers, body, keys, nowSeconds, tolerance, STANDARD_WEBHOOKS_HEADERS),
    admit: (_headers, body) => admitAnswerlineTask(body),
    keptHeaders: [STANDARD_WEBHOOKS_HEADERS.id, STANDARD_WEBHOOKS_HEADERS.timestamp],
    observe: observeAnswerlineTask,
    // Every delivery is about a task: a non-final status is no result, and no effect either.
    reportsJob: () => true,
  });
}

const MAX_JOB_REF_LENGTH = 512;

/**
 * A delivery's (or a polled task's) admission: its `task.id`, and `task.idempotencyKey` as the
 * job reference through which a submission known only by that key finds its task.
 */
export function admitAnswerlineTask(body: Buffer): Admission {
  const parsed = parseJsonObject(body);
  if (!parsed) return { kind: 'malformed', detail: 'body is not a JSON object' };
  if (parsed.test === true) return { kind: 'test' };
  const admission = eventIdFrom(valueAtPath(parsed, 'task.id'), 'task.id');
  const key = valueAtPath(parsed, 'task.idempotencyKey');
  // A key too long for an index key is not kept as a reference; the row is admitted all the same.
  return admission.kind === 'event' && typeof key === 'string' && key !== '' && key.length <= MAX_JOB_REF_LENGTH
    ? { ...admission, jobRef: key }
    : admission;
}

/** The final result an Answerline delivery (or a polled task, which has the same shape) reports. */
export function observeAnswerlineTask(body: Buffer): JobObservation | undefined {
  const delivery = parseJsonObject(body);
  if (!delivery) throw new MalformedDeliveryError('body', 'is not a JSON object');
  const task = delivery.task as Record<string, unknown> | undefined;
  if (typeof task !== 'object' || task === null) throw new MalformedDeliveryError('task', 'is missing');
  if (typeof task.id !== 'string') throw new MalformedDeliveryError('task.id', 'is not a string');
  if (typeof task.status !== 'string') throw new MalformedDeliveryError('task.status', 'is not a string');
  if (!FINAL_STATUSES.includes(task.status)) return undefined;
  const createdAt = parseInstant(task.createdAt);
  if (!createdAt) throw new MalformedDeliveryError('task.createdAt', 'is not an ISO-8601 date and time with a zone');
  const key = task.idempotencyKey;
  if (key !== null && key !== undefined && typeof key !== 'string') {
    throw new MalformedDeliveryError('task.idempotencyKey', 'is not a string');
  }
  return {
    // A task created without a key is a job of its own.
    jobKey: key ? key.replace(RESUBMISSION_SUFFIX, '') : task.id,
    taskId: task.id,
    status: task.status as FinalStatus,
    createdAt,
    response: JSON.stringify(delivery.response ?? null),
  };
}
