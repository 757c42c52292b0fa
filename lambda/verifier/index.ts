import { handlerEnvironment } from '../shared/runtime/config';
import { createVerifierFromEnv } from './from-env';

export const handler = createVerifierFromEnv(handlerEnvironment(process.env));
