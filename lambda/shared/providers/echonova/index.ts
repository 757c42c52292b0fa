import { ProviderModule } from '../provider-module';
import { ECHONOVA_FINAL_JOB_EVENTS, echonovaAdapter, echonovaJobEventId, echonovaJobIdOf } from './adapter';
import { EchonovaApi } from './job-api';

/**
 * Echonova: a job's final event is stored under its job's event id (see the adapter); rows
 * written before that rule are under `<jobId>:job.completed` or `<jobId>:job.failed`, and the
 * ledger finds those too.
 */
export const echonova: ProviderModule = {
  adapter: echonovaAdapter,
  taskApi: (options) => new EchonovaApi(options),
  ledgerProfile: {
    eventIdsOf: (jobId) => [echonovaJobEventId(jobId), ...ECHONOVA_FINAL_JOB_EVENTS.map((event) => `${jobId}:${event}`)],
    taskIdOf: (eventId) => echonovaJobIdOf(eventId) ?? eventId.replace(/:job\.[A-Za-z0-9._-]+$/, ''),
  },
};
