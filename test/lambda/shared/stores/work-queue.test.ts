/**
 * The work queue's enqueue of many keys (the sweep after the queue was down), against the SQS
 * emulator through the fault proxy, which answers as SQS does when it throttles or refuses entries:
 * every key sent once, in batches of ten, and what SQS did not take named, none lost.
 */
import { ReceiveMessageCommand, DeleteMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EnqueueError, SqsWorkQueue, decodeWorkMessage } from '../../../../lambda/shared/stores/work-queue';
import { createQueues, endpointTarget, FaultProxy, LOCAL_AWS, resourceNames } from '#twin/testing';
import { uniqueName } from '../../../support/inbox-fixture';

const env = process.env;
let proxy: FaultProxy;
let client: SQSClient;
let direct: SQSClient;
let queueUrl: string;

beforeAll(async () => {
  proxy = new FaultProxy(endpointTarget(env.AWS_ENDPOINT_URL_SQS!));
  client = new SQSClient({ endpoint: await proxy.start(), ...LOCAL_AWS, useQueueUrlAsEndpoint: false });
  direct = new SQSClient({ endpoint: env.AWS_ENDPOINT_URL_SQS, ...LOCAL_AWS, useQueueUrlAsEndpoint: false });
});
beforeEach(async () => {
  queueUrl = (await createQueues(direct, resourceNames(uniqueName('work-queue')))).workQueueUrl;
  proxy.clear();
});
afterAll(async () => {
  client.destroy();
  direct.destroy();
  await proxy.stop();
});

const keys = (n: number) => Array.from({ length: n }, (_, i) => `answerline#tsk_${String(i).padStart(4, '0')}`);

/** Every message in the queue, by the key it carries; the queue is emptied. */
async function received(): Promise<string[]> {
  const found: string[] = [];
  for (;;) {
    const out = await direct.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return found;
    found.push(...messages.map((message) => decodeWorkMessage(message.Body!)));
    await direct.send(
      new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle! })) }),
    );
  }
}

test('many keys go out in SendMessageBatch calls of ten, each key once', async () => {
  await new SqsWorkQueue(client, queueUrl).enqueue(keys(250));
  // The requests made: an SDK's retry of one (a dropped connection on a loaded machine) is not the queue's doing.
  expect(proxy.requests['sqs.SendMessageBatch']).toBe(25);
  expect((await received()).sort()).toEqual(keys(250));
});

test('entries SQS refused for now are sent again after a back-off: each key once', async () => {
  const fault = proxy.refuseEntries({ operations: ['SendMessageBatch'], calls: 5 });
  await new SqsWorkQueue(client, queueUrl).enqueue(keys(100));
  expect(fault.injected).toBe(5);
  expect((await received()).sort()).toEqual(keys(100));
});

test('once a call fails whole (throttled past the SDK’s attempts), no further call is started, and every key not sent is named', async () => {
  const fault = proxy.throttle({ operations: ['SendMessageBatch'], error: 'ThrottlingException' });
  const attempts = await client.config.maxAttempts();
  const error = await new SqsWorkQueue(client, queueUrl).enqueue(keys(400)).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(EnqueueError);
  expect((error as EnqueueError).notSent).toEqual(keys(400));
  // Forty batches; only those in flight when the first one failed were tried, each with the SDK's attempts.
  expect(fault.injected).toBeLessThan(40 * attempts);
  expect(fault.injected).toBeLessThanOrEqual(16 * attempts);
  expect(await received()).toEqual([]);
});
