/**
 * The fault proxy (`src/faults/proxy.ts`) between real AWS SDK v3 clients and the emulators:
 * what it injects is what the SDK raises or returns in AWS (the throttling errors its retry
 * strategy retries, partial batch results in each service's shape, an index behind its table),
 * and what it forwards reaches the emulator as sent.
 */
import {
  AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeliveryStatus, InboxAttr, PendingIndex } from '../../../../lib/contract';
import { EventBridgeStandIn } from '../../src/aws/eventbridge/stand-in';
import { endpointTarget, FaultProxy } from '../../src/faults/proxy';
import { LOCAL_AWS } from '../../src/aws/local-aws';
import { createBodyBucket, createQueues, createTables, InboxResourceNames, resourceNames } from '../../src/aws/provision';
import { Clock, uniqueName } from '../../../../test/support/inbox-fixture';

const env = process.env;
let names: InboxResourceNames;
let queueUrl: string;
const proxies: FaultProxy[] = [];
const clients: { destroy(): void }[] = [];

/** A proxy in front of `endpoint`, its index lag reading the DynamoDB emulator. */
async function proxyTo(endpoint: string): Promise<{ proxy: FaultProxy; url: string }> {
  const proxy = new FaultProxy(endpointTarget(endpoint), { dynamodbEndpoint: env.AWS_ENDPOINT_URL_DYNAMODB });
  proxies.push(proxy);
  return { proxy, url: await proxy.start() };
}

function track<T extends { destroy(): void }>(client: T): T {
  clients.push(client);
  return client;
}

/** An EventBridge stand-in with a bus of its own behind a proxy, and a client of it (two attempts), for `run`. */
async function withBus(
  run: (bus: string, events: { proxy: FaultProxy }, standIn: EventBridgeStandIn, client: EventBridgeClient) => Promise<void>,
): Promise<void> {
  const standIn = new EventBridgeStandIn();
  const bus = uniqueName('bus');
  standIn.createBus(bus);
  const events = await proxyTo(await standIn.start());
  try {
    await run(bus, events, standIn, track(new EventBridgeClient({ endpoint: events.url, ...LOCAL_AWS, maxAttempts: 2 })));
  } finally {
    await standIn.stop();
  }
}

const direct = () => track(new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, ...LOCAL_AWS }));

beforeAll(async () => {
  names = resourceNames(uniqueName('fault-proxy'));
  await createTables(direct(), names);
  queueUrl = (await createQueues(track(new SQSClient({ endpoint: env.AWS_ENDPOINT_URL_SQS, ...LOCAL_AWS, useQueueUrlAsEndpoint: false })), names)).workQueueUrl;
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await Promise.all(proxies.map((proxy) => proxy.stop()));
});

const S = (value: string) => ({ S: value });
const N = (value: number) => ({ N: String(value) });
const rowKey = (id: string) => ({ [InboxAttr.PK]: S(`p#${id}`), [InboxAttr.SK]: S('delivery') });

