import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { EffectSink } from '../effects/sinks';
import type { BodyStore } from '../stores/body-store';
import type { LineWriter } from './telemetry';

/** The SDK clients a handler may use; each handler creates only those it needs. */
export interface AwsClients {
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly secretsManager: SecretsManagerClient;
  readonly eventBridge: EventBridgeClient;
  readonly lambda: LambdaClient;
}

/**
 * What a handler's composition root takes besides its environment. In Lambda nothing: every
 * client is the SDK's default (region, credentials and endpoints from the environment), the
 * clock is `Date.now` and log lines go to stdout. The tests and the bench hand in their own.
 */
export interface HandlerRuntime {
  readonly clients?: Partial<AwsClients>;
  /** The body store on the bucket the environment names, in place of the one on the default S3 client. */
  readonly bodyStore?: (bucket: string) => BodyStore;
  /** Opens the archive store on its bucket (the tests hand in one on a role client of their own). */
  readonly archiveStore?: (bucket: string) => BodyStore;
  /** The sink of the user's processing function, in place of the one on the default Lambda client. */
  readonly functionSink?: (functionArn: string) => EffectSink;
  readonly now?: () => number;
  readonly write?: LineWriter;
}
