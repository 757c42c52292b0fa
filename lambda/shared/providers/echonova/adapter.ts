import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { MalformedDeliveryError } from '../../runtime/errors';
import { Headers } from '../../runtime/http';
import { verifyHmac } from '../../signatures/hmac';
import { instantOfUnixSeconds, parseInstant } from '../../runtime/instant';
import { parseUnixSeconds } from '../../signatures/signing-key';
import {
  Admission,
  buildAdapter,
  compositeEventId,
  FinalStatus,
  idProblem,
  JobObservation,
  keyFieldProblem,
  parseJsonObject,
  ProviderAdapter,
  utf8Key,
} from '../adapter';

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
const JOB_EVENT_PREFIX = 'job.';
const SPENDING_EVENT_PREFIX = 'spending.';
/** What a job resource's final `status` means: the job's outcome, and the event Echonova sends for it. */
interface FinalJob {
  readonly status: FinalStatus;
  readonly event: string;
}
const FINAL_JOB_STATUSES: Readonly<Record<string, FinalJob>> = {
  completed: { status: 'COMPLETED', event: 'job.completed' },
  failed: { status: 'FAILED', event: 'job.failed' },
};

/** The final job a resource's `status` names; undefined while it is not final (or not a status). */
export function echonovaFinalJob(status: unknown): FinalJob | undefined {
  return typeof status === 'string' && Object.hasOwn(FINAL_JOB_STATUSES, status) ? FINAL_JOB_STATUSES[status] : undefined;
}

/** The headers the adapter reads of a delivery of `job`, signed at `signedAtSeconds` (a polled job's row gets them too). */
export function echonovaDeliveryHeaders(job: FinalJob, signedAtSeconds: number): Record<string, string> {
  return { [EVENT_HEADER]: job.event, [TIMESTAMP_HEADER]: String(signedAtSeconds) };
}

/** The events of a job's end, `job.completed` and `job.failed`. */
export const ECHONOVA_FINAL_JOB_EVENTS: readonly string[] = Object.values(FINAL_JOB_STATUSES).map((job) => job.event);
const JOB_ID_SUFFIX = ':job';

/**
 * The event id of a job's final event. A job finishes once, so it has one, derived from signed
 * content only: a second final event of the job with another body is an altered copy.
 */
export function echonovaJobEventId(jobId: string): string {
  return compositeEventId(jobId, 'job');
}

/** The job id behind an event id of `echonovaJobEventId`; undefined for any other id. */
export function echonovaJobIdOf(eventId: string): string | undefined {
  if (!eventId.endsWith(JOB_ID_SUFFIX)) return undefined;
  const [field, ...rest] = eventId.slice(0, -JOB_ID_SUFFIX.length).split(':');
  return rest.length === 0 ? decodeURIComponent(field) : undefined;
}

/** The billing cycle is a field of the event id: with a 512-byte apiKeyId and a 64-character event name the escaped id stays under the key limit. */
const MAX_CYCLE_BYTES = 64;

/**
 * Echonova: hex HMAC-SHA256 of `timestamp.body` in `X-Webhook-Signature`; the
 * `X-Webhook-Event` header is not signed. The body carries no delivery id, so the event id is
 * derived from content, as the provider documents:
 * - a job's final event (the body is the job resource: `jobId`, `status` completed or failed,
 *   `createdAt`, the outcome) is keyed by `jobId` alone, and its outcome is the signed `status`;
 *   an event header that disagrees with it is an anomaly, quarantined under the job's key;
 * - `spending.*` by `apiKeyId`, event and the body's billing cycle, or the body's digest when it
 *   names none (a retry is byte-identical, but signed anew); `spending.exhausted` is a level
 *   whose repeats are duplicates;
 * - any other event by its name and body digest (retries reuse the body byte for byte).
 * Composite ids escape their fields (`compositeEventId`).
 */
export function echonovaAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME),
    admit: admitEchonova,
    keptHeaders: [EVENT_HEADER, TIMESTAMP_HEADER],
    describes: { resourcePath: 'jobId' },
    observe: observeEchonova,
    reportsJob: (meta) => (meta[EVENT_HEADER] ?? '').startsWith(JOB_EVENT_PREFIX),
  });
}

/** What a body says about a job, read by one set of rules for admission and for processing. */
type JobReading =
  /** The body is no job resource (it has no `jobId`). */
  | { readonly kind: 'none' }
  | { readonly kind: 'malformed'; readonly field: string; readonly problem: string }
  /** `final` is set when the signed `status` is completed or failed. */
  | { readonly kind: 'job'; readonly jobId: string; readonly final?: FinalJob; readonly createdAt?: string };

