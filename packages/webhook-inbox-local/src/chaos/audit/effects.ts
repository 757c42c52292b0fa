/**
 * Processed exactly once: each effect key dispatched once and each row completed once, except the
 * documented same-key repeat after a worker died after sending (counted apart); every decided
 * result has its effect, a missing resource settles unavailable without one, a poison row never
 * causes one, and an effect says `recovered` exactly when its row was fed by polling.
 */
import { logReference } from '../../../../../lambda/shared/runtime/digest';
import { RowOutcome } from '../../../../../lib/contract';
import { groupBy, providerOf, RunAudit, sourceOf } from './context';
import type { Winners } from './winners';

/** The documented at-least-once case: a worker interrupted after sending; consumers dedupe by the key. */
const REPEATED = 'effects repeated after an interrupted attempt (same key)';

export function auditEffectsOnce({ evidence, originals, processedLines, figures, violation }: RunAudit): void {
  const byEffectKey = groupBy(evidence.effects, (effect) => effect.effectKey);
  const twice: string[] = [];
  for (const [, copies] of byEffectKey) {
    if (copies.length < 2) continue;
    const provider = sourceOf(copies[0].eventKey);
    if (copies.every((copy) => evidence.interruptedRows.has(copy.eventKey))) figures.add(REPEATED, provider, copies.length - 1);
    else {
      twice.push(copies[0].eventKey);
      figures.add('processed twice', provider, copies.length - 1);
    }
  }
  // A row completed twice logs `processed` twice.
  for (const key of originals.keys()) {
    const lines = processedLines.get(logReference(key)) ?? 0;
    if (lines > 1) {
      twice.push(`${key} (${lines} completions)`);
      figures.add('processed twice', providerOf(key), lines - 1);
    }
  }
  figures.ensure('processed twice');
  figures.ensure(REPEATED);
  if (twice.length) violation(`${twice.length} rows were processed twice`, twice);
}

export function auditEffectsDispatched({ evidence, rows, originals, figures, violation }: RunAudit, winners: Winners): void {
  const effectsByEventKey = groupBy(evidence.effects, (effect) => effect.eventKey);
  const winnerEffects = new Set(
    evidence.effects.filter((e) => e.jobKey !== undefined).map((e) => `${providerOf(e.eventKey)}#${e.jobKey} ${e.taskId} ${e.status}`),
  );
  const missingEffects: string[] = [];
  for (const [key, winner] of winners) {
    if (!winnerEffects.has(`${key} ${winner.taskId} ${winner.status}`)) missingEffects.push(key);
  }
  const unavailableWrong: string[] = [];
  for (const event of evidence.events) {
    if (event.poison || !event.delivery) continue;
    const key = event.delivery.eventKey;
    const row = rows.get(key);
    const sent = effectsByEventKey.get(key) ?? [];
    if (event.missing) {
      if (row && (row.outcome !== RowOutcome.UNAVAILABLE || sent.length > 0))
        unavailableWrong.push(`${key}: outcome ${row.outcome ?? 'none'}, ${sent.length} effects`);
      else if (row) figures.add('missing resources settled unavailable', 'standard-webhooks');
    } else if (row && sent.length === 0) {
      missingEffects.push(key);
    }
  }
  figures.ensure('missing resources settled unavailable');
  const poisonEffects = [...originals.values()].filter((o) => o.kind === 'poison' && effectsByEventKey.has(o.eventKey)).map((o) => o.eventKey);
  if (missingEffects.length) violation(`${missingEffects.length} decided results never had their effect dispatched`, missingEffects);
  if (unavailableWrong.length)
    violation(`${unavailableWrong.length} deliveries of missing resources were not settled as unavailable without effect`, unavailableWrong);
  if (poisonEffects.length) violation(`${poisonEffects.length} poison rows caused an effect`, poisonEffects);
  for (const effect of evidence.effects) figures.add('effects dispatched', sourceOf(effect.eventKey));
  figures.ensure('effects dispatched');
  const wrongFlag = evidence.effects
    .filter((effect) => rows.has(effect.eventKey) && rows.get(effect.eventKey)!.recovered !== effect.recovered)
    .map((e) => e.eventKey);
  if (wrongFlag.length) violation(`${wrongFlag.length} effects say recovered when their row was delivered, or the reverse`, wrongFlag);
}
