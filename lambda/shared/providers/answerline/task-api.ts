import { parseJsonObject } from '../adapter';
import { commonOutcome, getTask, getWithKey, isPollResult, PollResult, ProviderApi, ProviderStatus, TaskRequestOptions } from '../provider-api';

/** The task URL's tail; the status endpoint (`GET /v1/async/status`) is its sibling. */
const TASK_PATH_TAIL = '/task/{taskId}';

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

  /**
   * `GET /v1/async/status` (beside `/v1/async/task/{taskId}`): `queuedTasks` and `processingTasks`,
   * the account's tasks not final yet. A task URL template of another shape has no status endpoint.
   */
  async fetchStatus(): Promise<ProviderStatus> {
    const template = this.options.urlTemplate;
    if (!template.endsWith(TASK_PATH_TAIL)) return { kind: 'error', detail: 'no_status_endpoint' };
    const answer = await getWithKey(`${template.slice(0, -TASK_PATH_TAIL.length)}/status`, this.options);
    if (isPollResult(answer)) return { kind: 'error', detail: answer.kind === 'error' ? answer.detail : answer.kind };
    if (answer.status !== 200) return { kind: 'error', detail: `http_${answer.status}` };
    const body = parseJsonObject(answer.body);
    const queuedTasks = body?.queuedTasks;
    const processingTasks = body?.processingTasks;
    if (!Number.isSafeInteger(queuedTasks) || !Number.isSafeInteger(processingTasks)) return { kind: 'error', detail: 'malformed_response' };
    return { kind: 'status', queuedTasks: queuedTasks as number, processingTasks: processingTasks as number };
  }
}
