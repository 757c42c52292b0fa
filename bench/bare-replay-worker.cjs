// The bare replay's client process (bench/throughput.ts): the emulator calls one delivery costs
// in our pipeline, issued directly with the AWS SDK and nothing of ours, in a process of its own
// as the twin's functions run in processes of their own. Role `edge`: the conditional PutItem and
// the SendMessage of each delivery, `senders` in flight. Role `processing`: receive loops that
// claim and offer each record, put the batch's effects in one PutEvents, complete the batch's
// records in one BatchWriteItem (each claimed item put back PROCESSED, as the processor does) and
// delete the batch. Plain CommonJS: it starts in milliseconds and has no build step.
'use strict';
const { randomUUID } = require('node:crypto');
const { BatchWriteItemCommand, DynamoDBClient, PutItemCommand, UpdateItemCommand } = require('@aws-sdk/client-dynamodb');
const { EventBridgeClient, PutEventsCommand } = require('@aws-sdk/client-eventbridge');
const { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } = require('@aws-sdk/client-sqs');

const region = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let setup;
let clients;
const counts = {};

function counted(client) {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName.replace(/Command$/, '');
      counts[name] = (counts[name] || 0) + 1;
      return next(args);
    },
    { step: 'deserialize', name: 'bareCount' },
  );
  return client;
}

/** As lambda/shared/stores/work-queue.ts encodes an inbox key (non-ASCII escaped). */
function encodeWorkMessage(key) {
  return JSON.stringify({ key }).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

async function edge(n) {
  const { shapes, tables, queueUrl, senders } = setup;
  let next = 0;
  const lane = async () => {
    while (next < n) {
      next++;
      const key = `answerline#tsk_${randomUUID()}`;
      await clients.dynamodb.send(new PutItemCommand({ ...shapes.insert, TableName: tables.inbox, Item: { ...shapes.insert.Item, pk: { S: key } } }));
      await clients.sqs.send(new SendMessageCommand({ ...shapes.enqueue, QueueUrl: queueUrl, MessageBody: encodeWorkMessage(key) }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(senders, n) }, lane));
}

async function processing(n) {
  const { shapes, tables, queueUrl, bus, loops, batchSize } = setup;
  let processed = 0;
  let finished = 0;
  const loop = async () => {
    while (processed < n) {
      const out = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: batchSize,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      const messages = out.Messages || [];
      if (messages.length === 0) continue;
      const now = Date.now();
      const claimed = await Promise.all(
        messages.map(async (message) => {
          const key = JSON.parse(message.Body).key;
          const owner = `${message.MessageId}/1`;
          const values = {
            ...shapes.claim.ExpressionAttributeValues,
            ':owner': { S: owner },
            ':until': { N: String(now + 30000) },
            ':now': { N: String(now) },
          };
          const claim = await clients.dynamodb.send(
            new UpdateItemCommand({
              ...shapes.claim,
              TableName: tables.inbox,
              Key: { ...shapes.claim.Key, pk: { S: key } },
              ExpressionAttributeValues: values,
            }),
          );
          await clients.dynamodb.send(new UpdateItemCommand({ ...shapes.offer, TableName: tables.results, Key: { pk: { S: `answerline#job-${key}` } } }));
          return { item: claim.Attributes, receipt: message.ReceiptHandle };
        }),
      );
      const entry = shapes.effects.Entries[0];
      await clients.events.send(new PutEventsCommand({ Entries: claimed.map(() => ({ ...entry, EventBusName: bus })) }));
      const done = String(Date.now());
      await clients.dynamodb.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [tables.inbox]: claimed.map(({ item }) => {
              const { leaseOwner, leaseUntil, pendingShard, pendingSince, ...kept } = item;
              return { PutRequest: { Item: { ...kept, status: { S: 'PROCESSED' }, processedAt: { N: done }, outcome: { S: 'winner' } } } };
            }),
          },
        }),
      );
      await clients.sqs.send(
        new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: claimed.map(({ receipt }, index) => ({ Id: String(index), ReceiptHandle: receipt })) }),
      );
      processed += claimed.length;
      if (processed >= n && !finished) {
        finished = 1;
        process.send({ type: 'processed', n: processed });
      }
    }
  };
  // A loop still in a long poll when the last delivery is processed ends on its own.
  await Promise.all(Array.from({ length: loops }, loop));
}

process.on('message', async (message) => {
  try {
    if (message.type === 'setup') {
      setup = message.setup;
      clients = {
        dynamodb: counted(new DynamoDBClient({ endpoint: setup.endpoints.dynamodb, region, credentials })),
        sqs: counted(new SQSClient({ endpoint: setup.endpoints.sqs, region, credentials, useQueueUrlAsEndpoint: false })),
        events: counted(new EventBridgeClient({ endpoint: setup.endpoints.events, region, credentials })),
      };
      process.send({ type: 'ready' });
    } else if (message.type === 'run') {
      for (const name of Object.keys(counts)) delete counts[name];
      await (setup.role === 'edge' ? edge(message.n) : processing(message.n));
      process.send({ type: 'done', counts: { ...counts } });
    }
  } catch (error) {
    process.send({ type: 'error', message: String((error && error.stack) || error) });
  }
});
