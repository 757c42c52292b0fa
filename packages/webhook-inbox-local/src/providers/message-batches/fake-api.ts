/**
 * A FAKE of a message-batches API (docs/providers/message-batches.md; Anthropic's Message
 * Batches is the model), for the tests and the chaos run: `GET /v1/messages/batches/{id}` (the
 * batch: `processing_status`, `request_counts`, `expires_at`, `ended_at`) and
 * `GET /v1/messages/batches/{id}/results?limit=N&after_id=<custom id>` (a page of results,
 * `has_more`, `last_id`), with the Bearer key. Each batch lists its requests in an order of its
 * own (not the order they were submitted in); requests finish one by one (`finish`), and the
 * rest end `canceled` when the batch is cancelled, `expired` when it expires, or with their
 * planned state when it simply ends. Results can be forgotten (404), and every failure of
 * `FakeApiServer` can be injected.
 */
import { randomUUID } from 'node:crypto';
import { FakeApiServer, Route } from '../fake-api-server';

export const MESSAGE_BATCHES_PATH = '/v1/messages/batches/';

const DAY_MS = 86_400_000;

/** A request of a fake batch. */
export interface FakeBatchRequest {
  readonly customId: string;
  /** The state it ends in once processed: `succeeded` or `errored`. */
  readonly planned: 'succeeded' | 'errored';
  /** Its terminal state, once it has one. */
  state?: 'succeeded' | 'errored' | 'canceled' | 'expired';
}

export interface FakeBatch {
  readonly id: string;
  readonly createdAt: number;
  processingStatus: 'in_progress' | 'canceling' | 'ended';
  endedAt?: number;
  readonly requests: FakeBatchRequest[];
  /** The order the results list the requests in. */
  readonly listing: string[];
  /** Results no longer kept: the results endpoint answers 404. */
  resultsForgotten: boolean;
  /** Polls of the batch answered. */
  polls: number;
}

export interface NewFakeBatch {
  readonly id?: string;
  readonly customIds: readonly string[];
  /** Custom ids whose request errors; the rest succeed. */
  readonly errored?: readonly string[];
  /** The order results are listed in. @default the submitted order, reversed */
  readonly listing?: readonly string[];
  readonly createdAt?: number;
}

export class FakeMessageBatchesApi extends FakeApiServer {
  private readonly batches = new Map<string, FakeBatch>();
  /** The most results one page holds, whatever `limit` asks for. */
  maxPageSize = 1000;

  constructor(
    apiKey: string = `mb_key_${randomUUID().replace(/-/g, '')}`,
    private readonly now: () => number = Date.now,
  ) {
    super(apiKey);
  }

  /** The reconciler's `taskUrlTemplate` for this fake. */
  get batchUrlTemplate(): string {
    return `${this.url}${MESSAGE_BATCHES_PATH}{batchId}`;
  }

  /** A batch, in progress, none of its requests processed yet. */
  addBatch(batch: NewFakeBatch): FakeBatch {
    const errored = new Set(batch.errored ?? []);
    const stored: FakeBatch = {
      id: batch.id ?? `msgbatch_${randomUUID().replace(/-/g, '')}`,
      createdAt: batch.createdAt ?? this.now(),
      processingStatus: 'in_progress',
      requests: batch.customIds.map((customId) => ({ customId, planned: errored.has(customId) ? 'errored' : 'succeeded' })),
      listing: [...(batch.listing ?? [...batch.customIds].reverse())],
      resultsForgotten: false,
      polls: 0,
    };
    this.batches.set(stored.id, stored);
    return stored;
  }

  batch(id: string): FakeBatch {
    const batch = this.batches.get(id);
    if (!batch) throw new Error(`no batch ${id}`);
    return batch;
  }

  /** Processes these requests (every one when none is named): each takes its planned state. */
  finish(id: string, customIds?: readonly string[]): void {
    const batch = this.batch(id);
    const named = customIds && new Set(customIds);
    for (const request of batch.requests) if (!request.state && (!named || named.has(request.customId))) request.state = request.planned;
  }

  /** Processes every request and ends the batch. */
  end(id: string): void {
    this.finish(id);
    this.close(this.batch(id));
  }

  /** Cancels the batch: `canceling` for the next poll, then ended with its unprocessed requests `canceled`. */
  cancel(id: string): void {
    const batch = this.batch(id);
    batch.processingStatus = 'canceling';
  }

