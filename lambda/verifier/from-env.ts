import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, Env, PendingIndex, POLLED_ONLY_ADAPTERS } from '../../lib/contract';
import { adaptersFor } from '../shared/providers/registry';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { HandlerRuntime } from '../shared/runtime/handler-runtime';
import { telemetryFromEnv } from '../shared/runtime/telemetry';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { bodyStoreFromEnv } from '../shared/stores/body-store';
import { DynamoDbInboxStore } from '../shared/stores/inbox';
import { SqsWorkQueue } from '../shared/stores/work-queue';
import { HttpsSnsClient } from '../shared/providers/sns/sns-client';
import { DynamoDbRejectionStore } from '../shared/stores/rejection-store';
import { RejectionRecorder } from './rejections';
import { createVerifier, VerifierDependencies } from './verifier';

/** The verifier's composition root: its dependencies from the environment the construct sets. */
export function verifierDependenciesFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): VerifierDependencies {
  const { clients = {}, now = Date.now } = runtime;
  // One SNS client is both the source of signing certificates and the confirmer of subscriptions.
  const sns = new HttpsSnsClient();
  const dynamodb = clients.dynamodb ?? new DynamoDBClient({});
  const inboxTable = requiredEnv(env, Env.INBOX_TABLE);
  const telemetry = telemetryFromEnv(env, runtime.write, now);
  return {
    // A polled-only provider posts nothing: the verifier serves no path for it.
    adapters: adaptersFor(
      providersFromEnv(env).filter((provider) => !POLLED_ONLY_ADAPTERS.includes(provider.adapter)),
      { snsEndpoint: env.AWS_ENDPOINT_URL_SNS },
    ),
    secrets: secretCacheFromEnv(env, clients.secretsManager, now),
    certificates: sns,
    confirmations: sns,
    inbox: new DynamoDbInboxStore(dynamodb, inboxTable, integerEnv(env, Env.PENDING_SHARDS, PendingIndex.SHARD_COUNT)),
    queue: new SqsWorkQueue(clients.sqs ?? new SQSClient({ useQueueUrlAsEndpoint: false }), requiredEnv(env, Env.WORK_QUEUE_URL)),
    bodies: bodyStoreFromEnv(env, runtime.bodyStore),
    inlineBodyBytes: integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES),
    telemetry,
    now,
    maxBodyBytes: integerEnv(env, Env.MAX_BODY_BYTES, Defaults.MAX_BODY_BYTES),
    retentionSeconds: integerEnv(env, Env.RETENTION_SECONDS, Defaults.RETENTION_DAYS * 86_400),
    rejections: new RejectionRecorder(
      new DynamoDbRejectionStore(dynamodb, inboxTable),
      {
        perMinute: integerEnv(env, Env.REJECTION_RECORDS_PER_MINUTE, Defaults.REJECTION_RECORDS_PER_MINUTE),
        samplePercent: integerEnv(env, Env.REJECTION_SAMPLE_PERCENT, Defaults.REJECTION_SAMPLE_PERCENT),
        retentionSeconds: integerEnv(env, Env.REJECTION_RETENTION_SECONDS, Defaults.REJECTION_RETENTION_DAYS * 86_400),
        counterTtlSeconds: Defaults.REJECTION_COUNTER_TTL_SECONDS,
        budgetMs: integerEnv(env, Env.REJECTION_RECORD_BUDGET_MS, Defaults.REJECTION_RECORD_BUDGET_MS),
      },
      telemetry,
      now,
    ),
  };
}

export function createVerifierFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): ReturnType<typeof createVerifier> {
  return createVerifier(verifierDependenciesFromEnv(env, runtime));
}
