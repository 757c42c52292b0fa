/**
 * The right winner per job, recomputed from the provider's own record of its tasks: the most
 * recently created COMPLETED task wins, a FAILED task never replaces a COMPLETED one.
 */
import type { AnswerlineTask } from '../../providers/answerline/simulator';
import { isSuccess } from '../../providers/sender';
import type { Provider } from '../plan';
import { groupBy, RunAudit } from './context';

export interface Candidate {
  readonly taskId: string;
  readonly status: 'COMPLETED' | 'FAILED';
  readonly createdMs: number;
}

/** The winner the rule picks for each job, by `<provider>#<job key>`. */
export type Winners = ReadonlyMap<string, Candidate & { readonly provider: Provider; readonly jobKey: string }>;

/** Each job's stored result is the rule's winner; the winners, and how many jobs had results arrive in reverse order. */
export function auditWinners({ evidence, figures, violation }: RunAudit): { winners: Winners; reversed: number } {
  const results = new Map(evidence.results.map((item) => [item.key, item]));
  const winners = new Map<string, Candidate & { provider: Provider; jobKey: string }>();
  const offer = (provider: Provider, jobKey: string, taskId: string, status: 'COMPLETED' | 'FAILED', createdAt: string) => {
    const candidate = { provider, jobKey, taskId, status, createdMs: Date.parse(createdAt) };
    const key = `${provider}#${jobKey}`;
    const current = winners.get(key);
    if (!current || outranks(candidate, current)) winners.set(key, candidate);
  };
  for (const task of evidence.answerlineTasks) {
    if (task.status !== 'COMPLETED' && task.status !== 'FAILED') continue;
    offer('answerline', task.jobKey, task.id, task.status, task.createdAt);
  }
  for (const job of evidence.echonovaJobs) {
    if (job.status !== 'completed' && job.status !== 'failed') continue;
    offer('echonova', job.jobId, job.jobId, job.status === 'completed' ? 'COMPLETED' : 'FAILED', job.createdAt);
  }
  const wrongWinners: string[] = [];
  for (const [key, winner] of winners) {
    const stored = results.get(key);
    if (!stored || stored.taskId !== winner.taskId || stored.status !== winner.status) {
      wrongWinners.push(`${key}: stored ${stored ? `${stored.taskId}/${stored.status}` : 'nothing'}, rule says ${winner.taskId}/${winner.status}`);
      figures.add('wrong winners', winner.provider);
    }
  }
  figures.ensure('wrong winners');
  figures.set('jobs decided', 'answerline', [...winners.values()].filter((w) => w.provider === 'answerline').length);
  figures.set('jobs decided', 'echonova', [...winners.values()].filter((w) => w.provider === 'echonova').length);
  if (wrongWinners.length) violation(`${wrongWinners.length} jobs have the wrong winner`, wrongWinners);
  const reversed = reverseOrderJobs(evidence.answerlineTasks);
  figures.set('jobs whose results arrived in reverse order', 'answerline', reversed);
  return { winners, reversed };
}

/**
 * The conflict rule, stated here on its own: a COMPLETED result outranks a FAILED one whatever
 * their creation times, then the later created wins, then (a tie) the greater task id.
 */
export function outranks(a: Candidate, b: Candidate): boolean {
  const rank = (candidate: Candidate) => (candidate.status === 'COMPLETED' ? 1 : 0);
  return (rank(a) - rank(b) || a.createdMs - b.createdMs || (a.taskId > b.taskId ? 1 : a.taskId < b.taskId ? -1 : 0)) > 0;
}

/** Jobs with several tasks whose older task's result reached the inbox after a newer one's. */
function reverseOrderJobs(tasks: readonly AnswerlineTask[]): number {
  const byJob = groupBy(
    tasks.filter((task) => task.delivery),
    (task) => task.jobKey,
  );
  let reversed = 0;
  for (const jobTasks of byJob.values()) {
    if (jobTasks.length < 2) continue;
    const arrival = (task: AnswerlineTask) => task.delivery!.attempts.find((a) => isSuccess(a.status))?.at;
    const ordered = [...jobTasks].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const times = ordered.map(arrival);
    if (times.some((t, i) => i > 0 && t !== undefined && times[i - 1] !== undefined && t < times[i - 1]!)) reversed++;
  }
  return reversed;
}
