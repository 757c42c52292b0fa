import { handlerEnvironment } from '../shared/runtime/config';
import { createReconcilerFromEnv } from './from-env';

export const handler = createReconcilerFromEnv(handlerEnvironment(process.env));
