import { LambdaClient } from '@aws-sdk/client-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { Env } from '../../lib/contract';
import { requiredEnv } from '../shared/runtime/config';
import { Telemetry } from '../shared/runtime/telemetry';
import { createRotator, LambdaRegistrar, rotatedSecretsFromEnv } from './rotator';

const env = process.env;

export const handler = createRotator({
  secretsManager: new SecretsManagerClient({}),
  registrar: new LambdaRegistrar(new LambdaClient({})),
  rotated: rotatedSecretsFromEnv(env),
  telemetry: new Telemetry(requiredEnv(env, Env.INBOX_NAME), 'rotator'),
});
