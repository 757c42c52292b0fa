// Starts the protocol-level emulators the tests and the local twin run against, on loopback.
// Plain ESM because fauxqs is ESM-only; TypeScript callers load it with a dynamic import.
import dynalite from 'dynalite';
import { buildApp } from 'fauxqs';

/**
 * @param {{ dynamodbPort?: number, sqsPort?: number, dataDir?: string }} [options]
 *   dataDir keeps DynamoDB data on disk, so a restart (or a simulated outage) keeps it.
 */
export async function startEmulators(options = {}) {
  const dynamodb = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(options.dataDir ? { path: options.dataDir } : {}),
  });
  await new Promise((resolve, reject) => {
    dynamodb.once('error', reject);
    dynamodb.listen(options.dynamodbPort ?? 0, '127.0.0.1', resolve);
  });
  // Not startFauxqs: it listens on every interface whatever its host option says. Its app is the
  // same emulator; `host` names the queue URLs' host, as startFauxqs would.
  const sqsApp = buildApp({ host: '127.0.0.1', logger: false });
  await sqsApp.listen({ port: options.sqsPort ?? 0, host: '127.0.0.1' });
  const sqs = {
    server: sqsApp.server,
    port: sqsApp.server.address().port,
    async stop() {
      await sqsApp.close();
    },
  };
  const dynamodbEndpoint = `http://127.0.0.1:${dynamodb.address().port}`;
  const sqsEndpoint = `http://127.0.0.1:${sqs.port}`;
  // fauxqs serves S3 (path-style) on the same port as SQS.
  const s3Endpoint = sqsEndpoint;
  return {
    dynamodbEndpoint,
    sqsEndpoint,
    s3Endpoint,
    /** The variables that point AWS SDK clients at these emulators (the SDK reads them when a client is created). */
    environment: {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint,
      AWS_ENDPOINT_URL_SQS: sqsEndpoint,
      AWS_ENDPOINT_URL_S3: s3Endpoint,
    },
    dynamodb,
    sqs,
    async stop() {
      await sqs.stop();
      await new Promise((resolve) => dynamodb.close(() => resolve(undefined)));
    },
  };
}
