import { LambdaClient } from '@aws-sdk/client-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { HandlerRuntime } from '../shared/runtime/handler-runtime';
import { telemetryFromEnv } from '../shared/runtime/telemetry';
import { createRotator, LambdaRegistrar, RotatorDependencies, rotatedSecretsFromEnv } from './rotator';

/** The rotator's composition root: its dependencies from the environment the construct sets. */
export function rotatorDependenciesFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): RotatorDependencies {
  const { clients = {} } = runtime;
  return {
    secretsManager: clients.secretsManager ?? new SecretsManagerClient({}),
    registrar: new LambdaRegistrar(clients.lambda ?? new LambdaClient({})),
    rotated: rotatedSecretsFromEnv(env),
    telemetry: telemetryFromEnv(env, runtime.write, runtime.now),
  };
}

export function createRotatorFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): ReturnType<typeof createRotator> {
  return createRotator(rotatorDependenciesFromEnv(env, runtime));
}
