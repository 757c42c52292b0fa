/**
 * The local IAM gateway denies what AWS would deny. Each role of a synthesized inbox calls the
 * emulators and stand-ins through it with real SDK clients: the calls its template grants go
 * through; an action not granted, a resource outside the grant, an index not granted, a bucket
 * prefix not granted, an explicit deny, an unknown key and a request the gateway cannot read are
 * refused with the error the SDK raises in AWS.
 */
import {
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { AdapterKind, DeliveryStatus, PollingDefaults, providerRuntimeConfig } from '../../../../../lib/contract';
import { EventBridgeStandIn } from '../../../src/aws/eventbridge/stand-in';
import { IamGateway, LocalCredentials } from '../../../src/aws/iam/gateway';
import { inboxBinding, registerInboxRoles } from '../../../src/aws/iam/inbox-roles';
import { InboxRole, synthesizeInbox } from '../../../src/twin/inbox-template';
import { LambdaInvokeStandIn } from '../../../src/aws/lambda/invoke-stand-in';
import { LOCAL_ACCOUNT, LOCAL_AWS, LOCAL_REGION, OPERATOR_ACCESS_KEY } from '../../../src/aws/local-aws';
import { createBodyBucket, createQueues, createTables, resourceNames } from '../../../src/aws/provision';
import { SecretsManagerStandIn } from '../../../src/aws/secretsmanager/stand-in';

const secretsStandIn = new SecretsManagerStandIn();
const eventBridge = new EventBridgeStandIn();
const lambdaStandIn = new LambdaInvokeStandIn();
const names = resourceNames(`iam-${Date.now().toString(36)}`);
const BUS = `${names.inboxTable}-bus`;
const PROCESSING_FUNCTION = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${names.inboxTable}-user`;
let gateway: IamGateway;
let endpoint: string;
let credentials: Partial<Record<InboxRole, LocalCredentials>>;
let workQueueUrl: string;
let signingSecretArn: string;
let apiKeyArn: string;
let secretsEndpoint: string;
let deadLetterQueueUrl: string;
const clients: { destroy(): void }[] = [];

/** Real SDK clients of one role, all pointed at the gateway. */
function as(role: InboxRole | LocalCredentials) {
  const config = { endpoint, region: LOCAL_REGION, credentials: typeof role === 'string' ? credentials[role]! : role, maxAttempts: 1 };
  const made = {
    dynamodb: new DynamoDBClient(config),
    sqs: new SQSClient({ ...config, useQueueUrlAsEndpoint: false }),
    s3: new S3Client({ ...config, forcePathStyle: true }),
    secrets: new SecretsManagerClient(config),
    events: new EventBridgeClient(config),
    lambda: new LambdaClient(config),
  };
  clients.push(...Object.values(made));
  return made;
}

const key = (pk: string, sk = 'delivery') => ({ pk: { S: pk }, sk: { S: sk } });

async function denial(call: Promise<unknown>): Promise<{ name: string; message: string }> {
  try {
    await call;
  } catch (error) {
    return { name: (error as Error).name, message: (error as Error).message };
  }
  throw new Error('the call was allowed');
}

beforeAll(async () => {
  const emulators = { dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB!, sqs: process.env.AWS_ENDPOINT_URL_SQS! };
  let eventsEndpoint: string;
  let lambdaEndpoint: string;
  [secretsEndpoint, eventsEndpoint, lambdaEndpoint] = await Promise.all([secretsStandIn.start(), eventBridge.start(), lambdaStandIn.start()]);
  const admin = {
    dynamodb: new DynamoDBClient({ ...LOCAL_AWS, endpoint: emulators.dynamodb }),
    sqs: new SQSClient({ ...LOCAL_AWS, endpoint: emulators.sqs, useQueueUrlAsEndpoint: false }),
    s3: new S3Client({ ...LOCAL_AWS, endpoint: emulators.sqs, forcePathStyle: true }),
    secrets: new SecretsManagerClient({ ...LOCAL_AWS, endpoint: secretsEndpoint }),
  };
  clients.push(...Object.values(admin));
  await createTables(admin.dynamodb, names);
  const queues = await createQueues(admin.sqs, names);
  workQueueUrl = queues.workQueueUrl;
  deadLetterQueueUrl = queues.deadLetterQueueUrl;
  await createBodyBucket(admin.s3, names);
  signingSecretArn = (
    await admin.secrets.send(new CreateSecretCommand({ Name: `${names.inboxTable}/answerline`, SecretString: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }))
  ).ARN!;
  apiKeyArn = (await admin.secrets.send(new CreateSecretCommand({ Name: `${names.inboxTable}/api-key`, SecretString: 'key' }))).ARN!;
  eventBridge.createBus(BUS);
  lambdaStandIn.deploy(PROCESSING_FUNCTION, () => ({ ok: true }));

  const provider = providerRuntimeConfig({ name: 'answerline', adapter: AdapterKind.ANSWERLINE, secretId: signingSecretArn });
  const synthesized = synthesizeInbox({
    account: LOCAL_ACCOUNT,
    region: LOCAL_REGION,
    providers: [provider],
    polling: [
      {
        provider: 'answerline',
        taskUrlTemplate: 'http://127.0.0.1:9/v1/async/task/{taskId}',
        apiKeySecretId: apiKeyArn,
        horizonSeconds: PollingDefaults.answerline.horizonSeconds,
        recheckSeconds: 600,
      },
    ],
    bodyBucket: true,
    eventBus: true,
    processingFunction: true,
  });
  gateway = new IamGateway({
    upstreams: {
      dynamodb: emulators.dynamodb,
      sqs: emulators.sqs,
      s3: emulators.sqs,
      secretsmanager: secretsEndpoint,
      events: eventsEndpoint,
      lambda: lambdaEndpoint,
    },
    account: LOCAL_ACCOUNT,
    region: LOCAL_REGION,
    secrets: secretsStandIn,
    operatorKeys: [OPERATOR_ACCESS_KEY],
  });
  endpoint = await gateway.start();
  const binding = inboxBinding(
    synthesized,
    {
      inboxTable: names.inboxTable,
      resultsTable: names.resultsTable,
      workQueueUrl,
      deadLetterQueueUrl: queues.deadLetterQueueUrl,
      bodyBucket: names.bodyBucket,
      eventBusName: BUS,
      signingSecretArns: { answerline: signingSecretArn },
      apiKeySecretArns: { [apiKeyArn]: apiKeyArn },
      processingFunctionArn: PROCESSING_FUNCTION,
    },
    LOCAL_ACCOUNT,
    LOCAL_REGION,
  );
  credentials = registerInboxRoles(gateway, synthesized, binding, LOCAL_ACCOUNT);
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await gateway?.stop();
  await Promise.all([secretsStandIn.stop(), eventBridge.stop(), lambdaStandIn.stop()]);
});

describe('what the template grants goes through', () => {
  test('the verifier writes and reads its rows, enqueues, reads its signing secret and stores a body', async () => {
    const verifier = as('verifier');
    await verifier.dynamodb.send(
      new PutItemCommand({ TableName: names.inboxTable, Item: { ...key('answerline#granted'), status: { S: DeliveryStatus.RECEIVED } } }),
    );
    expect((await verifier.dynamodb.send(new GetItemCommand({ TableName: names.inboxTable, Key: key('answerline#granted') }))).Item?.status?.S).toBe(
      DeliveryStatus.RECEIVED,
    );
    await verifier.sqs.send(new SendMessageCommand({ QueueUrl: workQueueUrl, MessageBody: '{"key":"answerline#granted"}' }));
    expect((await verifier.secrets.send(new GetSecretValueCommand({ SecretId: signingSecretArn }))).SecretString).toMatch(/^whsec_/);
    await verifier.s3.send(new PutObjectCommand({ Bucket: names.bodyBucket, Key: 'bodies/answerline/abc', Body: 'x' }));
    expect(gateway.denialsOf('verifier')).toEqual([]);
  });

  test('the processor receives from the queue, publishes on its bus and invokes the processing function', async () => {
    const processor = as('processor');
    await processor.sqs.send(new ReceiveMessageCommand({ QueueUrl: workQueueUrl, WaitTimeSeconds: 0 }));
    const put = await processor.events.send(
      new PutEventsCommand({ Entries: [{ EventBusName: BUS, Source: 'cdk-webhook-inbox', DetailType: 'WebhookReceived', Detail: '{}' }] }),
    );
    expect(put.FailedEntryCount).toBe(0);
    const invoked = await processor.lambda.send(new InvokeCommand({ FunctionName: PROCESSING_FUNCTION, Payload: Buffer.from('{}') }));
    expect(invoked.StatusCode).toBe(200);
    expect(gateway.denialsOf('processor')).toEqual([]);
  });

  test('the reconciler queries the pending index and reads the polling API key', async () => {
    const reconciler = as('reconciler');
    await reconciler.dynamodb.send(
      new QueryCommand({
        TableName: names.inboxTable,
        IndexName: 'pending',
        KeyConditionExpression: 'pendingShard = :s',
        ExpressionAttributeValues: { ':s': { S: 'p00' } },
      }),
    );
    expect((await reconciler.secrets.send(new GetSecretValueCommand({ SecretId: apiKeyArn }))).SecretString).toBe('key');
  });

  test('operators are let through without evaluation', async () => {
    const operator = as(LOCAL_AWS.credentials);
    await operator.dynamodb.send(new DeleteItemCommand({ TableName: names.inboxTable, Key: key('answerline#operator') }));
  });
});

describe('what the template does not grant is refused as AWS refuses it', () => {
  test('an action not granted: the verifier cannot delete a row', async () => {
    const refused = await denial(as('verifier').dynamodb.send(new DeleteItemCommand({ TableName: names.inboxTable, Key: key('answerline#granted') })));
    expect(refused.name).toBe('AccessDeniedException');
    expect(refused.message).toMatch(
      new RegExp(
        `^User: arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/\\w+/verifier is not authorized to perform: dynamodb:DeleteItem on resource: arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${names.inboxTable} because no identity-based policy allows the dynamodb:DeleteItem action$`,
      ),
    );
  });

  test('a resource outside the grant: the verifier cannot write the results table', async () => {
    const refused = await denial(as('verifier').dynamodb.send(new PutItemCommand({ TableName: names.resultsTable, Item: { pk: { S: 'answerline#job' } } })));
    expect(refused.name).toBe('AccessDeniedException');
    expect(refused.message).toContain(`table/${names.resultsTable} because`);
  });

  test('an index not granted: only the reconciler queries the inbox indexes', async () => {
    const query = new QueryCommand({
      TableName: names.inboxTable,
      IndexName: 'pending',
      KeyConditionExpression: 'pendingShard = :s',
      ExpressionAttributeValues: { ':s': { S: 'p00' } },
    });
    const refused = await denial(as('processor').dynamodb.send(query));
    expect(refused.message).toContain(`table/${names.inboxTable}/index/pending because no identity-based policy allows the dynamodb:Query action`);
  });

  test('a bucket prefix not granted: the verifier stores bodies, not responses', async () => {
    const refused = await denial(as('verifier').s3.send(new PutObjectCommand({ Bucket: names.bodyBucket, Key: 'responses/answerline/abc', Body: 'x' })));
    expect(refused.name).toBe('AccessDenied');
    expect(refused.message).toContain(`arn:aws:s3:::${names.bodyBucket}/responses/answerline/abc`);
  });

  test('a secret not granted, a bus not granted, a function not granted, a queue action not granted', async () => {
    const verifier = as('verifier');
    expect((await denial(verifier.secrets.send(new GetSecretValueCommand({ SecretId: apiKeyArn })))).name).toBe('AccessDeniedException');
    expect(
      (await denial(verifier.events.send(new PutEventsCommand({ Entries: [{ EventBusName: BUS, Source: 's', DetailType: 'd', Detail: '{}' }] })))).name,
    ).toBe('AccessDeniedException');
    expect((await denial(verifier.lambda.send(new InvokeCommand({ FunctionName: PROCESSING_FUNCTION })))).name).toBe('AccessDeniedException');
    expect((await denial(verifier.sqs.send(new ReceiveMessageCommand({ QueueUrl: workQueueUrl })))).name).toBe('AccessDenied');
    const processor = as('processor');
    const otherBus = await denial(
      processor.events.send(new PutEventsCommand({ Entries: [{ EventBusName: 'default', Source: 's', DetailType: 'd', Detail: '{}' }] })),
    );
    expect(otherBus.message).toContain(`event-bus/default because`);
  });

  test('an explicit deny wins over an allow', async () => {
    const denied = gateway.register({
      name: 'explicit',
      roleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/Explicit`,
      policies: [
        {
          name: 'mixed',
          document: {
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Action: 'dynamodb:*', Resource: '*' },
              { Effect: 'Deny', Action: 'dynamodb:GetItem', Resource: `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${names.inboxTable}` },
            ],
          },
        },
      ],
    });
    const refused = await denial(as(denied).dynamodb.send(new GetItemCommand({ TableName: names.inboxTable, Key: key('answerline#granted') })));
    expect(refused.message).toContain('with an explicit deny in an identity-based policy');
  });

  test("an explicit deny in the queue's resource policy wins over the role's allow", async () => {
    const queueArn = `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${names.workQueue}`;
    const insecure = gateway.register({
      name: 'insecure',
      roleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/Insecure`,
      policies: [{ name: 'send', document: { Statement: [{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: queueArn }] } }],
      resourcePolicies: new Map([
        [
          queueArn,
          {
            Statement: [
              { Effect: 'Deny', Principal: { AWS: '*' }, Action: 'sqs:*', Resource: queueArn, Condition: { Bool: { 'aws:SecureTransport': 'true' } } },
            ],
          },
        ],
      ]),
    });
    const refused = await denial(as(insecure).sqs.send(new SendMessageCommand({ QueueUrl: workQueueUrl, MessageBody: 'x' })));
    expect(refused.message).toContain('with an explicit deny in a resource-based policy');
  });

  test('an unknown access key is refused, and a request the gateway cannot read is refused, never let through', async () => {
    const stranger = as({ accessKeyId: 'AKIAUNKNOWN', secretAccessKey: 'x' });
    expect((await denial(stranger.dynamodb.send(new GetItemCommand({ TableName: names.inboxTable, Key: key('a') })))).name).toBe('UnrecognizedClientException');
    const transact = new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: names.inboxTable, Item: key('answerline#t') } }] });
    const refused = await denial(as('verifier').dynamodb.send(transact));
    expect(refused.message).toContain('does not understand this request');
  });
});

describe('condition keys DynamoDB reads from the request are judged as AWS judges them', () => {
  /** A role that may write only the attributes `pk`, `sk` and `note`, and read back nothing it may not write (the pattern AWS documents). */
  function attributeLimited(): LocalCredentials {
    return gateway.register({
      name: 'attributes',
      roleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/Attributes`,
      policies: [
        {
          name: 'attributes',
          document: {
            Statement: [
              {
                Effect: 'Allow',
                Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'],
                Resource: `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${names.inboxTable}`,
                Condition: {
                  'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'note'], 'dynamodb:LeadingKeys': ['attributes#1'] },
                  StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'], 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
                },
              },
            ],
          },
        },
      ],
    });
  }

  test('ForAllValues on dynamodb:Attributes: every attribute a write names, in its item, its update or its condition, must be listed', async () => {
    const { dynamodb } = as(attributeLimited());
    const item = { ...key('attributes#1'), note: { S: 'n' } };
    await dynamodb.send(new PutItemCommand({ TableName: names.inboxTable, Item: item }));
    await dynamodb.send(
      new PutItemCommand({ TableName: names.inboxTable, Item: item, ConditionExpression: 'attribute_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } }),
    );
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: names.inboxTable,
        Key: key('attributes#1'),
        UpdateExpression: 'SET note = :n',
        ConditionExpression: 'size(note) < :max AND begins_with(pk, :p)',
        ExpressionAttributeValues: { ':n': { S: 'm' }, ':max': { N: '10' }, ':p': { S: 'attributes' } },
      }),
    );
    await dynamodb.send(new GetItemCommand({ TableName: names.inboxTable, Key: key('attributes#1'), ProjectionExpression: 'note' }));

    const refusals = [
      // An attribute outside the list in the item, however innocent its name.
      new PutItemCommand({ TableName: names.inboxTable, Item: { ...item, status: { S: DeliveryStatus.RECEIVED } } }),
      // ... named in a condition, bare or through an alias.
      new PutItemCommand({ TableName: names.inboxTable, Item: item, ConditionExpression: 'attribute_not_exists(status)' }),
      new UpdateItemCommand({
        TableName: names.inboxTable,
        Key: key('attributes#1'),
        UpdateExpression: 'SET #s.#nested = :v',
        ExpressionAttributeNames: { '#s': 'status', '#nested': 'note' },
        ExpressionAttributeValues: { ':v': { S: 'x' } },
      }),
      // A write asking for the old item back would read attributes outside the list.
      new PutItemCommand({ TableName: names.inboxTable, Item: item, ReturnValues: 'ALL_OLD' }),
      // A read of every attribute.
      new GetItemCommand({ TableName: names.inboxTable, Key: key('attributes#1') }),
      // The listed attributes under another partition key.
      new PutItemCommand({ TableName: names.inboxTable, Item: { ...key('attributes#2'), note: { S: 'n' } } }),
    ];
    for (const command of refusals) {
      const refused = await denial(dynamodb.send(command as PutItemCommand));
      expect(refused.name).toBe('AccessDeniedException');
    }
    expect(gateway.denialsOf('attributes')).toHaveLength(refusals.length);
  });
});

