import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { errorName, MalformedDeliveryError, SafeError } from '../runtime/errors';

/** The work queue carries inbox keys only; the row holds everything else. */
export interface WorkQueue {
  /** Sends one message per key; several keys that could not all be sent throw an `EnqueueError` naming those. */
  enqueue(keys: readonly string[]): Promise<void>;
}

/** Some of the keys of an enqueue were not sent (the others were): SQS refused their entries, or a call failed. */
export class EnqueueError extends SafeError {
  constructor(
    readonly notSent: readonly string[],
    of: number,
    cause: string,
  ) {
    super(`SQS did not take ${notSent.length} of ${of} messages (${cause})`);
    this.name = 'EnqueueError';
  }
}

const SQS_BATCH_LIMIT = 10;
/**
 * How often the entries SQS refused in a batch (an internal error, throttling: `SenderFault`
 * false) are sent again at once, as SQS asks of a caller; the SDK retries only whole calls.
 */
const REFUSED_ENTRY_RETRIES = 2;

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

/** An entry of a SendMessageBatch that SQS refused. */
interface RefusedEntry {
  readonly key: string;
  readonly code: string;
  readonly retry: boolean;
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
    const notSent: string[] = [];
    let cause = '';
    for (let start = 0; start < keys.length; start += SQS_BATCH_LIMIT) {
      let refused: RefusedEntry[];
      try {
        refused = await this.sendBatch(keys.slice(start, start + SQS_BATCH_LIMIT));
        for (let sends = 1; sends <= REFUSED_ENTRY_RETRIES && refused.some((entry) => entry.retry); sends++) {
          const again = refused.filter((entry) => entry.retry);
          refused = [...refused.filter((entry) => !entry.retry), ...(await this.sendBatch(again.map((entry) => entry.key)))];
        }
      } catch (error) {
        // A call that failed whole (the queue is down): this chunk and the rest are not sent.
        throw new EnqueueError([...notSent, ...keys.slice(start)], keys.length, errorName(error));
      }
      notSent.push(...refused.map((entry) => entry.key));
      cause ||= refused[0]?.code ?? '';
    }
    if (notSent.length > 0) throw new EnqueueError(notSent, keys.length, cause);
  }

  /** One SendMessageBatch of `keys`: the entries SQS refused. */
  private async sendBatch(keys: readonly string[]): Promise<RefusedEntry[]> {
    const out = await this.client.send(
      new SendMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: keys.map((key, index) => ({ Id: String(index), MessageBody: encodeWorkMessage(key) })),
      }),
    );
    // A sender's fault is a message SQS will never take: sending it again cannot help.
    return (out.Failed ?? []).map((entry) => ({ key: keys[Number(entry.Id)], code: entry.Code ?? 'refused', retry: entry.SenderFault !== true }));
  }
}
