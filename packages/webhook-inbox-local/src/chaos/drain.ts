/**
 * Drains a fault-injection run once its providers are done: waits until every completed result is
 * stored and settled (a result row PROCESSED, a poison row DEAD with its message in the DLQ), or the
 * time allowed is up; the DLQ's messages are collected as they come.
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { scanItems } from '../../../../lambda/shared/stores/dynamo';
import { DeliveryStatus, InboxAttr, InboxItemKind } from '../../../../lib/contract';
import type { FakeBatch } from '../providers/message-batches/fake-api';
import { RetryingSender, sleep } from '../providers/sender';
import { GITHUB, ProviderLogRecord, STRIPE } from './provider-logs';
import { BATCHES, ChaosRig } from './setup';
import { workKey } from './state';

export async function drain({ senders, submittedBatches, providerLogs, dynamodb, sqs, twin, state, log }: ChaosRig, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastWaiting = '';
  for (;;) {
    // A cancelled batch ends at the poll after its cancellation: its rows are expected from then on.
    const expected = expectedKeys(senders);
    for (const key of batchRowKeys(submittedBatches)) expected.set(key, 'result');
    for (const key of providerLogKeys(providerLogs.record())) expected.set(key, 'result');
    const rows = await scanDeliveryStates(dynamodb, twin.names.inboxTable);
    // A message reaches the DLQ at the receive after its last failure: collect them as they come.
    state.deadLettered.push(...(await drainQueue(sqs, twin.deadLetterQueueUrl)));
    const inDlq = new Set(state.deadLettered);
    const missing = [...expected.keys()].filter((key) => !rows.has(key)).length;
    const unsettled = [...expected].filter(([key, kind]) => {
      const status = rows.get(key);
      return kind === 'poison' ? status !== DeliveryStatus.DEAD || !inDlq.has(key) : status !== DeliveryStatus.PROCESSED;
    });
    if (missing === 0 && unsettled.length === 0) break;
    const waiting = `${missing} results not stored yet, ${unsettled.length} rows not settled (${[...new Set(unsettled.map(([key, kind]) => `${kind} ${rows.get(key) ?? 'absent'}`))].join(', ')})`;
    if (waiting !== lastWaiting) log(`chaos: waiting: ${waiting}`);
    lastWaiting = waiting;
    if (Date.now() > deadline) {
      log(`chaos: gave up waiting: ${waiting}`);
      break;
    }
    await sleep(3_000);
  }
}

/** Every inbox key a completed result must end up under, with the kind of its delivery. */
function expectedKeys(senders: readonly RetryingSender[]): Map<string, 'result' | 'poison'> {
  const expected = new Map<string, 'result' | 'poison'>();
  for (const sender of senders) {
    for (const delivery of sender.deliveries) {
      if (delivery.kind === 'result' || delivery.kind === 'poison') expected.set(delivery.eventKey, delivery.kind);
    }
  }
  return expected;
}

/** The row keys a batch's requests and its summary are stored under (docs/providers/message-batches.md), once it has ended. */
/** The rows GitHub's and Stripe's events are stored as: GitHub's by the digest of the bytes it sent, Stripe's by the event's id. */
function providerLogKeys(record: ProviderLogRecord): string[] {
  return [
    ...record.github.map((event) => `${GITHUB}#${createHash('sha256').update(event.body).digest('hex')}`),
    ...record.stripe.map((event) => `${STRIPE}#${event.id}`),
  ];
}

function batchRowKeys(batches: readonly FakeBatch[]): string[] {
  const prefix = (batch: FakeBatch) => `${BATCHES}#${encodeURIComponent(batch.id)}:`;
  return batches
    .filter((batch) => batch.processingStatus === 'ended')
    .flatMap((batch) => [...batch.requests.map((request) => `${prefix(batch)}${encodeURIComponent(request.customId)}`), `${prefix(batch)}~batch`]);
}

/** The status of every delivery row, by key. */
async function scanDeliveryStates(client: DynamoDBClient, tableName: string): Promise<Map<string, string>> {
  const items = await scanItems(client, {
    TableName: tableName,
    ProjectionExpression: '#pk, #sk, #status',
    ExpressionAttributeNames: { '#pk': InboxAttr.PK, '#sk': InboxAttr.SK, '#status': InboxAttr.STATUS },
  });
  return new Map(
    items.filter((item) => item[InboxAttr.SK]?.S === InboxItemKind.DELIVERY).map((item) => [item[InboxAttr.PK].S!, item[InboxAttr.STATUS]?.S ?? '']),
  );
}

/** Every message in a queue (the DLQ), by the inbox key it carries; the queue is emptied. */
export async function drainQueue(client: SQSClient, queueUrl: string): Promise<string[]> {
  const keys: string[] = [];
  for (let empty = 0; empty < 2;) {
    const out = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      empty++;
      continue;
    }
    for (const message of messages) {
      const key = workKey(message.Body ?? '');
      if (key) keys.push(key);
    }
    await client.send(
      new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle! })) }),
    );
  }
  return keys;
}