  /** The batch ran out of time: ended, its unprocessed requests `expired`. */
  expire(id: string): void {
    const batch = this.batch(id);
    for (const request of batch.requests) request.state ??= 'expired';
    this.close(batch);
  }

  /** Its results are no longer kept: 404 from now on. */
  forgetResults(id: string): void {
    this.batch(id).resultsForgotten = true;
  }

  protected routes(): Route[] {
    return [
      { match: (path) => this.match(path, ''), answer: (id) => this.batchAnswer(id!) },
      { match: (path) => this.match(path, '/results'), answer: (id, query) => this.resultsAnswer(id!, query) },
    ];
  }

  protected errorBody(status: number): unknown {
    const type: Record<number, string> = { 401: 'authentication_error', 404: 'not_found_error', 405: 'invalid_request_error', 429: 'rate_limit_error' };
    return { type: 'error', error: { type: type[status] ?? 'api_error', message: `status ${status}` } };
  }

  private match(path: string, suffix: string): { id: string } | undefined {
    if (!path.startsWith(MESSAGE_BATCHES_PATH) || !path.endsWith(suffix)) return undefined;
    const rest = path.slice(MESSAGE_BATCHES_PATH.length, path.length - suffix.length);
    return rest === '' || rest.includes('/') ? undefined : { id: decodeURIComponent(rest) };
  }

  private close(batch: FakeBatch): void {
    batch.processingStatus = 'ended';
    batch.endedAt ??= this.now();
  }

  private batchAnswer(id: string): { status: number; body: unknown } {
    const batch = this.batches.get(id);
    if (!batch) return { status: 404, body: undefined };
    batch.polls += 1;
    const body = this.batchBody(batch);
    // A cancellation takes one poll to land: the unprocessed requests are canceled, the batch ended.
    if (batch.processingStatus === 'canceling') {
      for (const request of batch.requests) request.state ??= 'canceled';
      this.close(batch);
    }
    return { status: 200, body };
  }

  private batchBody(batch: FakeBatch): unknown {
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    for (const request of batch.requests) counts[request.state ?? 'processing'] += 1;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.processingStatus,
      request_counts: counts,
      created_at: new Date(batch.createdAt).toISOString(),
      expires_at: new Date(batch.createdAt + DAY_MS).toISOString(),
      ended_at: batch.endedAt !== undefined ? new Date(batch.endedAt).toISOString() : null,
      results_url: batch.processingStatus === 'ended' ? `${this.url}${MESSAGE_BATCHES_PATH}${batch.id}/results` : null,
    };
  }

  private resultsAnswer(id: string, query: URLSearchParams): { status: number; body: unknown } {
    const batch = this.batches.get(id);
    if (!batch || batch.processingStatus !== 'ended' || batch.resultsForgotten) return { status: 404, body: undefined };
    const limit = Math.min(Number(query.get('limit') ?? 100) || 100, this.maxPageSize);
    const after = query.get('after_id');
    const start = after === null ? 0 : batch.listing.indexOf(after) + 1;
    if (after !== null && start === 0) return { status: 404, body: undefined };
    const byId = new Map(batch.requests.map((request) => [request.customId, request]));
    const ids = batch.listing.slice(start, start + limit);
    return {
      status: 200,
      body: {
        data: ids.map((customId) => ({ custom_id: customId, result: resultOf(batch.id, byId.get(customId)!) })),
        has_more: start + ids.length < batch.listing.length,
        first_id: ids[0] ?? null,
        last_id: ids.at(-1) ?? null,
      },
    };
  }
}

/** A request's result as the API lists it. */
function resultOf(batchId: string, request: FakeBatchRequest): unknown {
  switch (request.state) {
    case 'succeeded':
      return {
        type: 'succeeded',
        message: {
          id: `msg_${batchId.slice(-8)}_${request.customId}`,
          type: 'message',
          role: 'assistant',
          model: 'fake-model',
          content: [{ type: 'text', text: `pii_answer-${batchId}-${request.customId}` }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 10, output_tokens: 20 },
        },
      };
    case 'errored':
      return { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: `refused-${request.customId}` } } };
    default:
      return { type: request.state ?? 'expired' };
  }
}
