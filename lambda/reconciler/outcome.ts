import { SubmissionStateName } from '../shared/stores/submission-record';

/**
 * How one due submission was settled in a run, as a reason code. A recheck `inProgress` is a
 * submission doing what it should (a batch still within its provider's time, a batch whose
 * results are being read over several runs): checked again, not overdue. `nearDeadline`: checked
 * inside its deadline's warning margin and still unread, or settled unread at its deadline with no
 * earlier check inside the margin.
 */
export type Outcome =
  | { readonly kind: 'settled'; readonly state: SubmissionStateName; readonly lastCheck: string; readonly taskId?: string; readonly nearDeadline?: boolean }
  | { readonly kind: 'recheck'; readonly dueAt: number; readonly lastCheck: string; readonly inProgress?: boolean; readonly nearDeadline?: boolean }
  | { readonly kind: 'rate_limited'; readonly nearDeadline?: boolean };

export function settled(state: SubmissionStateName, lastCheck: string, taskId?: string): Outcome {
  return { kind: 'settled', state, lastCheck, ...(taskId !== undefined ? { taskId } : {}) };
}
