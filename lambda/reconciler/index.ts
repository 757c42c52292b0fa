import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, Env } from '../../lib/contract';
import { bodyStoreFromEnv } from '../shared/stores/body-store';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { DynamoDbInboxStore } from '../shared/stores/inbox-store';
import { ledgerProvidersFor, pollingFromEnv } from '../shared/providers/polling';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { DynamoDbSubmissionStore } from '../shared/stores/submission-store';
import { Telemetry } from '../shared/runtime/telemetry';
import { SqsWorkQueue } from '../shared/stores/work-queue';
import { createReconciler } from './reconciler';

const env = process.env;
const dynamodb = new DynamoDBClient({});
const inboxTable = requiredEnv(env, Env.INBOX_TABLE);

export const handler = createReconciler({
  inbox: new DynamoDbInboxStore(dynamodb, inboxTable),
  queue: new SqsWorkQueue(new SQSClient({ useQueueUrlAsEndpoint: false }), requiredEnv(env, Env.WORK_QUEUE_URL)),
  telemetry: new Telemetry(requiredEnv(env, Env.INBOX_NAME), 'reconciler'),
  now: Date.now,
  sweepAfterMs: integerEnv(env, Env.SWEEP_AFTER_SECONDS, Defaults.SWEEP_AFTER_SECONDS) * 1000,
  batchSize: integerEnv(env, Env.SWEEP_BATCH_SIZE, Defaults.SWEEP_BATCH_SIZE),
  ledger: {
    submissions: new DynamoDbSubmissionStore(dynamodb, inboxTable),
    // Without the providers, submissions are still checked for a delivery and counted overdue.
    providers: env[Env.PROVIDERS] ? ledgerProvidersFor(providersFromEnv(env), pollingFromEnv(env), secretCacheFromEnv(env)) : new Map(),
    batchSize: integerEnv(env, Env.POLL_BATCH_SIZE, Defaults.POLL_BATCH_SIZE),
    retentionSeconds: integerEnv(env, Env.RETENTION_SECONDS, Defaults.RETENTION_DAYS * 86_400),
    bodies: bodyStoreFromEnv(env),
    inlineBodyBytes: integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES),
  },
});
