/**
 * Every result a provider completed is stored exactly once, as the provider sent it, and settles:
 * a result row PROCESSED, a poison row DEAD with its message in the DLQ. The providers' own
 * records are the reference.
 */
import { DeliveryStatus } from '../../../../../lib/contract';
import type { Provider } from '../plan';
import { providerOf, RunAudit, sourceOf, taskIdOf } from './context';
import { BATCHES } from './report';
import { GITHUB, STRIPE } from '../provider-logs';

/** What the providers completed, by kind and by how the provider's delivery ended. */
export function auditCompleted({ evidence, figures }: RunAudit): void {
  for (const name of [
    'deliveries (provider messages)',
    '  results',
    '  poison results',
    '  test deliveries',
    '  altered copies',
    '  delivered at the provider',
    '  dead at the provider',
    '  skipped at the provider',
  ]) {
    figures.ensure(name);
  }
  for (const delivery of evidence.deliveries) {
    const provider = delivery.provider as Provider;
    figures.add('deliveries (provider messages)', provider);
    figures.add(
      `  ${delivery.kind === 'result' ? 'results' : delivery.kind === 'poison' ? 'poison results' : delivery.kind === 'test' ? 'test deliveries' : 'altered copies'}`,
      provider,
    );
    figures.add(`  ${delivery.state} at the provider`, provider);
  }
  figures.set('attempts (HTTP requests, adversary included)', 'total', evidence.attempts);
}

/** One inbox row per completed result: none missing (lost), none that no provider completed. */
export function auditStoredOnce({ evidence, rows, originals, figures, violation }: RunAudit): void {
  const lost = [...originals.keys()].filter((key) => !rows.has(key));
  for (const key of lost) figures.add('lost', providerOf(key));
  figures.ensure('lost');
  if (lost.length) violation(`${lost.length} completed results have no inbox row (lost)`, lost);
  // A batch's rows are judged from the batch API's record (batches.ts), GitHub's and Stripe's from theirs (provider-logs.ts).
  const unexpected = evidence.rows.filter((row) => !originals.has(row.key) && !([BATCHES, GITHUB, STRIPE] as string[]).includes(sourceOf(row.key)));
  for (const row of unexpected) figures.add('rows no provider completed', providerOf(row.key));
  figures.ensure('rows no provider completed');
  if (unexpected.length)
    violation(
      `${unexpected.length} inbox rows match no completed result (a test, forged, stale or replayed request stored)`,
      unexpected.map((row) => row.key),
    );
}

/**
 * Each row holds the provider's original body (or, fed by polling, a body the provider's API
 * served), and has settled: PROCESSED, or DEAD with its message in the DLQ for a poison result.
 */
export function auditBodiesSettled({ evidence, rows, originals, deadLettered, figures, violation, notes }: RunAudit): void {
  const alteredAccepted: string[] = [];
  const notProcessed: string[] = [];
  const poisonNotDead: string[] = [];
  for (const [key, original] of originals) {
    const row = rows.get(key);
    if (!row) continue;
    const provider = providerOf(key);
    if (row.recovered) {
      figures.add('recovered by polling', provider);
      const served = evidence.servedDigests[provider]?.get(taskIdOf(provider, key));
      if (!served?.has(row.digest)) alteredAccepted.push(key);
    } else if (row.digest !== original.digest) {
      alteredAccepted.push(key);
    }
    if (original.kind === 'poison') {
      if (row.status === DeliveryStatus.DEAD && deadLettered.has(key)) figures.add('dead-lettered poison rows', provider);
      else poisonNotDead.push(`${key}: ${row.status}${deadLettered.has(key) ? '' : ', not in the DLQ'}`);
    } else if (row.status === DeliveryStatus.PROCESSED) {
      figures.add('processed', provider);
    } else {
      const killed = evidence.killedRows.has(key) ? ', in a killed invocation' : '';
      notProcessed.push(`${key}: ${row.status} after ${row.attempts ?? 0} attempts (last error: ${row.lastError ?? 'none'}${killed})`);
    }
  }
  for (const name of ['processed', 'recovered by polling', 'dead-lettered poison rows']) figures.ensure(name);
  for (const key of alteredAccepted) figures.add('altered bodies accepted', providerOf(key));
  figures.ensure('altered bodies accepted');
  if (alteredAccepted.length) violation(`${alteredAccepted.length} rows hold a body the provider never sent`, alteredAccepted);
  if (notProcessed.length) violation(`${notProcessed.length} result rows are not ${DeliveryStatus.PROCESSED}`, notProcessed);
  if (poisonNotDead.length) violation(`${poisonNotDead.length} poison rows did not end ${DeliveryStatus.DEAD} in the DLQ`, poisonNotDead);
  const dlqOthers = evidence.deadLettered.filter((key) => originals.get(key)?.kind !== 'poison');
  if (dlqOthers.length) notes.push(`${dlqOthers.length} DLQ messages of healthy rows (a message that died while its row was recovered by the sweep)`);
}

/** Given up by the provider (dead after every attempt, or skipped by a disabled webhook): only polling brings them back. */
export function auditGivenUp({ rows, originals, figures }: RunAudit): void {
  for (const original of originals.values()) {
    if (original.state === 'dead' || original.state === 'skipped') {
      figures.add('results the provider gave up on', original.provider as Provider);
      if (rows.has(original.eventKey) && !rows.get(original.eventKey)!.recovered)
        figures.add('  stored before the provider gave up', original.provider as Provider);
    }
  }
  figures.ensure('results the provider gave up on');
}
