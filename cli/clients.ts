import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { OpsConfig } from '../lib/contract';
import { DynamoDbInboxStore, InboxStore } from '../lambda/shared/stores/inbox';
import { OpsEndpoints } from './config';

/** The SDK clients the commands use; tests inject their own. */
export interface OpsClients {
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  readonly lambda: LambdaClient;
}

/** Credentials for emulators, which accept any; used only when endpoints are set and none are configured. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

interface ClientSettings {
  readonly region?: string;
  readonly credentials?: typeof LOCAL_CREDENTIALS;
}

function settings(endpoints: OpsEndpoints | undefined, region: string | undefined, env: NodeJS.ProcessEnv): ClientSettings {
  const local = endpoints !== undefined && Object.keys(endpoints).some((name) => name !== 'region');
  const hasCredentials = Boolean(
    env.AWS_ACCESS_KEY_ID ||
    env.AWS_PROFILE ||
    env.AWS_WEB_IDENTITY_TOKEN_FILE ||
    env.AWS_CONTAINER_CREDENTIALS_FULL_URI ||
    env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI,
  );
  const chosenRegion = region ?? endpoints?.region ?? (local && !env.AWS_REGION && !env.AWS_DEFAULT_REGION ? 'us-east-1' : undefined);
  return {
    ...(chosenRegion ? { region: chosenRegion } : {}),
    ...(local && !hasCredentials ? { credentials: LOCAL_CREDENTIALS } : {}),
  };
}

/** Clients for AWS, or for the endpoints of a local twin. */
export function createClients(endpoints?: OpsEndpoints, region?: string, env: NodeJS.ProcessEnv = process.env): OpsClients {
  const common = settings(endpoints, region, env);
  const s3Endpoint = endpoints?.s3 ?? env.AWS_ENDPOINT_URL_S3;
  return {
    dynamodb: new DynamoDBClient({ ...common, ...(endpoints?.dynamodb ? { endpoint: endpoints.dynamodb } : {}) }),
    // Queue URLs name the queue; the endpoint comes from the region (or the emulator), as in the handlers.
    sqs: new SQSClient({ ...common, useQueueUrlAsEndpoint: false, ...(endpoints?.sqs ? { endpoint: endpoints.sqs } : {}) }),
    // An emulator serves S3 path-style only.
    s3: new S3Client({ ...common, forcePathStyle: Boolean(s3Endpoint), ...(endpoints?.s3 ? { endpoint: endpoints.s3 } : {}) }),
    lambda: new LambdaClient({ ...common, ...(endpoints?.lambda ? { endpoint: endpoints.lambda } : {}) }),
  };
}

/** The inbox's store, behind its port: the commands read and revive rows through it. */
export function inboxStoreOf(clients: OpsClients, config: OpsConfig): InboxStore {
  return new DynamoDbInboxStore(clients.dynamodb, config.inboxTable, config.pendingShards);
}

export function createCloudFormationClient(region?: string): CloudFormationClient {
  return new CloudFormationClient(region ? { region } : {});
}

export function destroyClients(clients: OpsClients): void {
  clients.dynamodb.destroy();
  clients.sqs.destroy();
  clients.s3.destroy();
  clients.lambda.destroy();
}
