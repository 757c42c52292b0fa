import { InboxAttr as A, InboxItemKind, OpsConfig } from '../../lib/contract';
import { OpsClients } from '../clients';
import { scanAll } from '../../lambda/shared/stores/dynamo';
import { DynamoDbRejectionStore, RejectionRecord } from '../../lambda/shared/stores/rejection-store';
import { UsageError } from '../errors';
import { iso } from './common';
import { InspectedCopy, quarantinedCopy } from './inspect';

/** `quarantine --rejected` without --since: the last day's records. */
export const DEFAULT_REJECTED_HOURS = 24;
/** `quarantine --rejected` without --limit. */
export const DEFAULT_REJECTED_LIMIT = 100;

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

/** One request refused at the authenticity check, as `quarantine --rejected` lists it. */
export interface RejectedEntry {
  readonly provider: string;
  readonly receivedAt: string;
  readonly reason: string;
  readonly httpStatus: number;
  readonly sourceHash?: string;
  readonly headerNames: readonly string[];
  readonly headerNamesTruncated: boolean;
  readonly bodyBytes: number;
  readonly digest: string;
  readonly expiresAt: string;
}

export interface RejectedReport {
  readonly providers: readonly string[];
  readonly since: string;
  readonly records: readonly RejectedEntry[];
  /** True when `limit` records were found: there may be more. */
  readonly truncated: boolean;
}

export interface RejectedOptions {
  /** Only this provider's records (one of the inbox's); all of them otherwise. */
  readonly provider?: string;
  /** Epoch ms. */
  readonly since: number;
  readonly now: number;
  readonly limit: number;
}

/**
 * The records of requests refused at the authenticity check, oldest first: one Query per
 * provider and UTC day since `since` (never a Scan); a record past its `expiresAt` is left out.
 */
export async function listRejected(clients: OpsClients, config: OpsConfig, options: RejectedOptions): Promise<RejectedReport> {
  if (options.provider !== undefined && !config.providers.includes(options.provider)) {
    throw new UsageError(`--provider ${options.provider}: this inbox serves ${config.providers.join(', ')}`);
  }
  const providers = options.provider === undefined ? [...config.providers] : [options.provider];
  const store = new DynamoDbRejectionStore(clients.dynamodb, config.inboxTable);
  const found: RejectionRecord[] = [];
  for (const provider of providers) found.push(...(await store.list(provider, options.since, options.now, options.limit + 1)));
  const live = found.sort((a, b) => a.receivedAt - b.receivedAt || a.provider.localeCompare(b.provider));
  return {
    providers,
    since: iso(options.since)!,
    records: live.slice(0, options.limit).map((record) => ({
      provider: record.provider,
      receivedAt: iso(record.receivedAt)!,
      reason: record.reason,
      httpStatus: record.httpStatus,
      ...(record.sourceHash ? { sourceHash: record.sourceHash } : {}),
      headerNames: record.headerNames,
      headerNamesTruncated: record.headerNamesTruncated,
      bodyBytes: record.bodyBytes,
      digest: record.digest,
      expiresAt: iso(record.expiresAt * 1000)!,
    })),
    truncated: live.length > options.limit,
  };
}
