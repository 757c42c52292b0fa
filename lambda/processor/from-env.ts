import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ARCHIVE_BUCKET_ENV, BreakerRuntimeConfig, breakerProblems, Defaults, Env } from '../../lib/contract';
import { effectSinkFromEnv } from '../shared/effects/sinks-from-env';
import { resourceReadersFor } from '../shared/providers/authoritative-read';
import { adaptersFor } from '../shared/providers/registry';
import { ConfigurationError } from '../shared/runtime/errors';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { HandlerRuntime } from '../shared/runtime/handler-runtime';
import { telemetryFromEnv } from '../shared/runtime/telemetry';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { bodyStoreFromEnv, lazyS3Store } from '../shared/stores/body-store';
import { DynamoDbInboxStore } from '../shared/stores/inbox';
import { DynamoDbResultsStore } from '../shared/stores/results-store';
import { DynamoDbFlowStore } from '../shared/stores/flow';
import { FlowGate } from './flow-gate';
import { createProcessor, ProcessorDependencies } from './processor';

/** The processor's composition root: its dependencies from the environment the construct sets. */
export function processorDependenciesFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): ProcessorDependencies {
  const { clients = {}, now = Date.now } = runtime;
  const dynamodb = clients.dynamodb ?? new DynamoDBClient({});
  const providers = providersFromEnv(env, { signingSecrets: false });
  const inboxName = requiredEnv(env, Env.INBOX_NAME);
  const inboxTable = requiredEnv(env, Env.INBOX_TABLE);
  const sink = effectSinkFromEnv(env, clients.eventBridge, runtime.functionSink);
  const telemetry = telemetryFromEnv(env, runtime.write, now);
  const leaseMs = integerEnv(env, Env.LEASE_SECONDS, Defaults.PROCESSOR_TIMEOUT_SECONDS) * 1000;
  const breaker = breakerFromEnv(env);
  return {
    adapters: adaptersFor(providers),
    inbox: new DynamoDbInboxStore(dynamodb, inboxTable),
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
    telemetry,
    now,
    leaseMs,
    maxReceiveCount: integerEnv(env, Env.MAX_RECEIVE_COUNT, Defaults.MAX_RECEIVE_COUNT),
    flow: new FlowGate({ store: new DynamoDbFlowStore(dynamodb, inboxTable), ...(breaker ? { breaker } : {}), probeLeaseMs: leaseMs, telemetry, now }),
    ...pacingFromEnv(env),
    ...(env[ARCHIVE_BUCKET_ENV] ? { archive: runtime.archiveStore?.(env[ARCHIVE_BUCKET_ENV]) ?? lazyS3Store(env[ARCHIVE_BUCKET_ENV]) } : {}),
  };
}

/** The circuit breaker's settings (`Env.BREAKER`); undefined without a breaker. */
function breakerFromEnv(env: Record<string, string | undefined>): BreakerRuntimeConfig | undefined {
  const raw = env[Env.BREAKER];
  if (raw === undefined || raw === '') return undefined;
  let config: BreakerRuntimeConfig;
  try {
    config = JSON.parse(raw) as BreakerRuntimeConfig;
  } catch {
    throw new ConfigurationError(`environment variable ${Env.BREAKER} is not JSON`);
  }
  const problems = breakerProblems(config ?? {});
  if (problems.length > 0) throw new ConfigurationError(`environment variable ${Env.BREAKER}: ${problems.join('; ')}`);
  return config;
}

/** `processorMaxRowsPerSecond`: each row's share of an invocation's time, its concurrency over the rate. */
function pacingFromEnv(env: Record<string, string | undefined>): Pick<ProcessorDependencies, 'pacingMsPerRow'> {
  const raw = env[Env.MAX_ROWS_PER_SECOND];
  if (raw === undefined || raw === '') return {};
  const rate = Number(raw);
  if (!Number.isFinite(rate) || rate <= 0)
    throw new ConfigurationError(`environment variable ${Env.MAX_ROWS_PER_SECOND} must be a positive number, got "${raw}"`);
  const concurrency = integerEnv(env, Env.MAX_CONCURRENCY);
  return { pacingMsPerRow: (concurrency * 1000) / rate };
}

export function createProcessorFromEnv(env: Record<string, string | undefined>, runtime: HandlerRuntime = {}): ReturnType<typeof createProcessor> {
  return createProcessor(processorDependenciesFromEnv(env, runtime));
}
