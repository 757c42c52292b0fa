/** The handlers' own count, what an operator's dashboard would show, agrees with the inbox and their logs. */
import { logReference } from '../../../../../lambda/shared/runtime/digest';
import { MetricName } from '../../../../../lib/contract';
import { countLinesByEvent } from './logs';
import { RunAudit, sourceOf } from './context';
import { BATCHES } from './report';

export function auditHandlerCounts({ evidence, originals, logs, counted, violation, notes }: RunAudit): void {
  // A batch's rows are counted as its children and its summary (batches.ts), not as recovered results.
  const recoveredRows = evidence.rows.filter((row) => row.recovered && sourceOf(row.key) !== BATCHES).length;
  if (counted(MetricName.RECOVERED) !== recoveredRows)
    violation(`the reconciler counted ${counted(MetricName.RECOVERED)} results recovered by polling, the inbox holds ${recoveredRows}`);
  // A row's dead-letter count goes out with its log line, right after the DEAD write: only an
  // invocation that died in between (a crash or timeout of that very batch) loses both.
  const deadLines = countLinesByEvent(logs, 'processing failed; dead-lettered');
  const deadLineTotal = [...deadLines.values()].reduce((sum, n) => sum + n, 0);
  if (counted(MetricName.DEAD_LETTERED) !== deadLineTotal)
    violation(`the processor counted ${counted(MetricName.DEAD_LETTERED)} rows dead-lettered but logged ${deadLineTotal}`);
  const poisonKeys = [...originals.values()].filter((o) => o.kind === 'poison').map((o) => o.eventKey);
  const uncounted = poisonKeys.filter((key) => !deadLines.has(logReference(key)));
  const uncountedUnexplained = uncounted.filter((key) => !evidence.killedRows.has(key));
  if (uncountedUnexplained.length) violation(`${uncountedUnexplained.length} poison rows died without the processor counting them`, uncountedUnexplained);
  if (uncounted.length > uncountedUnexplained.length)
    notes.push(`${uncounted.length - uncountedUnexplained.length} poison rows died in an invocation killed before it counted them`);
  const quarantineCount = evidence.quarantined.reduce((sum, item) => sum + item.count, 0);
  if (counted(MetricName.QUARANTINED) !== quarantineCount)
    notes.push(`the verifier counted ${counted(MetricName.QUARANTINED)} quarantined copies, the quarantine items ${quarantineCount}`);
}
