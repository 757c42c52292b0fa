import { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BoundedCount } from '../../lambda/shared/stores/dynamo';
import { deliveryKey, InboxStore, isDeliveryKey } from '../../lambda/shared/stores/inbox';
import { UsageError } from '../errors';

/** An event named on the command line as `<provider>#<eventId>`. */
export interface EventRef {
  readonly provider: string;
  readonly eventId: string;
  /** The inbox key (partition key of its row). */
  readonly key: string;
}

/**
 * Parses `<provider>#<eventId>`; the event id may itself contain `#`. Only a delivery row's key
 * is one: a submission's (`ledger:…`) or any other item's is refused, never inspected or replayed.
 */
export function parseEventRef(text: string | undefined, option = '--event'): EventRef {
  if (text === undefined || text === '') throw new UsageError(`${option} <provider>#<eventId> is required`);
  const at = text.indexOf('#');
  if (at <= 0 || at === text.length - 1) throw new UsageError(`${option} ${text}: expected <provider>#<eventId>, e.g. answerline#tsk_123`);
  if (!isDeliveryKey(text)) {
    throw new UsageError(`${option} ${text}: not a delivery row's key: ${text.slice(0, at)} is not a provider name (a-z, 0-9, -)`);
  }
  const provider = text.slice(0, at);
  const eventId = text.slice(at + 1);
  return { provider, eventId, key: deliveryKey(provider, eventId) };
}

/** Epoch milliseconds as ISO-8601; undefined stays undefined. */
export function iso(ms: number | undefined): string | undefined {
  return ms === undefined || !Number.isFinite(ms) ? undefined : new Date(ms).toISOString();
}

export function numberAttr(value: AttributeValue | undefined): number | undefined {
  return value?.N === undefined ? undefined : Number(value.N);
}

/** Whether a DynamoDB error says the index does not exist (an inbox deployed before it was added). */
export function isMissingIndex(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  return name === 'ValidationException' && /index/i.test(message ?? '');
}

/**
 * What the sweep would find below `cutoff`, reading one page of at most `limitPerShard` entries of
 * each shard: at least that many when a shard had more, or a row was left unread.
 */
export async function countStranded(inbox: InboxStore, cutoff: number, limitPerShard: number): Promise<BoundedCount> {
  const { stranded, examinedBefore } = await inbox.findStranded(cutoff, { pageEntries: limitPerShard, pagesPerShard: 1 });
  return { count: stranded.length, atLeast: examinedBefore < cutoff };
}
