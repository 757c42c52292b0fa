import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, Env, PendingIndex } from '../../lib/contract';
import { ledgerProvidersFor, pollingFromEnv } from '../shared/providers/polling';
import { ProviderApi } from '../shared/providers/provider-api';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { HandlerRuntime } from '../shared/runtime/handler-runtime';
import { telemetryFromEnv } from '../shared/runtime/telemetry';
import { busSinkFromEnv } from '../shared/effects/sinks';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { bodyStoreFromEnv } from '../shared/stores/body-store';
import { DynamoDbFlowStore } from '../shared/stores/flow';
import { DynamoDbInboxStore } from '../shared/stores/inbox';
import { DynamoDbSubmissionStore } from '../shared/stores/submission-store';
import { SqsWorkQueue } from '../shared/stores/work-queue';
import { createReconciler, ReconcilerDependencies } from './reconciler';
import { recoveryFromEnv } from './recovery-from-env';

export interface ReconcilerRuntime extends HandlerRuntime {
  /** Clients of polled provider APIs that replace the HTTP ones, by provider name. */
  readonly apis?: ReadonlyMap<string, ProviderApi>;
}

/** The reconciler's composition root: its dependencies from the environment the construct sets. */
export function reconcilerDependenciesFromEnv(env: Record<string, string | undefined>, runtime: ReconcilerRuntime = {}): ReconcilerDependencies {
  const { clients = {}, now = Date.now } = runtime;
  const dynamodb = clients.dynamodb ?? new DynamoDBClient({});
  const inboxTable = requiredEnv(env, Env.INBOX_TABLE);
  const inboxName = requiredEnv(env, Env.INBOX_NAME);
  const bus = busSinkFromEnv(env, clients.eventBridge);
  const secrets = secretCacheFromEnv(env, clients.secretsManager, now);
  const retentionSeconds = integerEnv(env, Env.RETENTION_SECONDS, Defaults.RETENTION_DAYS * 86_400);
  const bodies = bodyStoreFromEnv(env, runtime.bodyStore);
  const inlineBodyBytes = integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES);
  const recovery = recoveryFromEnv(env, dynamodb, inboxTable, secrets, { retentionSeconds, inlineBodyBytes, ...(bodies ? { bodies } : {}) });
  return {
    inbox: new DynamoDbInboxStore(dynamodb, inboxTable, integerEnv(env, Env.PENDING_SHARDS, PendingIndex.SHARD_COUNT)),
    queue: new SqsWorkQueue(clients.sqs ?? new SQSClient({ useQueueUrlAsEndpoint: false }), requiredEnv(env, Env.WORK_QUEUE_URL)),
    flow: new DynamoDbFlowStore(dynamodb, inboxTable),
    telemetry: telemetryFromEnv(env, runtime.write, now),
    now,
    sweepAfterMs: integerEnv(env, Env.SWEEP_AFTER_SECONDS, Defaults.SWEEP_AFTER_SECONDS) * 1000,
    sweepStep: { pageEntries: Defaults.SWEEP_PAGE_ENTRIES, pagesPerShard: Defaults.SWEEP_PAGES_PER_STEP },
    ledger: {
      submissions: new DynamoDbSubmissionStore(dynamodb, inboxTable),
      // Without the providers, submissions are still checked for a delivery and counted overdue.
      providers: env[Env.PROVIDERS]
        ? ledgerProvidersFor(providersFromEnv(env, { signingSecrets: false }), pollingFromEnv(env), secrets, runtime.apis)
        : new Map(),
      batchSize: integerEnv(env, Env.POLL_BATCH_SIZE, Defaults.POLL_BATCH_SIZE),
      retentionSeconds,
      bodies,
      inlineBodyBytes,
      deadlineWarningMs: integerEnv(env, Env.DEADLINE_WARNING_SECONDS, Defaults.DEADLINE_WARNING_SECONDS) * 1000,
      ...(bus ? { unavailableEvents: { bus, inboxName } } : {}),
    },
    ...(recovery ? { recovery } : {}),
  };
}

export function createReconcilerFromEnv(env: Record<string, string | undefined>, runtime: ReconcilerRuntime = {}): ReturnType<typeof createReconciler> {
  return createReconciler(reconcilerDependenciesFromEnv(env, runtime));
}
