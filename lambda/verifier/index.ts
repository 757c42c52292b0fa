import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Defaults, Env } from '../../lib/contract';
import { adaptersFor } from '../shared/providers/registry';
import { bodyStoreFromEnv } from '../shared/stores/body-store';
import { integerEnv, providersFromEnv, requiredEnv } from '../shared/runtime/config';
import { DynamoDbInboxStore } from '../shared/stores/inbox-store';
import { secretCacheFromEnv } from '../shared/signatures/secrets';
import { Telemetry } from '../shared/runtime/telemetry';
import { SqsWorkQueue } from '../shared/stores/work-queue';
import { createVerifier } from './verifier';

const env = process.env;

export const handler = createVerifier({
  adapters: adaptersFor(providersFromEnv(env)),
  secrets: secretCacheFromEnv(env),
  inbox: new DynamoDbInboxStore(new DynamoDBClient({}), requiredEnv(env, Env.INBOX_TABLE)),
  queue: new SqsWorkQueue(new SQSClient({ useQueueUrlAsEndpoint: false }), requiredEnv(env, Env.WORK_QUEUE_URL)),
  bodies: bodyStoreFromEnv(env),
  inlineBodyBytes: integerEnv(env, Env.INLINE_BODY_BYTES, Defaults.INLINE_BODY_BYTES),
  telemetry: new Telemetry(requiredEnv(env, Env.INBOX_NAME), 'verifier'),
  now: Date.now,
  maxBodyBytes: integerEnv(env, Env.MAX_BODY_BYTES, Defaults.MAX_BODY_BYTES),
  retentionSeconds: integerEnv(env, Env.RETENTION_SECONDS, Defaults.RETENTION_DAYS * 86_400),
});
