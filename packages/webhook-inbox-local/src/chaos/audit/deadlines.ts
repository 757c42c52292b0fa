/**
 * A resource gone unread is announced, never left waiting. Stated here: a submission recorded with
 * a deadline the provider never met ends UNAVAILABLE, with one ResourceUnavailable event (one key;
 * at least once) for an operator to decide.
 */
import { SubmissionState } from '../../../../../lib/contract';
import { EXAMPLES, groupBy, RunAudit } from './context';

export function auditDeadlines({ evidence, figures, violation, notes }: RunAudit): void {
  const submissionStates = new Map(evidence.submissions.map((s) => [s.key, s.state]));
  const unavailableByKey = groupBy(evidence.unavailable, (event) => event.submissionKey);
  const deadlineProblems: string[] = [];
  for (const taskId of evidence.deadlineTaskIds) {
    const key = `ledger:answerline#${taskId}`;
    const announced = unavailableByKey.get(key) ?? [];
    if (submissionStates.get(key) !== SubmissionState.UNAVAILABLE) deadlineProblems.push(`${key}: ${submissionStates.get(key) ?? 'not recorded'}`);
    else if (new Set(announced.map((event) => event.effectKey)).size !== 1) deadlineProblems.push(`${key}: ${announced.length} ResourceUnavailable events`);
    else figures.add('deadlines passed unread, announced once', 'answerline');
  }
  figures.ensure('deadlines passed unread, announced once');
  if (deadlineProblems.length)
    violation(`${deadlineProblems.length} submissions past their deadline were not settled unavailable with one event`, deadlineProblems);
  const strayUnavailable = evidence.unavailable.filter(
    (event) => !evidence.deadlineTaskIds.some((taskId) => event.submissionKey === `ledger:answerline#${taskId}`),
  );
  if (strayUnavailable.length)
    notes.push(
      `${strayUnavailable.length} other ResourceUnavailable events: ${strayUnavailable
        .map((e) => `${e.submissionKey} ${e.reason}`)
        .slice(0, EXAMPLES)
        .join(', ')}`,
    );
}
