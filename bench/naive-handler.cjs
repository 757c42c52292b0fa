// The naive handler of the cold-start comparison (bench/cold-start.ts): what a function looks
// like when it imports the same AWS SDK v3 clients as one of our handlers straight from
// node_modules, unbundled, and builds them at load time, as handlers do. It has none of our
// code, so it is a lower bound of a naive version of our handler. Which clients it loads is
// named in NAIVE_CLIENTS (comma-separated package names, e.g. `client-dynamodb,client-sqs`),
// taken from the bundle's own esbuild metafile.
'use strict';

const CLIENT_CLASSES = {
  'client-dynamodb': 'DynamoDBClient',
  'client-sqs': 'SQSClient',
  'client-s3': 'S3Client',
  'client-secrets-manager': 'SecretsManagerClient',
  'client-eventbridge': 'EventBridgeClient',
  'client-lambda': 'LambdaClient',
};

const clients = (process.env.NAIVE_CLIENTS || '')
  .split(',')
  .filter(Boolean)
  .map((name) => {
    const className = CLIENT_CLASSES[name];
    if (!className) throw new Error(`naive handler: unknown client ${name}`);
    const Client = require(`@aws-sdk/${name}`)[className];
    return new Client({});
  });

exports.handler = async () => ({ clients: clients.length });