describe('throttling', () => {
  it("answers DynamoDB's ProvisionedThroughputExceededException, which the SDK retries: more calls than its attempts and the caller sees it", async () => {
    const { proxy, url } = await proxyTo(env.AWS_ENDPOINT_URL_DYNAMODB!);
    const client = track(new DynamoDBClient({ endpoint: url, ...LOCAL_AWS, maxAttempts: 3 }));
    const item = { TableName: names.inboxTable, Item: { ...rowKey('throttled'), status: S(DeliveryStatus.RECEIVED) } };

    // Two throttled attempts, then the third gets through: the SDK's own retries absorb it.
    const twice = proxy.throttle({ operations: ['PutItem'], calls: 2 });
    const out = await client.send(new PutItemCommand(item));
    expect(out.$metadata).toMatchObject({ httpStatusCode: 200, attempts: 3 });
    expect(twice.injected).toBe(2);

    // Three: every attempt the SDK makes is throttled.
    proxy.throttle({ operations: ['GetItem'], calls: 3 });
    const error = await client.send(new GetItemCommand({ TableName: names.inboxTable, Key: rowKey('throttled') })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400, attempts: 3 } });
    expect(proxy.injected).toEqual({ 'throttled dynamodb.PutItem': 2, 'throttled dynamodb.GetItem': 3 });
    // Every attempt is a call; only each request's first counts as a request.
    expect(proxy.calls).toEqual({ 'dynamodb.PutItem': 3, 'dynamodb.GetItem': 3 });
    expect(proxy.requests).toEqual({ 'dynamodb.PutItem': 1, 'dynamodb.GetItem': 1 });

    proxy.throttle({ operations: ['UpdateItem'], calls: 1, error: 'ThrottlingException' });
    const once = track(new DynamoDBClient({ endpoint: url, ...LOCAL_AWS, maxAttempts: 1 }));
    await expect(
      once.send(
        new UpdateItemCommand({
          TableName: names.inboxTable,
          Key: rowKey('throttled'),
          UpdateExpression: 'SET #s = :s',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':s': S(DeliveryStatus.PROCESSED) },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ThrottlingException', message: expect.stringContaining('Throughput exceeds the current capacity') });
    // Nothing a throttled call carried reached the table.
    expect((await direct().send(new GetItemCommand({ TableName: names.inboxTable, Key: rowKey('throttled'), ConsistentRead: true }))).Item?.status).toEqual(
      S(DeliveryStatus.RECEIVED),
    );
  });

  it("answers SQS's RequestThrottled and ThrottlingException as the JSON protocol does, and EventBridge's ThrottlingException", async () => {
    const sqsProxy = await proxyTo(env.AWS_ENDPOINT_URL_SQS!);
    const sqs = track(new SQSClient({ endpoint: sqsProxy.url, ...LOCAL_AWS, useQueueUrlAsEndpoint: false, maxAttempts: 1 }));
    sqsProxy.proxy.throttle({ operations: ['SendMessage'], calls: 1 });
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }))).rejects.toMatchObject({
      name: 'RequestThrottled',
      Code: 'RequestThrottled',
      $metadata: { httpStatusCode: 403 },
    });
    sqsProxy.proxy.throttle({ operations: ['SendMessage'], calls: 1, error: 'ThrottlingException' });
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }))).rejects.toMatchObject({
      name: 'ThrottlingException',
      $metadata: { httpStatusCode: 400 },
    });

    await withBus(async (bus, events, standIn, client) => {
      events.proxy.throttle({ operations: ['PutEvents'], forMs: 60_000 });
      await expect(client.send(new PutEventsCommand({ Entries: [{ EventBusName: bus, Source: 's', DetailType: 'd', Detail: '{}' }] }))).rejects.toMatchObject({
        name: 'ThrottlingException',
        $metadata: { attempts: 2 },
      });
      expect(standIn.events).toEqual([]);
    });
  });

  it('throttles for a while, only the calls its scope names', async () => {
    const { proxy, url } = await proxyTo(env.AWS_ENDPOINT_URL_DYNAMODB!);
    const client = track(new DynamoDBClient({ endpoint: url, ...LOCAL_AWS, maxAttempts: 1 }));
    const fault = proxy.throttle({ where: (call) => call.input.TableName === names.resultsTable, forMs: 60_000 });
    await expect(client.send(new GetItemCommand({ TableName: names.resultsTable, Key: { pk: S('x') } }))).rejects.toMatchObject({
      name: 'ProvisionedThroughputExceededException',
    });
    await expect(client.send(new GetItemCommand({ TableName: names.inboxTable, Key: rowKey('x') }))).resolves.toBeDefined();
    fault.stop();
    await expect(client.send(new GetItemCommand({ TableName: names.resultsTable, Key: { pk: S('x') } }))).resolves.toBeDefined();
    expect(fault.injected).toBe(1);
  });
});

describe('a service failing', () => {
  it("answers EventBridge's InternalException, which the SDK retries as a server error and then raises, only for the caller its scope names, until stopped", async () => {
    await withBus(async (bus, events, standIn, client) => {
      const put = (detail: string) => client.send(new PutEventsCommand({ Entries: [{ EventBusName: bus, Source: 's', DetailType: 'd', Detail: detail }] }));
      const fault = events.proxy.fail({ operations: ['PutEvents'], where: (call) => call.accessKeyId === LOCAL_AWS.credentials.accessKeyId, forMs: 60_000 });
      await expect(put('{"n":1}')).rejects.toMatchObject({ name: 'InternalException', $metadata: { httpStatusCode: 500, attempts: 2 } });
      expect(standIn.events).toEqual([]);
      expect(events.proxy.injected).toEqual({ 'failed events.PutEvents': 2 });
      fault.stop();
      await expect(put('{"n":2}')).resolves.toMatchObject({ FailedEntryCount: 0 });
      expect(standIn.events).toHaveLength(1);
    });
  });

  it('answers DynamoDB and SQS with their own server errors, and leaves calls outside its scope alone', async () => {
    const dynamo = await proxyTo(env.AWS_ENDPOINT_URL_DYNAMODB!);
    const client = track(new DynamoDBClient({ endpoint: dynamo.url, ...LOCAL_AWS, maxAttempts: 1 }));
    dynamo.proxy.fail({ where: (call) => call.input.TableName === names.resultsTable, calls: 1 });
    await expect(client.send(new GetItemCommand({ TableName: names.inboxTable, Key: rowKey('x') }))).resolves.toBeDefined();
    await expect(client.send(new GetItemCommand({ TableName: names.resultsTable, Key: { pk: S('x') } }))).rejects.toMatchObject({
      name: 'InternalServerError',
      $metadata: { httpStatusCode: 500 },
    });
    const sqsProxy = await proxyTo(env.AWS_ENDPOINT_URL_SQS!);
    const sqs = track(new SQSClient({ endpoint: sqsProxy.url, ...LOCAL_AWS, useQueueUrlAsEndpoint: false, maxAttempts: 1 }));
    sqsProxy.proxy.fail({ operations: ['SendMessage'], calls: 1 });
    // Nothing is sent: the queue stays as the tests after this one expect it.
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 500 } });
    expect(sqsProxy.proxy.injected).toEqual({ 'failed sqs.SendMessage': 1 });
  });
});

