import {
  BatchChildState,
  BatchOutcome,
  Defaults,
  MESSAGE_BATCH_EXPIRY_SECONDS,
  MESSAGE_BATCH_RESULTS_RETENTION_SECONDS,
  MetricName,
  SubmissionState,
  UnavailableReason,
} from '../../lib/contract';
import { AdmissionStores, admitDelivery } from '../shared/admission';
import { ProviderAdapter } from '../shared/providers/adapter';
import { BatchBodyType, BatchChildBody, BatchSummaryBody } from '../shared/providers/message-batches/adapter';
import { BatchApi, batchEnded, BatchResult } from '../shared/providers/message-batches/batch-api';
import { sha256Hex } from '../shared/runtime/digest';
import { Telemetry } from '../shared/runtime/telemetry';
import { BatchProgress, Submission } from '../shared/stores/submission-record';
import { SubmissionStore } from '../shared/stores/submission-store';
import { Outcome, settled } from './outcome';

/** How a batch's results are read. */
export interface BatchResultPaging {
  /** Results asked for a page. */
  readonly pageSize: number;
  /** The most pages one run reads of one batch: a large batch goes on in the next run. */
  readonly pagesPerRun: number;
}

export const BATCH_RESULT_PAGING: BatchResultPaging = { pageSize: Defaults.BATCH_RESULTS_PAGE_SIZE, pagesPerRun: Defaults.BATCH_RESULT_PAGES_PER_RUN };

/** What checking one batch needs from its run. */
export interface BatchCheck {
  readonly submissions: SubmissionStore;
  readonly stores: AdmissionStores;
  readonly telemetry: Telemetry;
  readonly adapter: ProviderAdapter;
  readonly api: BatchApi;
  readonly now: number;
  readonly recheckMs: number;
  readonly paging: BatchResultPaging;
  /** False once the run has no time left for another request. */
  readonly hasTime: () => boolean;
}

/** Children fed into the inbox at once, per results page. */
const FEED_CONCURRENCY = 25;

/**
 * One batch submission. Until the provider ends it, the batch is polled (its status and expiry
 * recorded); then its results are read a page at a time from the cursor the submission holds,
 * each result of a recorded child fed into the inbox as a row of its own (the verifier's
 * conditional insert: once, whatever order the pages list the children in and however often a
 * page is read again), and the cursor moved with the page's tally in one conditional write (a
 * page is counted once). After the last page the summary row is fed and the batch settles
 * RECOVERED. A run that dies anywhere leaves the cursor where the last counted page ended: the
 * next run reads the following page, or the same one again, finding its rows already there.
 */
export async function checkBatch(submission: Submission, check: BatchCheck): Promise<Outcome> {
  const { now, recheckMs } = check;
  const batchId = submission.taskId!;
  let progress = submission.batch!;

  if (progress.endedAt === undefined) {
    const poll = await check.api.fetchBatch(batchId).catch(() => ({ kind: 'error', detail: 'client_error' }) as const);
    if (poll.kind === 'not_found') return settled(SubmissionState.UNAVAILABLE, UnavailableReason.NOT_FOUND);
    if (poll.kind === 'rate_limited') return { kind: 'rate_limited' };
    if (poll.kind === 'error') return { kind: 'recheck', dueAt: now, lastCheck: `error:${poll.detail}` };
    const { batch } = poll;
    const ended = batchEnded(batch);
    const endedAt = ended ? (batch.endedAt ?? now) : undefined;
    if (ended || batch.processingStatus !== progress.status || batch.expiresAt !== progress.expiresAt) {
      if (!(await check.submissions.noteBatch(submission.key, { processingStatus: batch.processingStatus, expiresAt: batch.expiresAt, endedAt }))) {
        return { kind: 'recheck', dueAt: now, lastCheck: 'settled_elsewhere', inProgress: true };
      }
    }
    if (!ended) {
      // Running within its provider's time is what a batch does: overdue only past its expiry.
      const expiresAt = batch.expiresAt ?? submission.submittedAt + MESSAGE_BATCH_EXPIRY_SECONDS * 1000;
      return { kind: 'recheck', dueAt: now + recheckMs, lastCheck: `pending:${batch.processingStatus}`, inProgress: now < expiresAt };
    }
    progress = { ...progress, status: batch.processingStatus, ...(batch.expiresAt !== undefined ? { expiresAt: batch.expiresAt } : {}), endedAt };
  }

  if (!progress.done) {
    const read = await readResults(submission, progress, check);
    if (read) return read;
    const reread = await check.submissions.get(submission.key);
    if (!reread?.batch || reread.state !== SubmissionState.AWAITING) return { kind: 'recheck', dueAt: now, lastCheck: 'settled_elsewhere', inProgress: true };
    progress = reread.batch;
  }

  const summary = summaryBody(batchId, progress);
  await feed(check, Buffer.from(JSON.stringify(summary), 'utf8'));
  if (summary.missing > 0 || summary.unexpected > 0) {
    check.telemetry.log('WARN', 'batch results incomplete', { provider: submission.provider, missing: summary.missing, unexpected: summary.unexpected });
  }
  return settled(SubmissionState.RECOVERED, `batch_${summary.outcome}`);
}

