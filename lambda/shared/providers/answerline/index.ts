import { ProviderModule, SAME_ID_PROFILE } from '../provider-module';
import { answerlineAdapter } from './adapter';
import { AnswerlineApi } from './task-api';

/** Answerline: rows keyed by `task.id`, the id its task API is polled with. */
export const answerline: ProviderModule = {
  adapter: answerlineAdapter,
  taskApi: (options) => new AnswerlineApi(options),
  ledgerProfile: SAME_ID_PROFILE,
};
