import { ProviderRuntimeConfig } from '../../../lib/contract';
import { sha256Hex } from '../digest';
import { MalformedDeliveryError } from '../errors';
import { Headers } from '../http';
import { verifyHmac } from '../hmac-signature';
import { instantOfUnixSeconds, parseInstant } from '../instant';
import { parseUnixSeconds } from '../signing-key';
import { Admission, buildAdapter, eventIdFrom, JobObservation, parseJsonObject, ProviderAdapter, utf8Key } from './adapter';

const EVENT_HEADER = 'x-webhook-event';
const TIMESTAMP_HEADER = 'x-webhook-timestamp';
const SCHEME = {
  signatureHeader: 'x-webhook-signature',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: '',
  signedContent: '{timestamp}.{body}',
  timestampHeader: TIMESTAMP_HEADER,
  secretEncoding: 'utf8',
} as const;
const EVENT_NAME = /^[A-Za-z0-9._-]{1,64}$/;
const JOB_OUTCOMES: Readonly<Record<string, JobObservation['status']>> = { 'job.completed': 'COMPLETED', 'job.failed': 'FAILED' };

/**
 * Echonova (seed 001): hex HMAC-SHA256 of `timestamp.body` in `X-Webhook-Signature`. The body
 * carries no delivery id, so the event id is derived from content, as the provider documents:
 * `jobId` + event for `job.*`; `apiKeyId` + event + billing cycle for `spending.*`, where
 * `spending.exhausted` is a level whose repeats are duplicates; any other event is keyed by its
 * body digest (retries reuse the body byte for byte).
 */
export function echonovaAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME),
    admit: admitEchonova,
    keptHeaders: [EVENT_HEADER, TIMESTAMP_HEADER],
    observe: (body, meta) => {
      const status = JOB_OUTCOMES[meta[EVENT_HEADER] ?? ''];
      if (!status) return undefined;
      const event = parseJsonObject(body);
      if (!event) throw new MalformedDeliveryError('body', 'is not a JSON object');
      if (typeof event.jobId !== 'string') throw new MalformedDeliveryError('jobId', 'is not a string');
      // A job without createdAt is ordered by the time its event was signed.
      const signedAt = parseUnixSeconds(meta[TIMESTAMP_HEADER]);
      const createdAt = event.createdAt === undefined ? signedAt !== undefined && instantOfUnixSeconds(signedAt) : parseInstant(event.createdAt);
      if (!createdAt) throw new MalformedDeliveryError('createdAt', 'is not an ISO-8601 date and time with a zone');
      return { jobKey: event.jobId, taskId: event.jobId, status, createdAt, response: body.toString('utf8') };
    },
    reportsJob: (meta) => (meta[EVENT_HEADER] ?? '').startsWith('job.'),
  });
}

function admitEchonova(headers: Headers, body: Buffer): Admission {
  const event = headers[EVENT_HEADER];
  if (!event || !EVENT_NAME.test(event)) return { kind: 'malformed', detail: `header ${EVENT_HEADER} is missing or invalid` };
  const parsed = parseJsonObject(body);
  if (!parsed) return { kind: 'malformed', detail: 'body is not a JSON object' };
  if (event.startsWith('job.')) {
    const job = eventIdFrom(parsed.jobId, 'jobId');
    return job.kind === 'event' ? { kind: 'event', eventId: `${job.eventId}:${event}` } : job;
  }
  if (event.startsWith('spending.')) {
    const key = eventIdFrom(parsed.apiKeyId, 'apiKeyId');
    if (key.kind !== 'event') return key;
    const cycle = billingCycle(parsed, headers);
    if (typeof cycle !== 'string') return cycle;
    return { kind: 'event', eventId: `${key.eventId}:${event}:${cycle}`, repeatable: event === 'spending.exhausted' };
  }
  return { kind: 'event', eventId: `${event}:${sha256Hex(body)}` };
}

/**
 * Longest billing cycle a body may name. The cycle is part of the event id, hence of the inbox key,
 * which DynamoDB caps at 2,048 bytes: with a 512-character apiKeyId and a 64-character event name
 * the key stays under it. A longer cycle is malformed (a 400), never a store error retried forever.
 */
const MAX_CYCLE_LENGTH = 64;

/** The body's billing cycle when it names one, else the UTC month of the signed timestamp. */
function billingCycle(event: Record<string, unknown>, headers: Headers): string | Admission {
  const field = event.billingCycle === undefined || event.billingCycle === null ? 'cycle' : 'billingCycle';
  const named = event.billingCycle ?? event.cycle;
  if (typeof named === 'string' && named !== '') {
    return named.length <= MAX_CYCLE_LENGTH ? named : { kind: 'malformed', detail: `${field} is longer than ${MAX_CYCLE_LENGTH} characters` };
  }
  const seconds = parseUnixSeconds(headers[TIMESTAMP_HEADER]) ?? 0;
  return new Date(seconds * 1000).toISOString().slice(0, 7);
}
