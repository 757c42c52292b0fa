import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, Env } from '../../lib/contract';
import { integerEnv, requiredEnv } from '../shared/config';
import { DynamoDbInboxStore } from '../shared/inbox-store';
import { Telemetry } from '../shared/telemetry';
import { SqsWorkQueue } from '../shared/work-queue';
import { createReconciler } from './reconciler';

const env = process.env;

export const handler = createReconciler({
  inbox: new DynamoDbInboxStore(new DynamoDBClient({}), requiredEnv(env, Env.INBOX_TABLE)),
  queue: new SqsWorkQueue(new SQSClient({ useQueueUrlAsEndpoint: false }), requiredEnv(env, Env.WORK_QUEUE_URL)),
  telemetry: new Telemetry(requiredEnv(env, Env.INBOX_NAME), 'reconciler'),
  now: Date.now,
  sweepAfterMs: integerEnv(env, Env.SWEEP_AFTER_SECONDS, Defaults.SWEEP_AFTER_SECONDS) * 1000,
  batchSize: integerEnv(env, Env.SWEEP_BATCH_SIZE, Defaults.SWEEP_BATCH_SIZE),
});
