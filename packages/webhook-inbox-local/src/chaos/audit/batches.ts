/**
 * Every request of every batch, from the batch API's own record, stored as exactly one row with
 * one `BatchChildSettled` effect naming its terminal state, and each batch one `BatchSettled`.
 * Stated here with the documented row keys (`<provider>#<batchId>:<customId>`, both URI-escaped;
 * the summary `…:~batch`) and the outcome rule.
 */
import { logReference } from '../../../../../lambda/shared/runtime/digest';
import { DeliveryStatus, EffectEvent, MetricName } from '../../../../../lib/contract';
import { groupBy, RunAudit, sourceOf } from './context';
import type { DispatchedEffect } from './evidence';
import { BATCHES } from './report';

export function auditBatches({ evidence, rows, processedLines, figures, counted, violation }: RunAudit): void {
  const batchProblems: string[] = [];
  const childEffects = groupBy(
    evidence.effects.filter((e) => e.detailType === EffectEvent.BATCH_CHILD_SETTLED),
    (e) => `${e.batchId} ${e.customId}`,
  );
  const summaryEffects = groupBy(
    evidence.effects.filter((e) => e.detailType === EffectEvent.BATCH_SETTLED),
    (e) => String(e.batchId),
  );
  /** Effects of one intent: exactly one key, sent once, or again only after an interrupted attempt (at least once, documented). */
  const once = (copies: readonly DispatchedEffect[] | undefined, rowKey: string) =>
    copies !== undefined && new Set(copies.map((c) => c.effectKey)).size === 1 && (copies.length === 1 || evidence.interruptedRows.has(rowKey));
  for (const batch of evidence.batches) {
    const prefix = `${batch.provider}#${encodeURIComponent(batch.batchId)}:`;
    const batchRows = evidence.rows.filter((row) => row.key.startsWith(prefix));
    const summaryKey = `${prefix}~batch`;
    for (const request of batch.requests) {
      figures.add('batch requests (children)', BATCHES);
      const key = `${prefix}${encodeURIComponent(request.customId)}`;
      const row = rows.get(key);
      const effects = childEffects.get(`${batch.batchId} ${request.customId}`);
      if (request.state === 'none') batchProblems.push(`${key}: never reached a terminal state at the provider`);
      else if (!row) batchProblems.push(`${key}: no row`);
      else if (row.status !== DeliveryStatus.PROCESSED) batchProblems.push(`${key}: ${row.status}`);
      else if ((processedLines.get(logReference(key)) ?? 0) > 1) batchProblems.push(`${key}: ${processedLines.get(logReference(key))} completions`);
      else if (!once(effects, key)) batchProblems.push(`${key}: ${effects?.length ?? 0} ${EffectEvent.BATCH_CHILD_SETTLED} effects`);
      else if (effects![0].childState !== request.state) batchProblems.push(`${key}: effect says ${effects![0].childState}, the provider ${request.state}`);
      else figures.add(`  stored once with one ${EffectEvent.BATCH_CHILD_SETTLED}`, BATCHES);
    }
    // Exactly one row per request and the summary: no request stored under a second key, none the batch does not hold.
    if (batchRows.length !== batch.requests.length + 1)
      batchProblems.push(`${prefix}*: ${batchRows.length} rows for ${batch.requests.length} requests and a summary`);
    // The outcome rule, stated here: succeeded when every request succeeded, failed when none did, partial otherwise.
    const succeeded = batch.requests.filter((request) => request.state === 'succeeded').length;
    const outcome = succeeded === batch.requests.length ? 'succeeded' : succeeded === 0 ? 'failed' : 'partial';
    const summaries = summaryEffects.get(batch.batchId);
    const summary = rows.get(summaryKey);
    if (summary?.status !== DeliveryStatus.PROCESSED) batchProblems.push(`${summaryKey}: ${summary?.status ?? 'no row'}`);
    else if (!once(summaries, summaryKey)) batchProblems.push(`${summaryKey}: ${summaries?.length ?? 0} ${EffectEvent.BATCH_SETTLED} effects`);
    else if (summaries![0].batchOutcome !== outcome) batchProblems.push(`${summaryKey}: outcome ${summaries![0].batchOutcome}, the rule says ${outcome}`);
    else figures.add(`batches settled once (${outcome})`, BATCHES);
  }
  figures.ensure('batch requests (children)');
  if (batchProblems.length) violation(`${batchProblems.length} batch requests or summaries not stored and settled exactly once`, batchProblems);
  const childRows = evidence.rows.filter((row) => sourceOf(row.key) === BATCHES && !row.key.endsWith(':~batch')).length;
  if (counted(MetricName.BATCH_CHILDREN_RECORDED) !== childRows)
    violation(`the reconciler counted ${counted(MetricName.BATCH_CHILDREN_RECORDED)} batch children recorded, the inbox holds ${childRows}`);
  if (counted(MetricName.BATCHES_SETTLED) !== evidence.batches.length)
    violation(`the reconciler counted ${counted(MetricName.BATCHES_SETTLED)} batches settled, the batch API ended ${evidence.batches.length}`);
}
