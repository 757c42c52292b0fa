import { ArchiveRecord, archiveDayPrefix, MetricName, utcDay } from '../../lib/contract';
import { DispatchOutcome } from '../shared/effects/sinks';
import { safeErrorFields } from '../shared/runtime/errors';
import { bodyOfRow } from '../shared/stores/body-store';
import { StoredDelivery } from '../shared/stores/inbox';
import type { ProcessorDependencies } from './processor';

/** A row of the batch this invocation decided: what the archive keeps of it. */
interface ArchivedRow {
  readonly row: StoredDelivery;
  readonly outcome: string;
}

/**
 * Archives the batch's decided rows whose effect (if any) was accepted: one object of JSON lines
 * per provider and day of receipt, written before the rows are completed, so a row is processed
 * only once it is archived. A failed write fails its rows as a failed dispatch does (they are
 * retried, and archived again then: a search keeps one line per event id and digest). The
 * outcome of each row by record index, the archive's failures added to the dispatch's.
 */
export async function archiveBatch(
  rows: readonly (ArchivedRow | undefined)[],
  dispatched: Map<number, DispatchOutcome>,
  deps: Pick<ProcessorDependencies, 'archive' | 'adapters' | 'bodies' | 'now' | 'telemetry'>,
): Promise<Map<number, DispatchOutcome>> {
  const archive = deps.archive;
  if (!archive) return dispatched;
  const groups = new Map<string, number[]>();
  rows.forEach((decided, index) => {
    if (!decided || dispatched.get(index)?.ok === false) return;
    const prefix = archiveDayPrefix(decided.row.provider, utcDay(decided.row.receivedAt));
    groups.set(prefix, [...(groups.get(prefix) ?? []), index]);
  });
  const archivedAt = deps.now();
  const outcomes = new Map(dispatched);
  await Promise.all(
    [...groups].map(async ([prefix, indexes]) => {
      try {
        const lines = await Promise.all(indexes.map(async (index) => JSON.stringify(await recordOf(rows[index]!, archivedAt, deps))));
        // One name per batch: the time, then the first row's key digest, so two batches never share an object.
        await archive.put(
          `${prefix}${new Date(archivedAt).toISOString()}-${rows[indexes[0]]!.row.digest.slice(0, 16)}.jsonl`,
          Buffer.from(`${lines.join('\n')}\n`),
        );
        deps.telemetry.count(MetricName.ARCHIVED, rows[indexes[0]]!.row.provider, indexes.length);
      } catch (error) {
        deps.telemetry.count(MetricName.ARCHIVE_FAILED, rows[indexes[0]]!.row.provider, indexes.length);
        deps.telemetry.log('WARN', 'archive write failed', { prefix, rows: indexes.length, ...safeErrorFields(error) });
        for (const index of indexes) outcomes.set(index, { ok: false, error: error as Error });
      }
    }),
  );
  return outcomes;
}

/** The archive's line of a row: its exact bytes and its sanitized record. */
async function recordOf({ row, outcome }: ArchivedRow, archivedAt: number, deps: Pick<ProcessorDependencies, 'adapters' | 'bodies'>): Promise<ArchiveRecord> {
  const body = await bodyOfRow(row, deps.bodies);
  const eventType = deps.adapters.get(row.provider)?.describe(row.meta, body).eventType;
  return {
    provider: row.provider,
    eventId: row.eventId,
    ...(eventType !== undefined ? { eventType } : {}),
    receivedAt: new Date(row.receivedAt).toISOString(),
    ...(row.eventAt !== undefined ? { eventTimestamp: new Date(row.eventAt).toISOString() } : {}),
    archivedAt: new Date(archivedAt).toISOString(),
    signatureResult: row.recovered ? 'not_checked' : 'valid',
    dedupeResult: 'new',
    reconcileResult: outcome,
    digest: row.digest,
    headers: row.meta,
    bodyBase64: body.toString('base64'),
  };
}
