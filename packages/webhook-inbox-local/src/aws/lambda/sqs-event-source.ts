/**
 * What Lambda's SQS event source mapping does, for the local twin and the tests: receive a
 * batch, hand it to the handler as an SQSEvent, delete the records it did not report as failed
 * (partial batch responses), and leave the failed ones to reappear after their visibility
 * timeout, where the queue's redrive policy moves them to the DLQ after maxReceiveCount receives.
 */
import { DeleteMessageBatchCommand, Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface PollOptions {
  readonly batchSize?: number;
  readonly waitTimeSeconds?: number;
  readonly queueArn?: string;
  /** Whether the handler's `batchItemFailures` count (the mapping's `ReportBatchItemFailures`); without it a batch fails only by throwing. @default true */
  readonly reportBatchItemFailures?: boolean;
}

export interface PollReport {
  readonly received: number;
  readonly failed: number;
}

/** Receives one batch and runs the handler on it, as the event source mapping would. */
export async function pollOnce(client: SQSClient, queueUrl: string, handler: SqsHandler, options: PollOptions = {}): Promise<PollReport> {
  const out = await client.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: options.batchSize ?? 10,
      WaitTimeSeconds: options.waitTimeSeconds ?? 0,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  const messages = out.Messages ?? [];
  if (messages.length === 0) return { received: 0, failed: 0 };
  const records = messages.map((message) => toRecord(message, options.queueArn ?? queueUrl));
  let failedIds: Set<string>;
  try {
    const response = await handler({ Records: records });
    const failures = options.reportBatchItemFailures === false ? [] : (response?.batchItemFailures ?? []);
    failedIds = new Set(failures.map((failure) => failure.itemIdentifier));
  } catch {
    // A handler that throws fails the whole batch, as in Lambda.
    failedIds = new Set(records.map((record) => record.messageId));
  }
  const done = messages.filter((message) => !failedIds.has(message.MessageId!));
  if (done.length > 0) {
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! })),
      }),
    );
  }
  return { received: messages.length, failed: failedIds.size };
}

/** Polls until a receive comes back empty; returns the totals. */
export async function drain(client: SQSClient, queueUrl: string, handler: SqsHandler, options: PollOptions = {}): Promise<PollReport> {
  let received = 0;
  let failed = 0;
  for (;;) {
    const report = await pollOnce(client, queueUrl, handler, options);
    if (report.received === 0) return { received, failed };
    received += report.received;
    failed += report.failed;
  }
}

function toRecord(message: Message, eventSourceARN: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion: process.env.AWS_REGION ?? 'us-east-1',
  };
}

export interface PollerOptions extends PollOptions {
  /** Concurrent batches in flight (Lambda's maximum concurrency of the event source). */
  readonly concurrency?: number;
}

export interface Poller {
  readonly stats: { batches: number; received: number; failed: number; errors: number };
  stop(): Promise<void>;
}

/**
 * Polls continuously with long polls, like an event source mapping: each of `concurrency`
 * loops receives a batch, runs the handler and deletes what succeeded. Receive errors (the
 * queue is down) back off and retry.
 */
export function startPoller(client: SQSClient, queueUrl: string, handler: SqsHandler, options: PollerOptions = {}): Poller {
  const stats = { batches: 0, received: 0, failed: 0, errors: 0 };
  let running = true;
  const loop = async (): Promise<void> => {
    while (running) {
      try {
        const report = await pollOnce(client, queueUrl, handler, { waitTimeSeconds: 1, ...options });
        if (report.received > 0) stats.batches++;
        stats.received += report.received;
        stats.failed += report.failed;
      } catch {
        stats.errors++;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };
  const loops = Array.from({ length: options.concurrency ?? 1 }, () => loop());
  return {
    stats,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
