/**
 * A FAKE of Answerline's task API (docs/providers/answerline.md), for the tests and the local twin: a faithful
 * little server of `GET /v1/async/task/{taskId}` (Bearer API key) and `GET /v1/async/status`.
 * It keeps a task store; each task follows a scripted list of statuses (one step per poll, the
 * last one sticks, so PROCESSING → QUEUED → COMPLETED is one script); unknown or forgotten
 * tasks answer 404; 429 (with Retry-After) and other failures can be injected. A task's answer
 * is `task`, `credits` and, once final, `response`: the same body a delivery carries, except
 * that the credits are read at the time of the request, as the real API does, so a polled body
 * differs byte for byte from the delivery of the same result.
 */
import { randomUUID } from 'node:crypto';
import { FakeApiServer, idAfter, nextStatus, Route, statusScript } from '../fake-api-server';

export const ANSWERLINE_TASK_PATH = '/v1/async/task/';

const FINAL = ['COMPLETED', 'FAILED'];

export interface FakeAnswerlineTask {
  readonly id: string;
  readonly idempotencyKey: string | null;
  readonly createdAt: string;
  /** The statuses the next polls see, in order; the last one stays. */
  statuses: string[];
  /** The result of a COMPLETED task, or the error of a FAILED one. */
  response: unknown;
  /** Polls answered for this task. */
  polls: number;
}

export interface NewFakeTask {
  readonly id?: string;
  readonly idempotencyKey?: string | null;
  readonly createdAt?: string;
  /** A status, or the script of statuses the polls walk through. @default 'QUEUED' */
  readonly status?: string | readonly string[];
  readonly response?: unknown;
}

export class FakeAnswerlineApi extends FakeApiServer {
  private readonly tasks = new Map<string, FakeAnswerlineTask>();
  /** Tasks whose current status is COMPLETED, kept as they move (the credits), so a body costs O(1). */
  private completed = 0;

  constructor(apiKey: string = `al_key_${randomUUID().replace(/-/g, '')}`) {
    super(apiKey);
  }

  /** The reconciler's `taskUrlTemplate` for this fake. */
  get taskUrlTemplate(): string {
    return `${this.url}${ANSWERLINE_TASK_PATH}{taskId}`;
  }

  /** Adds a task (QUEUED unless told otherwise); returns it. */
  addTask(task: NewFakeTask = {}): FakeAnswerlineTask {
    const statuses = task.status === undefined ? ['QUEUED'] : statusScript(task.status);
    const stored: FakeAnswerlineTask = {
      id: task.id ?? `tsk_${randomUUID()}`,
      idempotencyKey: task.idempotencyKey === undefined ? `job-${randomUUID()}` : task.idempotencyKey,
      createdAt: task.createdAt ?? new Date().toISOString(),
      statuses,
      response: task.response,
      polls: 0,
    };
    this.forget(stored.id);
    this.tasks.set(stored.id, stored);
    this.completed += completes(stored);
    return stored;
  }

  task(id: string): FakeAnswerlineTask | undefined {
    return this.tasks.get(id);
  }

  /** Moves a task on: the next polls see `status` (or walk the script). */
  setStatus(id: string, status: string | readonly string[], response?: unknown): void {
    const task = this.tasks.get(id);
    if (!task) throw new Error(`no task ${id}`);
    this.completed -= completes(task);
    task.statuses = statusScript(status);
    this.completed += completes(task);
    if (response !== undefined) task.response = response;
  }

  /** The task is no longer kept: 404 from now on. */
  forget(id: string): void {
    this.completed -= completes(this.tasks.get(id));
    this.tasks.delete(id);
  }

  /**
   * The body the task's delivery carries, as Answerline would sign and POST it once the task is
   * final (the status it is at now, without advancing the script).
   */
  deliveryBody(id: string): string {
    const task = this.tasks.get(id);
    if (!task) throw new Error(`no task ${id}`);
    return JSON.stringify(this.body(task, task.statuses[0]));
  }

  protected routes(): Route[] {
    return [
      { match: idAfter(ANSWERLINE_TASK_PATH), answer: (id) => this.taskAnswer(id!) },
      { match: (path) => (path === '/v1/async/status' ? {} : undefined), answer: () => ({ status: 200, body: this.status() }) },
    ];
  }

  protected errorBody(status: number): unknown {
    const code: Record<number, string> = { 401: 'UNAUTHORIZED', 404: 'RESOURCE_NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 429: 'RATE_LIMITED' };
    return { error: { code: code[status] ?? 'INTERNAL_ERROR', message: `status ${status}` } };
  }

  private taskAnswer(id: string): { status: number; body: unknown } {
    const task = this.tasks.get(id);
    if (!task) return { status: 404, body: undefined };
    task.polls += 1;
    const before = completes(task);
    const status = nextStatus(task.statuses);
    this.completed += completes(task) - before;
    return { status: 200, body: this.body(task, status) };
  }

  private body(task: FakeAnswerlineTask, status: string): unknown {
    const final = FINAL.includes(status);
    const response =
      task.response ??
      (status === 'FAILED' ? { error: { code: 'MODEL_ERROR', message: `failed-${task.id}` } } : { result: { answer: `answer-${task.id}`, confidence: 0.9 } });
    return {
      task: {
        id: task.id,
        status,
        idempotencyKey: task.idempotencyKey,
        createdAt: task.createdAt,
        ...(status === 'QUEUED' ? {} : { startedAt: task.createdAt }),
        ...(final ? { finishedAt: task.createdAt } : {}),
      },
      credits: { charged: status === 'COMPLETED' ? 1 : 0, remaining: this.creditsRemaining() },
      ...(final ? { response } : {}),
    };
  }

  /** The account's credits at the time of a request: they move on as tasks complete. */
  private creditsRemaining(): number {
    return 500 - this.completed;
  }

  /** `GET /v1/async/status`: how many tasks are still queued or processing. */
  private status(): { queuedTasks: number; processingTasks: number } {
    const current = [...this.tasks.values()].map((task) => task.statuses[0]);
    return { queuedTasks: current.filter((s) => s === 'QUEUED').length, processingTasks: current.filter((s) => s === 'PROCESSING').length };
  }
}

/** 1 when the task's current status is COMPLETED (what the account's credits count), else 0. */
function completes(task: FakeAnswerlineTask | undefined): number {
  return task?.statuses[0] === 'COMPLETED' ? 1 : 0;
}
