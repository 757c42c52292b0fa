import { FinalStatus, JobObservation } from './providers/adapter';

/** COMPLETED outranks FAILED whatever the creation times: a failure never replaces a success. */
const RANK: Readonly<Record<FinalStatus, number>> = { FAILED: 1, COMPLETED: 2 };

/**
 * A text key whose order is the conflict rule: status rank, then creation time, then task id as
 * a deterministic tie-break. The winner of a job is the observation with the greatest key, so
 * the outcome never depends on arrival order, and a conditional write on "greater than the
 * stored key" keeps state moving forward only.
 */
export function winnerOrder(observation: Pick<JobObservation, 'status' | 'createdAt' | 'taskId'>): string {
  return `${RANK[observation.status]}|${observation.createdAt}|${observation.taskId}`;
}