describe('a secret encrypted with a customer-managed key: reading it takes kms:Decrypt on that key, as in AWS', () => {
  const KEY = `arn:aws:kms:${LOCAL_REGION}:${LOCAL_ACCOUNT}:key/0c7f7f6e-3d1a-4b8e-9a55-6f0d2b1c9e42`;
  let encrypted: string;

  beforeAll(async () => {
    const admin = new SecretsManagerClient({ ...LOCAL_AWS, endpoint: secretsEndpoint });
    clients.push(admin);
    const created = await admin.send(
      new CreateSecretCommand({ Name: `${names.inboxTable}/cmk`, SecretString: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', KmsKeyId: KEY }),
    );
    encrypted = created.ARN!;
  });

  /** The roles of an inbox whose rotated Answerline signing secret is imported by ARN, its key named in the import or not. */
  function importing(key: string | undefined) {
    const synthesized = synthesizeInbox({
      account: LOCAL_ACCOUNT,
      region: LOCAL_REGION,
      providers: [providerRuntimeConfig({ name: 'answerline', adapter: AdapterKind.ANSWERLINE, secretId: encrypted })],
      importedSigningSecrets: { answerline: { secretArn: encrypted, ...(key ? { encryptionKeyArn: key } : {}) } },
      rotation: { providers: ['answerline'] },
    });
    const local = { inboxTable: names.inboxTable, resultsTable: names.resultsTable, workQueueUrl, deadLetterQueueUrl, signingSecretArns: {} };
    const roles = registerInboxRoles(gateway, synthesized, inboxBinding(synthesized, local, LOCAL_ACCOUNT, LOCAL_REGION), LOCAL_ACCOUNT);
    return { verifier: as(roles.verifier!).secrets, rotator: as(roles.rotator!).secrets };
  }

  const read = () => new GetSecretValueCommand({ SecretId: encrypted });
  const write = () =>
    new PutSecretValueCommand({ SecretId: encrypted, SecretString: 'whsec_bmV4dA==', ClientRequestToken: randomUUID(), VersionStages: ['AWSPENDING'] });

  test('imported without its key: the verifier and the rotator may call Secrets Manager, yet are denied the key', async () => {
    const { verifier, rotator } = importing(undefined);
    for (const client of [verifier, rotator]) {
      const refused = await denial(client.send(read()));
      expect(refused.name).toBe('AccessDeniedException');
      expect(refused.message).toContain(
        `is not authorized to perform: kms:Decrypt on resource: ${KEY} because no identity-based policy allows the kms:Decrypt action`,
      );
    }
    expect((await denial(rotator.send(write()))).message).toContain(`kms:GenerateDataKey on resource: ${KEY}`);
  });

  test('imported with its key (Secret.fromSecretAttributes({ secretCompleteArn, encryptionKey })): both read it, and the rotator writes it', async () => {
    const { verifier, rotator } = importing(KEY);
    expect((await verifier.send(read())).SecretString).toMatch(/^whsec_/);
    expect((await rotator.send(read())).SecretString).toMatch(/^whsec_/);
    await rotator.send(write());
  });

  test('a key named by another key: still denied', async () => {
    const { verifier } = importing(`arn:aws:kms:${LOCAL_REGION}:${LOCAL_ACCOUNT}:key/11111111-2222-3333-4444-555555555555`);
    expect((await denial(verifier.send(read()))).message).toContain(`kms:Decrypt on resource: ${KEY}`);
  });
});
