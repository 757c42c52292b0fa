import { createProcessorFromEnv } from './from-env';

export const handler = createProcessorFromEnv(process.env);
