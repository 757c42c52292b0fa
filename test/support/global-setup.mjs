// Starts dynalite and fauxqs once for the whole test run; test files create their own
// uniquely named tables and queues on them. Endpoints reach the test workers through env.
import { startEmulators } from '../../local/emulators.mjs';

export default async function globalSetup() {
  const emulators = await startEmulators();
  globalThis.__EMULATORS__ = emulators;
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: emulators.sqsEndpoint,
    AWS_ENDPOINT_URL_S3: emulators.s3Endpoint,
  });
}
