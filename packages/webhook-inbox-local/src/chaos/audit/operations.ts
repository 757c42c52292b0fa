/**
 * What an operator relies on: no secret, body or signature in any line of the twin's logs; every
 * AWS call a function made was one its role's policy allows; and what must page, pages.
 */
import { MetricName } from '../../../../../lib/contract';
import { RunAudit } from './context';
import { scanLogs } from './logs';

/** Refused requests that must page: the signature alarm's default threshold, which the run's flood exceeds within one period. */
const SIGNATURE_FLOOD_PAGES = 10;

export function auditLogsClean({ evidence, logs, figures, violation }: RunAudit): void {
  const leaks = scanLogs(evidence.logDir, evidence.sensitive, logs);
  figures.set('log lines with a secret, body or signature', 'total', leaks.length);
  if (leaks.length) violation(`${leaks.length} log lines carry a secret, a body or a signature`, leaks);
}

export function auditIamAllowed({ evidence, figures, violation }: RunAudit): void {
  figures.set(
    'AWS calls judged by the IAM gateway',
    'total',
    Object.values(evidence.iam.evaluated).reduce((sum, n) => sum + n, 0),
  );
  figures.set('AWS calls denied (a grant the template lacks)', 'total', evidence.iam.denials.length);
  if (evidence.iam.denials.length)
    violation(
      `${evidence.iam.denials.length} AWS calls were denied by the functions' own role policies`,
      evidence.iam.denials.map((denial) => denial.message),
    );
}

/**
 * Stated here by the alarms' construct ids: a dead delivery, a flood of refused signatures, a
 * submission past its horizon without a result, each pages once the handlers counted it.
 */
export function auditAlarmsPaged({ evidence, figures, counted, violation, notes }: RunAudit): void {
  const alarmed = new Set(evidence.alarms.filter((change) => change.to === 'ALARM').map((change) => change.logicalId));
  const paged = (constructId: string) => [...alarmed].some((logicalId) => logicalId.includes(constructId));
  const refusedSignatures = counted(MetricName.AUTHENTICATION_FAILED);
  const mustPage: ReadonlyArray<readonly [string, boolean, string]> = [
    ['DeadDeliveries', counted(MetricName.DEAD_LETTERED) > 0, `${counted(MetricName.DEAD_LETTERED)} rows were dead-lettered`],
    [
      'SignatureFailures',
      refusedSignatures >= SIGNATURE_FLOOD_PAGES,
      `${refusedSignatures} requests were refused at the authenticity check, a flood among them`,
    ],
    ['OverdueSubmissions', counted(MetricName.OVERDUE) > 0, 'the reconciler counted overdue submissions'],
    [
      'SubmissionsNearDeadline',
      evidence.deadlineTaskIds.length > 0 || counted(MetricName.NEAR_DEADLINE) > 0,
      'a submission was recorded with a deadline shorter than the warning margin and its provider never answered',
    ],
  ];
  for (const [alarm, due, why] of mustPage) {
    figures.set(`alarm ${alarm} reached ALARM`, 'total', paged(alarm) ? 1 : 0);
    if (due && !paged(alarm)) violation(`the ${alarm} alarm never reached ALARM though ${why}`);
  }
  const pages = evidence.alarms.filter((change) => change.to === 'ALARM');
  notes.push(`alarms: ${pages.map((change) => `${change.logicalId} → ALARM`).join(', ') || 'none reached ALARM'}`);
}
