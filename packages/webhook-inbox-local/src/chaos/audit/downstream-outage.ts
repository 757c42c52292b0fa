/**
 * A downstream outage loses nothing and dead-letters nothing but the poison rows. Stated here on
 * its own: while the processing's downstream fails every row, a row's failures say nothing about
 * the row, so they may not cost it its life; a row that fails while the others succeed (a poison
 * row) is the row's own problem and still ends DEAD. When the run took the downstream down for
 * longer than a row's retry budget:
 *
 * - no row is DEAD except the planned poison rows;
 * - every other row the outage touched (stored before the downstream came back, and not processed
 *   before it went down) ends PROCESSED, completed once: one `processed` line of the processor
 *   (none only when the invocation that completed it was killed before it logged);
 * - the inbox saw the outage: the breaker opened at least once (the processor's `BreakerOpened`
 *   count, and the flow-control item's own count of openings), and it is CLOSED at the end;
 * - once the breaker has opened, the outage spends no row's attempt: no attempt that failed
 *   because its effect was not accepted, and was spent (the processor's line of a failed or
 *   dead-lettered attempt), was handed to an invocation after the first opening and before the
 *   downstream came back. Attempts spent before the breaker opened are the rows' budget to bear,
 *   and are counted.
 */
import { logReference } from '../../../../../lambda/shared/runtime/digest';
import { DeliveryStatus, MetricName } from '../../../../../lib/contract';
import { receiveKey } from '../state';
import { processorLines } from './logs';
import { EXAMPLES, RunAudit, sourceOf } from './context';

/** The processor's line of a row that failed downstream while the breaker was open, its attempt not spent. */
const GIVEN_BACK = 'processing failed downstream; attempt given back (circuit breaker open)';
const CLOSED = 'CLOSED';
/** The processor's lines of an attempt that failed and was spent: the row retried later, or DEAD. */
const SPENT = new Set(['processing failed', 'processing failed; dead-lettered']);
const OPENED = 'circuit breaker opened';

export function auditDownstreamOutage({ evidence, originals, processedLines, logs, figures, counted, violation, notes }: RunAudit): void {
  const outage = evidence.downstreamOutage;
  if (!outage) return;
  const poison = new Set([...originals.values()].filter((original) => original.kind === 'poison').map((original) => original.eventKey));
  const deadOthers: string[] = [];
  const unsettled: string[] = [];
  const twice: string[] = [];
  let longestDelayMs = 0;
  for (const name of ['rows the downstream outage touched', '  delayed past its end', '  DEAD (poison rows only)']) figures.ensure(name);
  for (const row of evidence.rows) {
    if (row.status === DeliveryStatus.DEAD) {
      if (poison.has(row.key)) figures.add('  DEAD (poison rows only)', sourceOf(row.key));
      else deadOthers.push(`${row.key}: after ${row.attempts ?? 0} attempts (last error: ${row.lastError ?? 'none'})`);
    }
    const touched = (row.receivedAt ?? 0) < outage.upAt && (row.processedAt === undefined || row.processedAt >= outage.downAt);
    if (!touched || poison.has(row.key)) continue;
    figures.add('rows the downstream outage touched', sourceOf(row.key));
    if (row.processedAt !== undefined && row.processedAt >= outage.upAt) {
      figures.add('  delayed past its end', sourceOf(row.key));
      longestDelayMs = Math.max(longestDelayMs, row.processedAt - outage.upAt);
    }
    if (row.status !== DeliveryStatus.PROCESSED) {
      if (row.status !== DeliveryStatus.DEAD) unsettled.push(`${row.key}: ${row.status}`);
      continue;
    }
    if (!originals.has(row.key)) continue;
    const lines = processedLines.get(logReference(row.key)) ?? 0;
    if (lines > 1 || (lines === 0 && !evidence.killedRows.has(row.key))) twice.push(`${row.key}: ${lines} processed lines`);
  }
  if (deadOthers.length)
    violation(`${deadOthers.length} rows are DEAD that are not poison rows: the downstream being down dead-lettered them`, deadOthers.slice(0, EXAMPLES));
  if (unsettled.length) violation(`${unsettled.length} rows the downstream outage touched never ended ${DeliveryStatus.PROCESSED}`, unsettled);
  if (twice.length) violation(`${twice.length} rows the downstream outage touched were not completed exactly once`, twice);

  const lines = processorLines(logs);
  const openings = lines.filter((line) => line.message === OPENED && line.time).map((line) => Date.parse(line.time!));
  const firstOpening = openings.length ? Math.min(...openings) : undefined;
  let spentBeforeOpening = 0;
  const spentWhileOpen: string[] = [];
  for (const line of lines) {
    if (!SPENT.has(line.message ?? '') || line.outboxResult !== 'failed') continue;
    const handedAt = evidence.receivedAt.get(receiveKey(line.messageId, line.receiveCount));
    if (handedAt === undefined || handedAt < outage.downAt || handedAt >= outage.upAt) continue;
    if (firstOpening === undefined || handedAt < firstOpening) spentBeforeOpening++;
    else spentWhileOpen.push(`${line.eventRef}, receive ${line.receiveCount} handed over ${handedAt - firstOpening} ms after the opening`);
  }
  figures.set('attempts the outage spent before the breaker opened', 'total', spentBeforeOpening);
  if (spentWhileOpen.length)
    violation(`${spentWhileOpen.length} attempts were spent by the downstream's failures after the breaker had opened`, spentWhileOpen.slice(0, EXAMPLES));

  const opened = counted(MetricName.BREAKER_OPENED);
  const givenBack = lines.filter((line) => line.message === GIVEN_BACK && line.eventRef).length;
  figures.set('breaker openings (BreakerOpened)', 'total', opened);
  figures.set('row failures given back (no attempt spent)', 'total', givenBack);
  figures.set('messages deferred (Deferred)', 'total', counted(MetricName.DEFERRED));
  const seconds = ((outage.upAt - outage.downAt) / 1000).toFixed(0);
  if (opened === 0 || !evidence.breaker?.openings)
    violation(
      `the downstream failed every row for ${seconds} s and the breaker never opened (BreakerOpened ${opened}, openings on the flow item ${evidence.breaker?.openings ?? 0})`,
    );
  else if (evidence.breaker.state !== CLOSED) violation(`the breaker is ${evidence.breaker.state} at the end, long after the downstream came back`);
  notes.push(
    `downstream outage: ${seconds} s; the breaker opened ${opened} times (the flow item counts ${evidence.breaker?.openings ?? 0}), ` +
      `${givenBack} row failures given back; the longest delay past the outage ${(longestDelayMs / 1000).toFixed(0)} s`,
  );
}
