import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { MalformedDeliveryError } from '../runtime/errors';

/** The work queue carries inbox keys only; the row holds everything else. */
export interface WorkQueue {
  enqueue(keys: readonly string[]): Promise<void>;
}

const SQS_BATCH_LIMIT = 10;

/**
 * The message body of one inbox key. Every non-ASCII character is escaped (`\uXXXX`): SQS
 * refuses some characters an event id may hold (U+FFFE, U+FFFF), and the JSON reads back the same.
 */
export function encodeWorkMessage(key: string): string {
  return JSON.stringify({ key }).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The inbox key a work message carries; throws naming the field when the message is not ours. */
export function decodeWorkMessage(body: string): string {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    throw new MalformedDeliveryError('message', 'is not JSON');
  }
  const key = (message as { key?: unknown } | null)?.key;
  if (typeof key !== 'string' || key === '') throw new MalformedDeliveryError('message.key', 'is missing');
  return key;
}

export class SqsWorkQueue implements WorkQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(keys: readonly string[]): Promise<void> {
    if (keys.length === 1) {
      await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: encodeWorkMessage(keys[0]) }));
      return;
    }
    for (let start = 0; start < keys.length; start += SQS_BATCH_LIMIT) {
      const chunk = keys.slice(start, start + SQS_BATCH_LIMIT);
      const out = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((key, index) => ({ Id: String(index), MessageBody: encodeWorkMessage(key) })),
        }),
      );
      if (out.Failed?.length) {
        throw new Error(`SQS refused ${out.Failed.length} of ${chunk.length} messages (${out.Failed[0].Code})`);
      }
    }
  }
}
