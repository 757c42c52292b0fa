import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Defaults, Env } from '../../lib/contract';
import { adaptersFor } from '../shared/providers/registry';
import { resourceReadersFor } from '../shared/providers/authoritative-read';
import { bodyStoreFromEnv } from '../shared/stores/body-store';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { effectSinkFromEnv } from '../shared/effects/sinks';
import { DynamoDbInboxStore } from '../shared/stores/inbox-store';
import { DynamoDbResultsStore } from '../shared/stores/results-store';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { Telemetry } from '../shared/runtime/telemetry';
import { createProcessor } from './processor';

const env = process.env;
const dynamodb = new DynamoDBClient({});
const providers = providersFromEnv(env);
const inboxName = requiredEnv(env, Env.INBOX_NAME);
const sink = effectSinkFromEnv(env);

export const handler = createProcessor({
  adapters: adaptersFor(providers),
  inbox: new DynamoDbInboxStore(dynamodb, requiredEnv(env, Env.INBOX_TABLE)),
  results: new DynamoDbResultsStore(dynamodb, requiredEnv(env, Env.RESULTS_TABLE)),
  bodies: bodyStoreFromEnv(env),
  inlineBodyBytes: integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES),
  effects: sink && { sink, inboxName, bodyBucket: env[Env.BODY_BUCKET] || undefined },
  // API keys of the authoritative reads, cached like signing secrets; no client when none is configured.
  resourceReaders: providers.some((provider) => provider.authoritativeRead) ? resourceReadersFor(providers, secretCacheFromEnv(env)) : undefined,
  telemetry: new Telemetry(inboxName, 'processor'),
  now: Date.now,
  leaseMs: integerEnv(env, Env.LEASE_SECONDS, Defaults.PROCESSOR_TIMEOUT_SECONDS) * 1000,
  maxReceiveCount: integerEnv(env, Env.MAX_RECEIVE_COUNT, Defaults.MAX_RECEIVE_COUNT),
});
