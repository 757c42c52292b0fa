import { createReconcilerFromEnv } from './from-env';

export const handler = createReconcilerFromEnv(process.env);
