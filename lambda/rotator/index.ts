import { createRotatorFromEnv } from './from-env';

export const handler = createRotatorFromEnv(process.env);
