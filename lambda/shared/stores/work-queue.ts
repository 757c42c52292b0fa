import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { backOff, settleEach } from '../runtime/concurrency';
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
 * false) are sent again, as SQS asks of a caller, each time after a jittered back-off; the SDK
 * retries only whole calls (with its own back-off).
 */
const REFUSED_ENTRY_RETRIES = 2;
/** The longest wait before the first resend of refused entries, in ms; it doubles for the second. */
const REFUSED_ENTRY_BACKOFF_MS = 100;
/**
 * SendMessageBatch calls in flight at once: a large enqueue (the sweep after the queue was down)
 * takes the time of a few calls, not of one call per ten keys.
 */
const BATCHES_IN_FLIGHT = 16;

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

  /**
   * One SendMessage for one key; otherwise SendMessageBatch calls of ten, several in flight. Entries
   * SQS refused for now are sent again (`sendChunk`); once a call fails whole (the queue is down),
   * no further call is started, and what was not sent is named in the `EnqueueError`.
   */
  async enqueue(keys: readonly string[]): Promise<void> {
    if (keys.length === 1) {
      await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: encodeWorkMessage(keys[0]) }));
      return;
    }
    const chunks: string[][] = [];
    for (let start = 0; start < keys.length; start += SQS_BATCH_LIMIT) chunks.push(keys.slice(start, start + SQS_BATCH_LIMIT));
    let failedWhole: unknown;
    const outcomes = await settleEach(
      chunks,
      BATCHES_IN_FLIGHT,
      (chunk) =>
        this.sendChunk(chunk).catch((error: unknown) => {
          failedWhole ??= error;
          throw error;
        }),
      () => failedWhole !== undefined,
    );
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []));
    const notSent = new Set([...refused.map((entry) => entry.key), ...chunks.filter((_, index) => outcomes[index].status === 'rejected').flat()]);
    if (notSent.size === 0) return;
    throw new EnqueueError(
      keys.filter((key) => notSent.has(key)),
      keys.length,
      failedWhole !== undefined ? errorName(failedWhole) : refused[0].code,
    );
  }

  /** One chunk: its SendMessageBatch, then the entries SQS refused for now, again after a back-off. What it kept refusing. */
  private async sendChunk(keys: readonly string[]): Promise<RefusedEntry[]> {
    let refused = await this.sendBatch(keys);
    for (let sends = 1; sends <= REFUSED_ENTRY_RETRIES && refused.some((entry) => entry.retry); sends++) {
      await backOff(sends, REFUSED_ENTRY_BACKOFF_MS);
      const again = refused.filter((entry) => entry.retry);
      refused = [...refused.filter((entry) => !entry.retry), ...(await this.sendBatch(again.map((entry) => entry.key)))];
    }
    return refused;
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
