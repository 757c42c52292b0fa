import { ProviderRuntimeConfig } from '../../../lib/contract';
import { MalformedDeliveryError } from '../errors';
import { Headers } from '../http';
import { SecretVersion } from '../secrets';
import { SigningKey } from '../signing-key';
import { decodeStandardWebhooksSecret, STANDARD_WEBHOOKS_HEADERS, verifyStandardWebhooks } from '../standard-webhooks';
import { Admission, FinalStatus, JobObservation, normalizeInstant, parseJsonObject, pickHeaders, ProviderAdapter } from './adapter';

const KEPT_HEADERS = ['webhook-id', 'webhook-timestamp', 'content-type', 'content-length', 'user-agent'];
const RESUBMISSION_SUFFIX = /-r\d+$/;
const FINAL_STATUSES: readonly string[] = ['COMPLETED', 'FAILED'] satisfies FinalStatus[];

/**
 * Answerline (seed 000): Standard Webhooks signatures; the inbox key is `task.id` from the
 * signed body, because `webhook-id` is not covered by the signature; `"test": true` marks a
 * dashboard test delivery; the job is `task.idempotencyKey` without a trailing `-rN`.
 */
export function answerlineAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  const tolerance = { pastSeconds: config.tolerancePastSeconds, futureSeconds: config.toleranceFutureSeconds };
  return {
    name: config.name,
    secretId: config.secretId,
    signingKeys: (versions: readonly SecretVersion[]): SigningKey[] =>
      versions.map((version) => ({ stage: version.stage, bytes: decodeStandardWebhooksSecret(version.value) })),
    verify: (headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number) =>
      verifyStandardWebhooks(headers, body, keys, nowSeconds, tolerance, STANDARD_WEBHOOKS_HEADERS),
    admit: (_headers: Headers, body: Buffer): Admission => {
      const delivery = parseJsonObject(body);
      if (!delivery) return { kind: 'malformed', detail: 'body is not a JSON object' };
      if (delivery.test === true) return { kind: 'test' };
      const taskId = (delivery.task as { id?: unknown } | undefined)?.id;
      if (typeof taskId !== 'string' || taskId === '' || taskId.length > 512) {
        return { kind: 'malformed', detail: 'task.id is missing or not a string' };
      }
      return { kind: 'event', eventId: taskId };
    },
    metadata: (headers: Headers) => pickHeaders(headers, KEPT_HEADERS),
    observe: (body: Buffer): JobObservation | undefined => {
      const delivery = parseJsonObject(body);
      if (!delivery) throw new MalformedDeliveryError('body', 'is not a JSON object');
      const task = delivery.task as Record<string, unknown> | undefined;
      if (typeof task !== 'object' || task === null) throw new MalformedDeliveryError('task', 'is missing');
      if (typeof task.id !== 'string') throw new MalformedDeliveryError('task.id', 'is not a string');
      if (typeof task.status !== 'string') throw new MalformedDeliveryError('task.status', 'is not a string');
      if (!FINAL_STATUSES.includes(task.status)) return undefined;
      const createdAt = normalizeInstant(task.createdAt);
      if (!createdAt) throw new MalformedDeliveryError('task.createdAt', 'is not a timestamp');
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
    },
  };
}
