import { handlerEnvironment } from '../shared/runtime/config';
import { createRotatorFromEnv } from './from-env';

export const handler = createRotatorFromEnv(handlerEnvironment(process.env));
