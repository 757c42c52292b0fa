/** No altered body is accepted: every altered copy of a delivered result is quarantined, and nothing else is. */
import { providerOf, RunAudit } from './context';

export function auditQuarantine({ evidence, rows, figures, violation, notes }: RunAudit): void {
  const quarantined = new Map(evidence.quarantined.map((item) => [`${item.key} ${item.digest}`, item]));
  const alteredDigests = new Set<string>();
  const notQuarantined: string[] = [];
  for (const altered of evidence.deliveries.filter((delivery) => delivery.kind === 'altered')) {
    alteredDigests.add(`${altered.eventKey} ${altered.digest}`);
    if (altered.state !== 'delivered') continue;
    // A row fed by polling answers any later copy as a duplicate (its bytes were never the delivery's): documented.
    if (rows.get(altered.eventKey)?.recovered) {
      notes.push(`altered copy of ${altered.eventKey} answered as a duplicate: its row was fed by polling`);
      continue;
    }
    if (!quarantined.has(`${altered.eventKey} ${altered.digest}`)) notQuarantined.push(altered.eventKey);
  }
  for (const item of evidence.quarantined) figures.add('quarantined', providerOf(item.key));
  figures.ensure('quarantined');
  if (notQuarantined.length) violation(`${notQuarantined.length} altered duplicates were not quarantined`, notQuarantined);
  const falseQuarantine = evidence.quarantined.filter((item) => !alteredDigests.has(`${item.key} ${item.digest}`));
  if (falseQuarantine.length)
    violation(
      `${falseQuarantine.length} quarantined copies are not altered ones (a retry or concurrent copy was taken for an altered body)`,
      falseQuarantine.map((item) => item.key),
    );
}
