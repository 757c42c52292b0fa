import { parseJsonObject } from '../adapter';
import { echonovaDeliveryHeaders, echonovaFinalJob } from './adapter';
import { commonOutcome, getTask, isPollResult, PollResult, ProviderApi, TaskRequestOptions } from '../provider-api';

const PENDING_STATUSES: readonly string[] = ['queued', 'processing'];

/**
 * Echonova's job API. Echonova's documentation says only "poll the job endpoints" for jobs whose events were
 * missed (a disabled webhook never resends), so this ASSUMES: `GET <job URL>` with
 * `Authorization: Bearer <api key>` returns the job resource as a JSON object with `jobId`,
 * `status` (queued | processing | completed | failed) and `createdAt`, and that resource is the
 * body a `job.*` delivery carries. A completed or failed job is fed into the inbox with the
 * headers its delivery would carry: the `job.completed` or `job.failed` event its signed status
 * names, and the poll time as `x-webhook-timestamp` (Unix seconds), which orders a job whose
 * resource names no `createdAt`. It lands on the same row a delivery would have.
 */
export class EchonovaApi implements ProviderApi {
  constructor(
    private readonly options: TaskRequestOptions,
    private readonly now: () => number = Date.now,
  ) {}

  async fetchTask(jobId: string): Promise<PollResult> {
    const answer = await getTask(jobId, this.options);
    if (isPollResult(answer)) return answer;
    const common = commonOutcome(answer);
    if (common) return common;
    const job = parseJsonObject(answer.body);
    if (!job || typeof job.status !== 'string') return { kind: 'error', detail: 'malformed_response' };
    if (job.jobId !== jobId) return { kind: 'error', detail: 'mismatched_task' };
    const final = echonovaFinalJob(job.status);
    if (final) return { kind: 'final', body: answer.body, headers: echonovaDeliveryHeaders(final, Math.floor(this.now() / 1000)) };
    if (PENDING_STATUSES.includes(job.status)) return { kind: 'pending', status: job.status };
    return { kind: 'error', detail: 'unexpected_status' };
  }
}
