import { InboxAttr as A, DeliveryStatus, InboxItemKind, OpsConfig } from '../../lib/contract';
import { batchChildEventId } from '../../lambda/shared/providers/message-batches/adapter';
import { deliveryKey, isDeliveryKey } from '../../lambda/shared/stores/inbox';
import { SqsWorkQueue } from '../../lambda/shared/stores/work-queue';
import { inboxStoreOf, OpsClients } from '../clients';
import { scanAll } from '../../lambda/shared/stores/dynamo';
import { EventRef } from './common';

/**
 * What replay did with one row:
 * - `enqueued`: it was not processed (RECEIVED, PROCESSING): only a work message was sent;
 * - `reset`: it was PROCESSED (with --force) or DEAD: its status went back to RECEIVED with a
 *   fresh budget of attempts, it re-entered the pending index (so the sweep covers it), and a
 *   work message was sent;
 * - `skipped`: it is PROCESSED and --force was not given;
 * - `not_found`: no such row;
 * - `refused`: its key is not a delivery row's (an item under a submission's key, say): nothing
 *   was changed or sent.
 */
export type ReplayAction = 'enqueued' | 'reset' | 'skipped' | 'not_found' | 'refused';

export interface ReplayedRow {
  readonly key: string;
  /** The status the row had when replay looked at it. */
  readonly status?: string;
  readonly action: ReplayAction;
}

export interface ReplayReport {
  readonly rows: readonly ReplayedRow[];
  readonly enqueued: number;
  readonly reset: number;
  readonly skipped: number;
  readonly notFound: number;
  /** Items refused because their key is not a delivery row's (absent when none). */
  readonly refused?: number;
  /** Items the time-range Scan read (absent for a single event). */
  readonly itemsRead?: number;
}

export interface ReplayOptions {
  readonly force?: boolean;
  readonly now: number;
}

/** Replays one event's row. */
export async function replayEvent(clients: OpsClients, config: OpsConfig, event: EventRef, options: ReplayOptions): Promise<ReplayReport> {
  const row = await inboxStoreOf(clients, config).status(event.key);
  if (!row) return summarize([{ key: event.key, action: 'not_found' }]);
  return replayRows(clients, config, [{ key: event.key, status: row.status }], options);
}

/**
 * Replays the rows of selected requests of a polled batch (`<provider>#<batchId>:<customId>`):
 * their effects (`BatchChildSettled`) are sent again with the same keys.
 */
export async function replayBatchChildren(
  clients: OpsClients,
  config: OpsConfig,
  batch: { readonly provider: string; readonly batchId: string },
  customIds: readonly string[],
  options: ReplayOptions,
): Promise<ReplayReport> {
  const inbox = inboxStoreOf(clients, config);
  const found: { key: string; status?: string }[] = [];
  const missing: ReplayedRow[] = [];
  for (const customId of customIds) {
    const key = deliveryKey(batch.provider, batchChildEventId(batch.batchId, customId));
    const row = await inbox.status(key);
    if (row) found.push({ key, status: row.status });
    else missing.push({ key, action: 'not_found' });
  }
  const replayed = await replayRows(clients, config, found, options);
  return summarize([...replayed.rows, ...missing]);
}

/**
 * Replays every delivery row received in [from, to). This reads the whole table (a Scan with a
 * filter): an ops command, never a per-delivery or scheduled path; the report says how many
 * items it read.
 */
export async function replayRange(
  clients: OpsClients,
  config: OpsConfig,
  range: { readonly from: number; readonly to: number },
  options: ReplayOptions,
): Promise<ReplayReport> {
  const candidates: { key: string; status?: string }[] = [];
  const { itemsRead } = await scanAll(
    clients.dynamodb,
    {
      TableName: config.inboxTable,
      FilterExpression: '#sk = :delivery AND #receivedAt >= :from AND #receivedAt < :to',
      ProjectionExpression: '#pk, #status, #receivedAt',
      ExpressionAttributeNames: { '#pk': A.PK, '#sk': A.SK, '#status': A.STATUS, '#receivedAt': A.RECEIVED_AT },
      ExpressionAttributeValues: {
        ':delivery': { S: InboxItemKind.DELIVERY },
        ':from': { N: String(range.from) },
        ':to': { N: String(range.to) },
      },
    },
    (items) => {
      for (const item of items) candidates.push({ key: item[A.PK].S!, status: item[A.STATUS]?.S });
    },
  );
  const report = await replayRows(clients, config, candidates, options);
  return { ...report, itemsRead };
}

async function replayRows(
  clients: OpsClients,
  config: OpsConfig,
  candidates: readonly { key: string; status?: string }[],
  options: ReplayOptions,
): Promise<ReplayReport> {
  const inbox = inboxStoreOf(clients, config);
  const rows: ReplayedRow[] = [];
  for (const { key, status } of candidates) {
    if (!isDeliveryKey(key)) {
      rows.push({ key, status, action: 'refused' });
    } else if (status === DeliveryStatus.PROCESSED && !options.force) {
      rows.push({ key, status, action: 'skipped' });
    } else if (status === DeliveryStatus.PROCESSED || status === DeliveryStatus.DEAD) {
      const reset = await inbox.revive(key, status, options.now);
      rows.push({ key, status, action: reset ? 'reset' : 'enqueued' });
    } else {
      rows.push({ key, status, action: 'enqueued' });
    }
  }
  // Reset rows are back in the pending index first: if this enqueue fails, the sweep still finds them.
  await new SqsWorkQueue(clients.sqs, config.workQueueUrl).enqueue(
    rows.filter((row) => row.action === 'enqueued' || row.action === 'reset').map((row) => row.key),
  );
  return summarize(rows);
}

function summarize(rows: ReplayedRow[]): ReplayReport {
  const count = (action: ReplayAction) => rows.filter((row) => row.action === action).length;
  const refused = count('refused');
  return {
    rows,
    enqueued: count('enqueued') + count('reset'),
    reset: count('reset'),
    skipped: count('skipped'),
    notFound: count('not_found'),
    ...(refused > 0 ? { refused } : {}),
  };
}
