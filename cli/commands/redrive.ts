import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { DeliveryStatus, OpsConfig } from '../../lib/contract';
import { isDeliveryKey } from '../../lambda/shared/stores/inbox';
import { decodeWorkMessage } from '../../lambda/shared/stores/work-queue';
import { inboxStoreOf, OpsClients } from '../clients';
import { OpsError } from '../errors';

export interface RedriveOptions {
  /** The most messages to move; absent: until the DLQ answers empty. */
  readonly limit?: number;
  /** Long-poll wait of each receive (an empty short poll of SQS can miss messages). */
  readonly waitTimeSeconds?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

export interface RedriveReport {
  readonly moved: number;
  /** DEAD rows of the moved messages put back to RECEIVED with a fresh budget of attempts. */
  readonly revived: number;
  /** Messages received but not sent (SQS refused them); they reappear in the DLQ after its visibility timeout. */
  readonly failed: number;
  /**
   * Messages naming a key that is not a delivery row's: left in the DLQ for an operator to look at,
   * no row revived (absent when none).
   */
  readonly refused?: number;
}

const SQS_BATCH = 10;
/** Long enough to send and delete one batch; a crash leaves the batch to reappear in the DLQ. */
const RECEIVE_VISIBILITY_SECONDS = 60;

/**
 * Moves dead-lettered work messages back to the work queue: receive a batch, revive the DEAD row
 * each message names (DEAD is terminal for the processor: only an operator brings a row back),
 * send the same bodies, delete what was sent. A crash anywhere leaves a duplicate message or a
 * revived row, both harmless: the processor's lease and the row's state keep it processed once.
 * A message naming a key that is not a delivery row's is neither revived nor moved (the processor
 * would refuse it): it stays in the DLQ, counted in the report.
 */
export async function redrive(clients: OpsClients, config: OpsConfig, options: RedriveOptions = {}): Promise<RedriveReport> {
  const dlq = config.deadLetterQueueUrl;
  if (!dlq) throw new OpsError(`inbox ${config.inboxName} has no dead-letter queue (its work queue was given without one)`);
  const limit = options.limit ?? Infinity;
  const now = options.now ?? Date.now;
  const inbox = inboxStoreOf(clients, config);
  let moved = 0;
  let failed = 0;
  let revived = 0;
  let refused = 0;
  while (moved + failed + refused < limit) {
    const out = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlq,
        MaxNumberOfMessages: Math.min(SQS_BATCH, limit - moved - failed - refused),
        WaitTimeSeconds: options.waitTimeSeconds ?? 1,
        VisibilityTimeout: RECEIVE_VISIBILITY_SECONDS,
        MessageAttributeNames: ['All'],
      }),
    );
    const received = out.Messages ?? [];
    if (received.length === 0) break;
    const messages = received.filter((message) => {
      const key = workKeyOf(message.Body);
      return key === undefined || isDeliveryKey(key);
    });
    refused += received.length - messages.length;
    if (messages.length === 0) continue;
    // Revived first: if the send fails, the row is back in the pending index and the sweep finds it.
    for (const message of messages) {
      const key = workKeyOf(message.Body);
      if (key !== undefined && (await inbox.revive(key, DeliveryStatus.DEAD, now()))) revived++;
    }
    const sent = await clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: config.workQueueUrl,
        Entries: messages.map((message, index) => ({
          Id: String(index),
          MessageBody: message.Body ?? '',
          ...(message.MessageAttributes && Object.keys(message.MessageAttributes).length > 0 ? { MessageAttributes: message.MessageAttributes } : {}),
        })),
      }),
    );
    const done = (sent.Successful ?? []).map((entry) => messages[Number(entry.Id)]);
    failed += messages.length - done.length;
    if (done.length > 0) {
      // A message whose delete fails stays in the DLQ as a duplicate of one already sent: harmless.
      await clients.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: dlq,
          Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! })),
        }),
      );
    }
    moved += done.length;
  }
  return { moved, revived, failed, ...(refused > 0 ? { refused } : {}) };
}

/** The inbox key a work message carries; undefined for a message that is not ours (it is moved all the same). */
function workKeyOf(body: string | undefined): string | undefined {
  try {
    return decodeWorkMessage(body ?? '');
  } catch {
    return undefined;
  }
}