describe('partial batch results', () => {
  it('BatchWriteItem: the refused requests come back in UnprocessedItems and are not written; a batch refused whole is throttled', async () => {
    const { proxy, url } = await proxyTo(env.AWS_ENDPOINT_URL_DYNAMODB!);
    const client = track(new DynamoDBClient({ endpoint: url, ...LOCAL_AWS, maxAttempts: 1 }));
    proxy.refuseEntries({ operations: ['BatchWriteItem'], calls: 2 });
    const puts = ['w0', 'w1', 'w2', 'w3'].map((id) => ({ PutRequest: { Item: { ...rowKey(id), status: S(DeliveryStatus.RECEIVED) } } }));
    const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [names.inboxTable]: puts } }));
    expect(out.UnprocessedItems?.[names.inboxTable]).toEqual([puts[1], puts[3]]);
    const stored = await direct().send(
      new BatchGetItemCommand({ RequestItems: { [names.inboxTable]: { Keys: ['w0', 'w1', 'w2', 'w3'].map(rowKey), ConsistentRead: true } } }),
    );
    expect(stored.Responses?.[names.inboxTable]?.map((item) => item.pk.S).sort()).toEqual(['p#w0', 'p#w2']);

    await expect(client.send(new BatchWriteItemCommand({ RequestItems: { [names.inboxTable]: [puts[1]] } }))).rejects.toMatchObject({
      name: 'ProvisionedThroughputExceededException',
    });
    expect(proxy.injected).toEqual({ 'entries refused dynamodb.BatchWriteItem': 2 });
    // The fault ended: the next batch is written whole.
    expect((await client.send(new BatchWriteItemCommand({ RequestItems: { [names.inboxTable]: [puts[1], puts[3]] } }))).UnprocessedItems).toEqual({});
  });

  it('BatchGetItem: the refused keys come back in UnprocessedKeys with the projection asked for', async () => {
    const { proxy, url } = await proxyTo(env.AWS_ENDPOINT_URL_DYNAMODB!);
    const client = track(new DynamoDBClient({ endpoint: url, ...LOCAL_AWS, maxAttempts: 1 }));
    await direct().send(
      new BatchWriteItemCommand({
        RequestItems: { [names.inboxTable]: ['g0', 'g1', 'g2'].map((id) => ({ PutRequest: { Item: { ...rowKey(id), status: S(DeliveryStatus.RECEIVED) } } })) },
      }),
    );
    proxy.refuseEntries({ operations: ['BatchGetItem'], calls: 1 });
    const request = { Keys: ['g0', 'g1', 'g2'].map(rowKey), ProjectionExpression: '#pk, #s', ExpressionAttributeNames: { '#pk': 'pk', '#s': 'status' } };
    const out = await client.send(new BatchGetItemCommand({ RequestItems: { [names.inboxTable]: request } }));
    expect(out.Responses?.[names.inboxTable]?.map((item) => item.pk.S).sort()).toEqual(['p#g0', 'p#g2']);
    expect(out.UnprocessedKeys?.[names.inboxTable]).toEqual({ ...request, Keys: [rowKey('g1')] });
  });

  it('SendMessageBatch: the refused entries are Failed, not sent; PutEvents: failed entries in their places, counted', async () => {
    const sqsProxy = await proxyTo(env.AWS_ENDPOINT_URL_SQS!);
    const sqs = track(new SQSClient({ endpoint: sqsProxy.url, ...LOCAL_AWS, useQueueUrlAsEndpoint: false, maxAttempts: 1 }));
    sqsProxy.proxy.refuseEntries({ operations: ['SendMessageBatch'], calls: 1 });
    const sent = await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: ['a', 'b', 'c'].map((id) => ({ Id: id, MessageBody: `body-${id}` })) }),
    );
    expect(sent.Successful?.map((entry) => entry.Id).sort()).toEqual(['a', 'c']);
    expect(sent.Failed).toEqual([{ Id: 'b', SenderFault: false, Code: 'InternalError', Message: 'An internal error occurred.' }]);
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(received.Messages?.map((message) => message.Body).sort()).toEqual(['body-a', 'body-c']);

    const standIn = new EventBridgeStandIn();
    const bus = uniqueName('bus');
    standIn.createBus(bus);
    const events = await proxyTo(await standIn.start());
    try {
      const client = track(new EventBridgeClient({ endpoint: events.url, ...LOCAL_AWS, maxAttempts: 1 }));
      events.proxy.refuseEntries({ operations: ['PutEvents'] });
      const entries = ['e0', 'e1', 'e2'].map((type) => ({ EventBusName: bus, Source: 's', DetailType: type, Detail: '{}' }));
      const out = await client.send(new PutEventsCommand({ Entries: entries }));
      expect(out.FailedEntryCount).toBe(1);
      expect(out.Entries?.map((entry) => entry.ErrorCode ?? (entry.EventId ? 'ok' : 'none'))).toEqual(['ok', 'ThrottlingException', 'ok']);
      expect(standIn.events.map((event) => event.detailType)).toEqual(['e0', 'e2']);
      const lone = await client.send(new PutEventsCommand({ Entries: [entries[1]] }));
      expect(lone).toMatchObject({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException' }] });
      expect(standIn.events).toHaveLength(2);
    } finally {
      await standIn.stop();
    }
  });
});

