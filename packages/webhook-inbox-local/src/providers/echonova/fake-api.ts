/**
 * A FAKE of Echonova's job endpoint, for the tests and the local twin: `GET /v1/jobs/{jobId}`
 * with a Bearer API key. Echonova's documentation names no job URL and no job resource, so this serves what the
 * reconciler's Echonova client assumes (see `lambda/shared/providers/echonova/job-api.ts`): a JSON
 * object with `jobId`, `status` (queued | processing | completed | failed), `createdAt` and, once
 * final, the result or the error. Unknown jobs answer 404; 429 and other failures can be injected.
 */
import { randomUUID } from 'node:crypto';
import { FakeApiServer, idAfter, nextStatus, Route, statusScript } from '../fake-api-server';

export const ECHONOVA_JOB_PATH = '/v1/jobs/';

export interface FakeEchonovaJob {
  readonly jobId: string;
  /** Absent: the resource names no creation time. */
  readonly createdAt?: string;
  /** The statuses the next polls see, in order; the last one stays. */
  statuses: string[];
  /** Extra fields of the resource once final (`result`, `error`, ...). */
  outcome: Record<string, unknown>;
}

export class FakeEchonovaApi extends FakeApiServer {
  private readonly jobs = new Map<string, FakeEchonovaJob>();

  constructor(apiKey: string = `en_key_${randomUUID().replace(/-/g, '')}`) {
    super(apiKey);
  }

  /** The reconciler's `taskUrlTemplate` for this fake. */
  get jobUrlTemplate(): string {
    return `${this.url}${ECHONOVA_JOB_PATH}{jobId}`;
  }

  /** Adds a job; `createdAt: null` serves one whose resource names no creation time. */
  addJob(job: { jobId?: string; status?: string | readonly string[]; createdAt?: string | null; outcome?: Record<string, unknown> } = {}): FakeEchonovaJob {
    const stored: FakeEchonovaJob = {
      jobId: job.jobId ?? `job_${randomUUID()}`,
      ...(job.createdAt === null ? {} : { createdAt: job.createdAt ?? new Date().toISOString() }),
      statuses: job.status === undefined ? ['queued'] : statusScript(job.status),
      outcome: job.outcome ?? {},
    };
    this.jobs.set(stored.jobId, stored);
    return stored;
  }

  job(jobId: string): FakeEchonovaJob | undefined {
    return this.jobs.get(jobId);
  }

  /** Moves a job on: the next polls see `status` (or walk the script), with `outcome` once final. */
  setStatus(jobId: string, status: string | readonly string[], outcome?: Record<string, unknown>): void {
    const job = this.jobs.get(jobId);
    if (!job) throw new Error(`no job ${jobId}`);
    job.statuses = statusScript(status);
    if (outcome !== undefined) job.outcome = outcome;
  }

  /**
   * The resource as a `job.*` delivery carries it (the status it is at now), byte for byte what
   * a poll answers: the reconciler's Echonova client assumes the two are the same object.
   */
  resourceBody(jobId: string): string {
    const job = this.jobs.get(jobId);
    if (!job) throw new Error(`no job ${jobId}`);
    return JSON.stringify(this.resource(job, job.statuses[0]));
  }

  protected routes(): Route[] {
    return [{ match: idAfter(ECHONOVA_JOB_PATH), answer: (id) => this.jobAnswer(id!) }];
  }

  protected errorBody(status: number): unknown {
    return { error: { status, message: `status ${status}` } };
  }

  private jobAnswer(jobId: string): { status: number; body: unknown } {
    const job = this.jobs.get(jobId);
    if (!job) return { status: 404, body: undefined };
    const status = nextStatus(job.statuses);
    return { status: 200, body: this.resource(job, status) };
  }

  private resource(job: FakeEchonovaJob, status: string): Record<string, unknown> {
    const final = status === 'completed' || status === 'failed';
    return { jobId: job.jobId, status, ...(job.createdAt === undefined ? {} : { createdAt: job.createdAt }), ...(final ? job.outcome : {}) };
  }
}