function readJob(event: Record<string, unknown>): JobReading {
  if (event.jobId === undefined) return { kind: 'none' };
  const jobIdProblem = idProblem(event.jobId);
  if (jobIdProblem) return { kind: 'malformed', field: 'jobId', problem: jobIdProblem };
  const createdAt = event.createdAt === undefined ? undefined : parseInstant(event.createdAt);
  if (event.createdAt !== undefined && !createdAt) return { kind: 'malformed', field: 'createdAt', problem: 'is not an ISO-8601 date and time with a zone' };
  return { kind: 'job', jobId: event.jobId as string, final: echonovaFinalJob(event.status), createdAt };
}

function admitEchonova(headers: Headers, body: Buffer): Admission {
  const event = headers[EVENT_HEADER];
  if (!event || !EVENT_NAME.test(event)) return { kind: 'malformed', detail: `header ${EVENT_HEADER} is missing or invalid` };
  const parsed = parseJsonObject(body);
  if (!parsed) return { kind: 'malformed', detail: 'body is not a JSON object' };
  const job = readJob(parsed);
  if (job.kind === 'malformed') return { kind: 'malformed', detail: `${job.field} ${job.problem}` };
  const jobEvent = event.startsWith(JOB_EVENT_PREFIX);
  if (job.kind === 'none') {
    if (jobEvent) return { kind: 'malformed', detail: 'jobId is missing or not a string' };
  } else if (jobEvent || job.final) {
    const eventId = echonovaJobEventId(job.jobId);
    // The outcome is the signed status: an unsigned header naming another one forges nothing.
    if (job.final?.event === event) return { kind: 'event', eventId };
    // A job's progress (`job.started` of a job still running): no result yet, nothing to keep.
    if (!job.final && !ECHONOVA_FINAL_JOB_EVENTS.includes(event)) return { kind: 'not_final' };
    return { kind: 'anomaly', eventId, detail: `header ${EVENT_HEADER} does not match the signed job status` };
  }
  if (event.startsWith(SPENDING_EVENT_PREFIX)) return admitSpending(event, parsed, body);
  return { kind: 'event', eventId: compositeEventId(event, sha256Hex(body)) };
}

/** `apiKeyId` + event + the body's billing cycle; without one, the body's digest (each attempt is signed anew, with the same body). */
function admitSpending(event: string, parsed: Record<string, unknown>, body: Buffer): Admission {
  const keyProblem = idProblem(parsed.apiKeyId);
  if (keyProblem) return { kind: 'malformed', detail: `apiKeyId ${keyProblem}` };
  const apiKeyId = parsed.apiKeyId as string;
  const repeatable = event === 'spending.exhausted';
  const field = parsed.billingCycle === undefined || parsed.billingCycle === null ? 'cycle' : 'billingCycle';
  const cycle = parsed[field];
  if (typeof cycle !== 'string' || cycle === '') return { kind: 'event', eventId: compositeEventId(apiKeyId, event, 'sha256', sha256Hex(body)), repeatable };
  const cycleProblem = keyFieldProblem(cycle, MAX_CYCLE_BYTES);
  if (cycleProblem) return { kind: 'malformed', detail: `${field} ${cycleProblem}` };
  return { kind: 'event', eventId: compositeEventId(apiKeyId, event, cycle), repeatable };
}

/**
 * The result a stored `job.*` row reports. The signed `status` decides; a row stored before the
 * edge required it (its body names no final status) is read by its event header, as it was
 * admitted. A job without `createdAt` is ordered by when its event was signed (a polled job: when
 * it was polled).
 */
function observeEchonova(body: Buffer, meta: Readonly<Record<string, string>>): JobObservation | undefined {
  const event = meta[EVENT_HEADER] ?? '';
  if (!event.startsWith(JOB_EVENT_PREFIX)) return undefined;
  const parsed = parseJsonObject(body);
  if (!parsed) throw new MalformedDeliveryError('body', 'is not a JSON object');
  const job = readJob(parsed);
  if (job.kind === 'malformed') throw new MalformedDeliveryError(job.field, job.problem);
  if (job.kind === 'none') throw new MalformedDeliveryError('jobId', 'is missing or not a string');
  const final = job.final ?? Object.values(FINAL_JOB_STATUSES).find((outcome) => outcome.event === event);
  if (!final) return undefined;
  const signedAt = parseUnixSeconds(meta[TIMESTAMP_HEADER]);
  const createdAt = job.createdAt ?? (signedAt === undefined ? undefined : instantOfUnixSeconds(signedAt));
  if (!createdAt) throw new MalformedDeliveryError('createdAt', 'is missing, and no signed timestamp stands in for it');
  return { jobKey: job.jobId, taskId: job.jobId, status: final.status, createdAt, response: body.toString('utf8') };
}
