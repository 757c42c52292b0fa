import { createVerifierFromEnv } from './from-env';

export const handler = createVerifierFromEnv(process.env);