/**
 * When a batch's results stop being readable, epoch ms: its provider keeps them for the results
 * retention after the batch was created, and names `expires_at` one expiry period after creation,
 * so once the provider has named it the deadline is `expires_at` − expiry + retention; until then
 * (or when that is later) the deadline recorded with the batch, and for a batch recorded before
 * deadlines existed, submission + retention. The expiry itself loses nothing: an expired batch
 * ends with its unprocessed requests `expired`, and its results are read as any ended batch's.
 */
export function batchResultsDeadline(submission: Submission): number {
  const recorded = submission.deadlineAt ?? submission.submittedAt + MESSAGE_BATCH_RESULTS_RETENTION_SECONDS * 1000;
  const expiresAt = submission.batch?.expiresAt;
  if (expiresAt === undefined) return recorded;
  return Math.min(recorded, expiresAt + (MESSAGE_BATCH_RESULTS_RETENTION_SECONDS - MESSAGE_BATCH_EXPIRY_SECONDS) * 1000);
}

/** Reads result pages from the stored cursor until the last one (undefined) or a reason to stop (the outcome). */
async function readResults(submission: Submission, progress: BatchProgress, check: BatchCheck): Promise<Outcome | undefined> {
  const { now } = check;
  const recorded = await check.submissions.childIds(submission.key, progress.childChunks);
  let cursor = progress.cursor;
  for (let pages = 0; ; pages++) {
    // Due again at once, behind what is already due: one large batch never holds up the rest.
    if (pages >= check.paging.pagesPerRun || !check.hasTime()) return { kind: 'recheck', dueAt: now, lastCheck: 'reading_results', inProgress: true };
    const page = await check.api
      .listResults(submission.taskId!, cursor, check.paging.pageSize)
      .catch(() => ({ kind: 'error', detail: 'client_error' }) as const);
    if (page.kind === 'not_found') return settled(SubmissionState.UNAVAILABLE, UnavailableReason.RESULTS_NOT_FOUND);
    if (page.kind === 'rate_limited') return { kind: 'rate_limited' };
    if (page.kind === 'error') return { kind: 'recheck', dueAt: now, lastCheck: `error:${page.detail}` };

    const children = new Map<string, BatchResult>();
    let unexpected = 0;
    for (const result of page.results) {
      // Never a row under an id the app did not submit in this batch.
      if (!recorded.has(result.customId)) unexpected += 1;
      else if (!children.has(result.customId)) children.set(result.customId, result);
    }
    const list = [...children.values()];
    for (let start = 0; start < list.length; start += FEED_CONCURRENCY) {
      await Promise.all(list.slice(start, start + FEED_CONCURRENCY).map((child) => feed(check, childBody(submission.taskId!, child))));
    }
    const counts: Record<string, number> = {};
    for (const child of list) counts[child.state] = (counts[child.state] ?? 0) + 1;
    // Rows first, then the cursor: a page whose count was kept has every row stored.
    if (!(await check.submissions.advanceResults(submission.key, cursor, page.nextCursor, { read: list.length, unexpected, counts }))) {
      return { kind: 'recheck', dueAt: now, lastCheck: 'settled_elsewhere', inProgress: true };
    }
    // Counted with the page, once: a page read again after a crash was not counted before.
    if (list.length > 0) check.telemetry.count(MetricName.BATCH_CHILDREN_RECORDED, submission.provider, list.length);
    if (page.nextCursor === undefined) return undefined;
    cursor = page.nextCursor;
  }
}

function childBody(batchId: string, child: BatchResult): Buffer {
  const body: BatchChildBody = { type: BatchBodyType.CHILD, batch_id: batchId, custom_id: child.customId, result: child.result };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** The summary of a batch whose every page was read: made from the submission alone, so every run makes the same bytes. */
function summaryBody(batchId: string, progress: BatchProgress): BatchSummaryBody {
  const succeeded = progress.counts[BatchChildState.SUCCEEDED] ?? 0;
  const missing = Math.max(0, progress.childCount - progress.read);
  const outcome = succeeded === progress.childCount ? BatchOutcome.SUCCEEDED : succeeded === 0 ? BatchOutcome.FAILED : BatchOutcome.PARTIAL;
  return {
    type: BatchBodyType.SUMMARY,
    batch_id: batchId,
    outcome,
    children: progress.childCount,
    counts: progress.counts,
    missing,
    unexpected: progress.unexpected,
    batch: {
      processing_status: progress.status,
      ...(progress.endedAt !== undefined ? { ended_at: new Date(progress.endedAt).toISOString() } : {}),
      ...(progress.expiresAt !== undefined ? { expires_at: new Date(progress.expiresAt).toISOString() } : {}),
    },
  };
}

/** Feeds one body through the verifier's conditional insert, marked recovered (a row already there is left as it is). */
async function feed(check: BatchCheck, body: Buffer): Promise<void> {
  const admission = check.adapter.admit({}, body);
  if (admission.kind !== 'event') throw new Error(`a batch body the adapter refuses: ${admission.kind}`);
  const admitted = await admitDelivery(check.stores, {
    provider: check.adapter.name,
    eventId: admission.eventId,
    body,
    digest: sha256Hex(body),
    meta: {},
    now: check.now,
    recovered: true,
    readsOriginal: false,
  });
  if (admitted.kind === 'inserted' && admitted.enqueueError !== undefined) check.telemetry.count(MetricName.ENQUEUE_FAILED, check.adapter.name);
}
