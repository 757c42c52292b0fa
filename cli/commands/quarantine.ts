import { InboxAttr as A, InboxItemKind, OpsConfig } from '../../lib/contract';
import { OpsClients } from '../clients';
import { scanAll } from '../../lambda/shared/stores/dynamo';
import { InspectedCopy, quarantinedCopy } from './inspect';

export interface QuarantineEntry extends InspectedCopy {
  /** The inbox key of the original row. */
  readonly key: string;
}

export interface QuarantineReport {
  readonly copies: readonly QuarantineEntry[];
  /** Items the Scan read. */
  readonly itemsRead: number;
}

/**
 * Every quarantined altered duplicate of the inbox. A Scan with a filter on the sort key
 * prefix: it reads the whole table, so it is an ops command only (never a per-delivery or
 * scheduled path), and it reports how many items it read. Bodies are never read.
 */
export async function listQuarantine(clients: OpsClients, config: OpsConfig): Promise<QuarantineReport> {
  const copies: QuarantineEntry[] = [];
  const { itemsRead } = await scanAll(
    clients.dynamodb,
    {
      TableName: config.inboxTable,
      FilterExpression: 'begins_with(#sk, :quarantine)',
      ProjectionExpression: '#pk, #digest, #count, #receivedAt, #lastSeen',
      ExpressionAttributeNames: { '#pk': A.PK, '#sk': A.SK, '#digest': A.DIGEST, '#count': A.COUNT, '#receivedAt': A.RECEIVED_AT, '#lastSeen': A.LAST_SEEN_AT },
      ExpressionAttributeValues: { ':quarantine': { S: InboxItemKind.QUARANTINE_PREFIX } },
    },
    (items) => {
      for (const item of items) copies.push({ key: item[A.PK].S!, ...quarantinedCopy(item) });
    },
  );
  copies.sort((a, b) => (a.firstSeen ?? '').localeCompare(b.firstSeen ?? '') || a.key.localeCompare(b.key));
  return { copies, itemsRead };
}
