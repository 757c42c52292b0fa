import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Defaults, Env } from '../../lib/contract';
import { adaptersFor } from '../shared/adapters';
import { bodyStoreFromEnv } from '../shared/body-store';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/config';
import { DynamoDbInboxStore } from '../shared/inbox-store';
import { DynamoDbResultsStore } from '../shared/results-store';
import { Telemetry } from '../shared/telemetry';
import { createProcessor } from './processor';

const env = process.env;
const dynamodb = new DynamoDBClient({});

export const handler = createProcessor({
  adapters: adaptersFor(providersFromEnv(env)),
  inbox: new DynamoDbInboxStore(dynamodb, requiredEnv(env, Env.INBOX_TABLE)),
  results: new DynamoDbResultsStore(dynamodb, requiredEnv(env, Env.RESULTS_TABLE)),
  bodies: bodyStoreFromEnv(env),
  inlineBodyBytes: integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES),
  telemetry: new Telemetry(requiredEnv(env, Env.INBOX_NAME), 'processor'),
  now: Date.now,
  leaseMs: integerEnv(env, Env.LEASE_SECONDS, Defaults.PROCESSOR_TIMEOUT_SECONDS) * 1000,
  maxReceiveCount: integerEnv(env, Env.MAX_RECEIVE_COUNT, Defaults.MAX_RECEIVE_COUNT),
});
