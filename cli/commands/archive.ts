import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ArchiveRecord, archiveDayPrefix, OpsConfig, utcDay } from '../../lib/contract';
import type { OpsClients } from '../clients';
import { OpsError, UsageError } from '../errors';

/** The longest window `search` and `export` read without Athena: a day prefix is listed per provider and day. */
export const MAX_ARCHIVE_WINDOW_DAYS = 31;

/** What `search` and `export` select: a window of receipt times, a provider or all, a type or all. */
export interface ArchiveQuery {
  readonly provider?: string;
  readonly eventType?: string;
  /** Received at or after, epoch ms. */
  readonly from: number;
  /** Received before, epoch ms. */
  readonly to: number;
}

/** A search's line: the record without its body. */
export type ArchiveEntry = Omit<ArchiveRecord, 'bodyBase64'> & { readonly bodyBytes: number };

/** The UTC days a window touches, oldest first; a usage error past `MAX_ARCHIVE_WINDOW_DAYS`. */
export function windowDays(from: number, to: number): string[] {
  const days: string[] = [];
  for (let day = Date.parse(`${utcDay(from)}T00:00:00Z`); day < to; day += 86_400_000) days.push(utcDay(day));
  if (days.length > MAX_ARCHIVE_WINDOW_DAYS) {
    throw new UsageError(
      `--from/--to spans ${days.length} days: search and export read at most ${MAX_ARCHIVE_WINDOW_DAYS}; query the Glue table with Athena for more`,
    );
  }
  return days;
}

/**
 * The archived deliveries a query selects, in order of receipt, each once: a retried batch is
 * archived again, so a line repeating an event id and digest is left out.
 */
export async function readArchive(clients: OpsClients, config: OpsConfig, query: ArchiveQuery): Promise<ArchiveRecord[]> {
  const bucket = config.archiveBucket;
  if (!bucket) throw new OpsError("this inbox has no archive: set the construct's archive prop (docs/ARCHIVE.md)");
  if (query.provider !== undefined && !config.providers.includes(query.provider)) {
    throw new OpsError(`this inbox serves no provider named ${query.provider} (it serves ${config.providers.join(', ')})`);
  }
  const providers = query.provider === undefined ? config.providers : [query.provider];
  const seen = new Set<string>();
  const records: ArchiveRecord[] = [];
  for (const provider of providers) {
    for (const day of windowDays(query.from, query.to)) {
      for (const key of await objectKeys(clients, bucket, archiveDayPrefix(provider, day))) {
        const text = await (await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
        for (const record of selected(text, query)) {
          const identity = `${record.provider}#${record.eventId}#${record.digest}`;
          if (seen.has(identity)) continue;
          seen.add(identity);
          records.push(record);
        }
      }
    }
  }
  return records.sort((a, b) => a.receivedAt.localeCompare(b.receivedAt));
}

/** The lines of one archive object the query selects. */
export function selected(text: string, query: ArchiveQuery): ArchiveRecord[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ArchiveRecord)
    .filter((record) => {
      const at = Date.parse(record.receivedAt);
      return at >= query.from && at < query.to && (query.eventType === undefined || record.eventType === query.eventType);
    });
}

/** A search's line of a record: everything but the body, and the body's size. */
export function entryOf({ bodyBase64, ...record }: ArchiveRecord): ArchiveEntry {
  return { ...record, bodyBytes: Buffer.from(bodyBase64, 'base64').length };
}

async function objectKeys(clients: OpsClients, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((object) => object.Key!));
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

/** The search report as text: one line per delivery. */
export function formatSearch(entries: readonly ArchiveEntry[]): string {
  if (entries.length === 0) return 'no archived deliveries match\n';
  return `${entries.map((entry) => `${entry.receivedAt}  ${entry.provider}#${entry.eventId}  ${entry.eventType ?? '-'}  ${entry.bodyBytes} bytes  ${entry.reconcileResult}`).join('\n')}\n${entries.length} deliveries\n`;
}
