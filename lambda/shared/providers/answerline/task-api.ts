import { parseJsonObject } from '../adapter';
import { commonOutcome, getTask, isPollResult, PollResult, ProviderApi, TaskRequestOptions } from '../provider-api';

const FINAL_STATUSES: readonly string[] = ['COMPLETED', 'FAILED'];

/**
 * Answerline's task API (docs/providers/answerline.md): `GET /v1/async/task/{taskId}` with `Authorization: Bearer`
 * returns `task`, `credits` and, once the task has finished, `response`: the same body a
 * delivery carries, so a final one is fed into the inbox as it came. Only COMPLETED and FAILED
 * are final; a task can go from PROCESSING back to QUEUED.
 */
export class AnswerlineApi implements ProviderApi {
  constructor(private readonly options: TaskRequestOptions) {}

  async fetchTask(taskId: string): Promise<PollResult> {
    const answer = await getTask(taskId, this.options);
    if (isPollResult(answer)) return answer;
    const common = commonOutcome(answer);
    if (common) return common;
    const task = parseJsonObject(answer.body)?.task as Record<string, unknown> | undefined;
    if (typeof task !== 'object' || task === null || typeof task.status !== 'string') return { kind: 'error', detail: 'malformed_response' };
    // Never feed another task's result under this id.
    if (task.id !== taskId) return { kind: 'error', detail: 'mismatched_task' };
    if (!FINAL_STATUSES.includes(task.status)) return { kind: 'pending', status: task.status.slice(0, 32) };
    return { kind: 'final', body: answer.body, headers: {} };
  }
}
