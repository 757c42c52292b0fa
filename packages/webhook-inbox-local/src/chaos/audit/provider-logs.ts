/**
 * GitHub and Stripe, judged from their own records (the fakes' logs of what they sent), the rule
 * stated here on its own: each event either provider made is one row, processed once.
 *
 * - GitHub's event is its GUID (its redeliveries share it); its row is keyed by the SHA-256 (hex)
 *   of the bytes GitHub sent, since GitHub signs no id. Stripe's event is its `id`; its row is
 *   keyed by it.
 * - An event none of whose attempts got a 2xx was lost at the endpoint (GitHub never retries;
 *   Stripe gave up): its row must exist all the same, marked recovered, or stored by a redelivery
 *   GitHub was asked for.
 * - No row of either provider exists that no event explains, and none is processed twice (one
 *   `processed` line per row).
 */
import { createHash } from 'node:crypto';
import { logReference } from '../../../../../lambda/shared/runtime/digest';
import { DeliveryStatus } from '../../../../../lib/contract';
import { GITHUB, STRIPE } from '../provider-logs';
import type { RunAudit } from './context';

export function auditProviderLogs({ evidence, rows, processedLines, violation, notes }: RunAudit): void {
  const events = [
    ...evidence.providerLogs.github.map((event) => ({ key: `${GITHUB}#${createHash('sha256').update(event.body).digest('hex')}`, lost: !event.stored })),
    ...evidence.providerLogs.stripe.map((event) => ({ key: `${STRIPE}#${event.id}`, lost: !event.stored })),
  ];
  const expected = new Set(events.map((event) => event.key));
  const missing: string[] = [];
  const notProcessed: string[] = [];
  const twice: string[] = [];
  let recovered = 0;
  for (const { key, lost } of events) {
    const row = rows.get(key);
    if (!row) {
      missing.push(`${key}${lost ? ' (lost at the endpoint)' : ''}`);
      continue;
    }
    if (row.recovered) recovered += 1;
    if (row.status !== DeliveryStatus.PROCESSED) notProcessed.push(`${key}: ${row.status}`);
    const lines = processedLines.get(logReference(key)) ?? 0;
    if (lines > 1) twice.push(`${key} (${lines} completions)`);
  }
  const strays = evidence.rows
    .filter((row) => (row.key.startsWith(`${GITHUB}#`) || row.key.startsWith(`${STRIPE}#`)) && !expected.has(row.key))
    .map((row) => row.key);
  if (missing.length) violation(`${missing.length} GitHub or Stripe events have no inbox row`, missing);
  if (notProcessed.length) violation(`${notProcessed.length} GitHub or Stripe rows are not processed`, notProcessed);
  if (twice.length) violation(`${twice.length} GitHub or Stripe rows were processed twice`, twice);
  if (strays.length) violation(`${strays.length} GitHub or Stripe rows match no event either provider made`, strays);
  const lost = events.filter((event) => event.lost).length;
  notes.push(`GitHub and Stripe: ${events.length} events, ${lost} lost at the endpoint, ${recovered} rows recovered from the providers' APIs`);
}
