import { handlerEnvironment } from '../shared/runtime/config';
import { createProcessorFromEnv } from './from-env';

export const handler = createProcessorFromEnv(handlerEnvironment(process.env));
