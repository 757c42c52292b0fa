import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ARCHIVE_BUCKET_ENV, Defaults, Env } from '../../lib/contract';
import { effectSinkFromEnv } from '../shared/effects/sinks-from-env';
import { resourceReadersFor } from '../shared/providers/authoritative-read';
import { adaptersFor } from '../shared/providers/registry';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { HandlerRuntime } from '../shared/runtime/handler-runtime';
import { telemetryFromEnv } from '../shared/runtime/telemetry';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { bodyStoreFromEnv, lazyS3Store } from '../shared/stores/body-store';
import { DynamoDbInboxStore } from '../shared/stores/inbox';
import { DynamoDbResultsStore } from '../shared/stores/results-store';
import { createProcessor, ProcessorDependencies } from './processor';

/** The processor's composition root: its dependencies from the environment the construct sets. */
export function processorDependenciesFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): ProcessorDependencies {
  const { clients = {}, now = Date.now } = runtime;
  const dynamodb = clients.dynamodb ?? new DynamoDBClient({});
  const providers = providersFromEnv(env, { signingSecrets: false });
  const inboxName = requiredEnv(env, Env.INBOX_NAME);
  const sink = effectSinkFromEnv(env, clients.eventBridge, runtime.functionSink);
  return {
    adapters: adaptersFor(providers),
    inbox: new DynamoDbInboxStore(dynamodb, requiredEnv(env, Env.INBOX_TABLE)),
    results: new DynamoDbResultsStore(dynamodb, requiredEnv(env, Env.RESULTS_TABLE), {
      retentionSeconds: integerEnv(env, Env.RESULT_RETENTION_SECONDS, Defaults.RETENTION_DAYS * 86_400),
      now,
    }),
    bodies: bodyStoreFromEnv(env, runtime.bodyStore),
    inlineBodyBytes: integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES),
    effects: sink && { sink, inboxName, bodyBucket: env[Env.BODY_BUCKET] || undefined },
    // API keys of the authoritative reads, cached like signing secrets; no client when none is configured.
    resourceReaders: providers.some((provider) => provider.authoritativeRead)
      ? resourceReadersFor(providers, secretCacheFromEnv(env, clients.secretsManager, now))
      : undefined,
    telemetry: telemetryFromEnv(env, runtime.write, now),
    now,
    leaseMs: integerEnv(env, Env.LEASE_SECONDS, Defaults.PROCESSOR_TIMEOUT_SECONDS) * 1000,
    maxReceiveCount: integerEnv(env, Env.MAX_RECEIVE_COUNT, Defaults.MAX_RECEIVE_COUNT),
    ...(env[ARCHIVE_BUCKET_ENV] ? { archive: runtime.archiveStore?.(env[ARCHIVE_BUCKET_ENV]) ?? lazyS3Store(env[ARCHIVE_BUCKET_ENV]) } : {}),
  };
}

export function createProcessorFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): ReturnType<typeof createProcessor> {
  return createProcessor(processorDependenciesFromEnv(env, runtime));
}