describe('an index that lags its table', () => {
  /** The pending index's entries of one shard, as a Query reads them. */
  async function pendingEntries(client: DynamoDBClient, shard: string, extra: object = {}): Promise<{ keys: string[]; count?: number }> {
    const out = await client.send(
      new QueryCommand({
        TableName: names.inboxTable,
        IndexName: PendingIndex.NAME,
        KeyConditionExpression: '#shard = :shard AND #since BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#shard': InboxAttr.PENDING_SHARD, '#since': InboxAttr.PENDING_SINCE },
        ExpressionAttributeValues: { ':shard': S(shard), ':from': N(0), ':to': N(Number.MAX_SAFE_INTEGER) },
        ...extra,
      }),
    );
    return { keys: (out.Items ?? []).map((item) => `${item.pk.S}@${item[InboxAttr.PENDING_SINCE].N}`), count: out.Count };
  }

  it('hides an entry written recently, keeps showing a moved entry where it was, and catches up after the lag', async () => {
    const { proxy, url } = await proxyTo(env.AWS_ENDPOINT_URL_DYNAMODB!);
    const client = track(new DynamoDBClient({ endpoint: url, ...LOCAL_AWS, maxAttempts: 1 }));
    const clock = new Clock(1_000_000);
    const shard = uniqueName('shard');
    const entry = (id: string, since: number) => ({ ...rowKey(id), [InboxAttr.PENDING_SHARD]: S(shard), [InboxAttr.PENDING_SINCE]: N(since) });
    await client.send(new PutItemCommand({ TableName: names.inboxTable, Item: entry('old', 100) }));
    proxy.lagIndexes(5_000, clock.now);

    await client.send(new PutItemCommand({ TableName: names.inboxTable, Item: entry('new', 200) }));
    await client.send(
      new UpdateItemCommand({
        TableName: names.inboxTable,
        Key: rowKey('old'),
        UpdateExpression: 'SET #since = :since',
        ExpressionAttributeNames: { '#since': InboxAttr.PENDING_SINCE },
        ExpressionAttributeValues: { ':since': N(300) },
      }),
    );
    // The table has both at their new places; the index, 5 s behind, only the old one where it was.
    expect(await pendingEntries(direct(), shard)).toEqual({ keys: ['p#new@200', 'p#old@300'], count: 2 });
    expect(await pendingEntries(client, shard)).toEqual({ keys: ['p#old@100'], count: 1 });
    expect(await pendingEntries(client, shard, { Select: 'COUNT' })).toEqual({ keys: [], count: 1 });
    // A projection of top-level attributes lags as well, each entry holding only what it names.
    const projected = await client.send(
      new QueryCommand({
        TableName: names.inboxTable,
        IndexName: PendingIndex.NAME,
        KeyConditionExpression: '#shard = :shard AND #since BETWEEN :from AND :to',
        ProjectionExpression: '#pk, #since',
        ExpressionAttributeNames: { '#shard': InboxAttr.PENDING_SHARD, '#since': InboxAttr.PENDING_SINCE, '#pk': InboxAttr.PK },
        ExpressionAttributeValues: { ':shard': S(shard), ':from': N(0), ':to': N(Number.MAX_SAFE_INTEGER) },
      }),
    );
    expect(projected.Items).toEqual([{ [InboxAttr.PK]: S('p#old'), [InboxAttr.PENDING_SINCE]: N(100) }]);
    expect(proxy.injectedOf('index lagged')).toBeGreaterThan(0);

    clock.advance(4_000);
    expect((await pendingEntries(client, shard)).keys).toEqual(['p#old@100']);
    clock.advance(1_001);
    expect(await pendingEntries(client, shard)).toEqual({ keys: ['p#new@200', 'p#old@300'], count: 2 });
  });

  it('keeps a page within its stretch of the index and its limit', async () => {
    const { proxy, url } = await proxyTo(env.AWS_ENDPOINT_URL_DYNAMODB!);
    const client = track(new DynamoDBClient({ endpoint: url, ...LOCAL_AWS, maxAttempts: 1 }));
    const clock = new Clock(1_000_000);
    const shard = uniqueName('shard');
    const entry = (id: string, since: number) => ({ ...rowKey(id), [InboxAttr.PENDING_SHARD]: S(shard), [InboxAttr.PENDING_SINCE]: N(since) });
    for (const [id, since] of [
      ['a', 10],
      ['b', 20],
      ['c', 30],
    ] as const)
      await client.send(new PutItemCommand({ TableName: names.inboxTable, Item: entry(id, since) }));
    proxy.lagIndexes(5_000, clock.now);
    // b leaves the index (processed rows keep it, dead ones do not): the lagging index still has it.
    await client.send(
      new UpdateItemCommand({
        TableName: names.inboxTable,
        Key: rowKey('b'),
        UpdateExpression: 'REMOVE #shard, #since',
        ExpressionAttributeNames: { '#shard': InboxAttr.PENDING_SHARD, '#since': InboxAttr.PENDING_SINCE },
      }),
    );
    const page = (start?: Record<string, AttributeValue>) =>
      client.send(
        new QueryCommand({
          TableName: names.inboxTable,
          IndexName: PendingIndex.NAME,
          KeyConditionExpression: '#shard = :shard',
          ExpressionAttributeNames: { '#shard': InboxAttr.PENDING_SHARD },
          ExpressionAttributeValues: { ':shard': S(shard) },
          Limit: 2,
          ExclusiveStartKey: start,
        }),
      );
    const first = await page();
    expect(first.Items?.map((item) => item.pk.S)).toEqual(['p#a', 'p#b']);
    expect(first.LastEvaluatedKey).toEqual({ ...rowKey('b'), [InboxAttr.PENDING_SHARD]: S(shard), [InboxAttr.PENDING_SINCE]: N(20) });
    const second = await page(first.LastEvaluatedKey);
    expect(second.Items?.map((item) => item.pk.S)).toEqual(['p#c']);
  });
});

it('passes S3 through untouched, and cuts every connection while down', async () => {
  const { proxy, url } = await proxyTo(env.AWS_ENDPOINT_URL_S3!);
  const s3 = track(new S3Client({ endpoint: url, ...LOCAL_AWS, forcePathStyle: true, maxAttempts: 1 }));
  await createBodyBucket(track(new S3Client({ endpoint: env.AWS_ENDPOINT_URL_S3, ...LOCAL_AWS, forcePathStyle: true })), names);
  const bytes = Buffer.alloc(2 * 1024 * 1024, 7);
  await s3.send(new PutObjectCommand({ Bucket: names.bodyBucket, Key: 'k', Body: bytes }));
  const got = await s3.send(new GetObjectCommand({ Bucket: names.bodyBucket, Key: 'k' }));
  expect(Buffer.from(await got.Body!.transformToByteArray()).equals(bytes)).toBe(true);

  proxy.takeDown();
  await expect(s3.send(new GetObjectCommand({ Bucket: names.bodyBucket, Key: 'k' }))).rejects.toThrow();
  proxy.restore();
  await expect(s3.send(new GetObjectCommand({ Bucket: names.bodyBucket, Key: 'k' }))).resolves.toBeDefined();
});
