import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, Env } from '../../lib/contract';
import { adaptersFor } from '../shared/providers/registry';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { HandlerRuntime } from '../shared/runtime/handler-runtime';
import { Telemetry } from '../shared/runtime/telemetry';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { bodyStoreFromEnv } from '../shared/stores/body-store';
import { DynamoDbInboxStore } from '../shared/stores/inbox-store';
import { SqsWorkQueue } from '../shared/stores/work-queue';
import { HttpsSnsClient } from '../shared/providers/sns/sns-client';
import { createVerifier, VerifierDependencies } from './verifier';

/** The verifier's composition root: its dependencies from the environment the construct sets. */
export function verifierDependenciesFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): VerifierDependencies {
  const { clients = {}, now = Date.now } = runtime;
  // One SNS client is both the source of signing certificates and the confirmer of subscriptions.
  const sns = new HttpsSnsClient();
  return {
    adapters: adaptersFor(providersFromEnv(env), { snsEndpoint: env.AWS_ENDPOINT_URL_SNS }),
    secrets: secretCacheFromEnv(env, clients.secretsManager, now),
    certificates: sns,
    confirmations: sns,
    inbox: new DynamoDbInboxStore(clients.dynamodb ?? new DynamoDBClient({}), requiredEnv(env, Env.INBOX_TABLE)),
    queue: new SqsWorkQueue(clients.sqs ?? new SQSClient({ useQueueUrlAsEndpoint: false }), requiredEnv(env, Env.WORK_QUEUE_URL)),
    bodies: bodyStoreFromEnv(env, clients.s3),
    inlineBodyBytes: integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES),
    telemetry: new Telemetry(requiredEnv(env, Env.INBOX_NAME), 'verifier', runtime.write, now),
    now,
    maxBodyBytes: integerEnv(env, Env.MAX_BODY_BYTES, Defaults.MAX_BODY_BYTES),
    retentionSeconds: integerEnv(env, Env.RETENTION_SECONDS, Defaults.RETENTION_DAYS * 86_400),
  };
}

export function createVerifierFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): ReturnType<typeof createVerifier> {
  return createVerifier(verifierDependenciesFromEnv(env, runtime));
}
