/**
 * The endpoint's answers to what must not be stored: a test delivery verifies and gets a 2xx (a
 * 4xx would be a real one refused); a stale, future or forged request gets a 400 and a replay a
 * 2xx (a duplicate), unless an outage answered it 5xx.
 */
import { isSuccess } from '../../providers/sender';
import { RunAudit } from './context';

export function auditTestDeliveries({ evidence, violation, notes }: RunAudit): void {
  const tests = evidence.deliveries.filter((delivery) => delivery.kind === 'test');
  const refusedTests = tests.filter((delivery) => delivery.attempts.some((a) => a.status !== undefined && a.status >= 400 && a.status <= 499));
  if (refusedTests.length)
    violation(
      `${refusedTests.length} test deliveries were refused with a 4xx`,
      refusedTests.map((d) => d.eventKey),
    );
  const deadTests = tests.filter((delivery) => delivery.state !== 'delivered').length;
  if (deadTests) notes.push(`${deadTests} test deliveries died in an outage (nothing stored, as for any test delivery)`);
}

export function auditAdversaryAnswers({ evidence, violation, notes }: RunAudit): void {
  const refused = new Set(['stale', 'future', 'forged']);
  const wrongAnswers: string[] = [];
  let inconclusive = 0;
  for (const record of evidence.adversary) {
    if (record.during !== 'calm' && (record.status === undefined || record.status >= 500)) {
      inconclusive++;
      continue;
    }
    const ok = refused.has(record.kind) ? record.status === 400 : isSuccess(record.status);
    if (!ok) wrongAnswers.push(`${record.kind} ${record.eventKey} → ${record.status ?? 'no answer'}`);
  }
  if (inconclusive) notes.push(`${inconclusive} adversarial requests were sent during an outage and answered 5xx`);
  if (wrongAnswers.length) violation(`${wrongAnswers.length} stale, forged or replayed requests got the wrong answer`, wrongAnswers);
}
