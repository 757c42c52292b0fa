import type { Server } from 'node:http';

/** The running emulators: dynalite (DynamoDB) and fauxqs (SQS, and S3 on the same port). */
export interface Emulators {
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  readonly s3Endpoint: string;
  /** The variables that point AWS SDK clients at these emulators. */
  readonly environment: Readonly<Record<string, string>>;
  readonly dynamodb: Server;
  readonly sqs: { readonly server: Server; readonly port: number; stop(): Promise<void> };
  stop(): Promise<void>;
}

export interface EmulatorOptions {
  readonly dynamodbPort?: number;
  readonly sqsPort?: number;
  /** Keeps DynamoDB data on disk, so a restart (or a simulated outage) keeps it. */
  readonly dataDir?: string;
}

export function startEmulators(options?: EmulatorOptions): Promise<Emulators>;
