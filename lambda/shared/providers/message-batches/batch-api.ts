import { BATCH_CHILD_STATES, MESSAGE_BATCH_ENDED } from '../../../../lib/contract';
import { parseJsonObject } from '../adapter';
import { commonOutcome, getTask, isPollResult, PollResult, TaskRequestOptions } from '../provider-api';

/** A batch as its provider describes it. */
export interface BatchStatus {
  /** `in_progress`, `canceling` or `ended`. */
  readonly processingStatus: string;
  /** When the provider ends the batch if it is not done by then (`expires_at`), epoch ms. */
  readonly expiresAt?: number;
  /** When it ended (`ended_at`), epoch ms. */
  readonly endedAt?: number;
  /** The provider's batch object as served. */
  readonly raw: Record<string, unknown>;
}

/** What polling a batch found: its status, or why there is none. */
export type BatchPoll = { readonly kind: 'batch'; readonly batch: BatchStatus } | Exclude<PollResult, { kind: 'final' } | { kind: 'pending' }>;

/** One request's result, as the results list gives it. */
export interface BatchResult {
  readonly customId: string;
  /** Its terminal state: the result's `type`. */
  readonly state: string;
  /** The result object as listed (`{ "type": …, "message" | "error": … }`). */
  readonly result: unknown;
}

/** One page of a batch's results; `nextCursor` absent on the last page. */
export type ResultsPage =
  | { readonly kind: 'page'; readonly results: readonly BatchResult[]; readonly nextCursor?: string }
  | Exclude<PollResult, { kind: 'final' } | { kind: 'pending' }>;

/** A batch API, as far as the reconciler needs it. */
export interface BatchApi {
  fetchBatch(batchId: string): Promise<BatchPoll>;
  /** The page of results after `cursor` (the first page without one), at most `limit`. */
  listResults(batchId: string, cursor: string | undefined, limit: number): Promise<ResultsPage>;
}

/** An ISO-8601 time as epoch ms; undefined when absent or not a time. */
function instant(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The message-batches API (docs/providers/message-batches.md), with `Authorization: Bearer`:
 * `GET <batch URL>` returns the batch (`id`, `processing_status`, `request_counts`,
 * `expires_at`, `ended_at`); `GET <batch URL>/results?limit=N[&after_id=<cursor>]` returns
 * `{ "data": [{ "custom_id", "result": { "type", … } }], "has_more", "last_id" }`, the next page
 * after `last_id`. A batch or a page naming another batch, or a result without a usable
 * custom id or state, is an error: nothing is fed from it.
 */
export class MessageBatchesApi implements BatchApi {
  constructor(private readonly options: TaskRequestOptions) {}

  async fetchBatch(batchId: string): Promise<BatchPoll> {
    const answer = await getTask(batchId, this.options);
    if (isPollResult(answer)) return answer as BatchPoll;
    const common = commonOutcome(answer);
    if (common) return common as BatchPoll;
    const batch = parseJsonObject(answer.body);
    if (!batch || typeof batch.processing_status !== 'string') return { kind: 'error', detail: 'malformed_response' };
    if (batch.id !== batchId) return { kind: 'error', detail: 'mismatched_task' };
    const expiresAt = instant(batch.expires_at);
    const endedAt = instant(batch.ended_at);
    return {
      kind: 'batch',
      batch: {
        processingStatus: batch.processing_status.slice(0, 32),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        ...(endedAt !== undefined ? { endedAt } : {}),
        raw: batch,
      },
    };
  }

  async listResults(batchId: string, cursor: string | undefined, limit: number): Promise<ResultsPage> {
    const query = `limit=${limit}${cursor !== undefined ? `&after_id=${encodeURIComponent(cursor)}` : ''}`;
    const answer = await getTask(batchId, { ...this.options, urlTemplate: `${this.options.urlTemplate}/results?${query}` });
    if (isPollResult(answer)) return answer as ResultsPage;
    const common = commonOutcome(answer);
    if (common) return common as ResultsPage;
    const page = parseJsonObject(answer.body);
    if (!page || !Array.isArray(page.data) || typeof page.has_more !== 'boolean') return { kind: 'error', detail: 'malformed_response' };
    const results: BatchResult[] = [];
    for (const entry of page.data as unknown[]) {
      const customId = (entry as { custom_id?: unknown } | null)?.custom_id;
      const result = (entry as { result?: unknown } | null)?.result;
      const state = (result as { type?: unknown } | null)?.type;
      if (typeof customId !== 'string' || typeof state !== 'string' || !BATCH_CHILD_STATES.includes(state)) {
        return { kind: 'error', detail: 'malformed_result' };
      }
      results.push({ customId, state, result });
    }
    if (!page.has_more) return { kind: 'page', results };
    // Another page, but no cursor to ask for it with (or the same one again): never loop.
    if (typeof page.last_id !== 'string' || page.last_id === '' || page.last_id === cursor) return { kind: 'error', detail: 'malformed_cursor' };
    return { kind: 'page', results, nextCursor: page.last_id };
  }
}

/** Whether a batch will change no more. */
export function batchEnded(batch: BatchStatus): boolean {
  return batch.processingStatus === MESSAGE_BATCH_ENDED;
}
