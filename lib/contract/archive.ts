/**
 * The archive (docs/ARCHIVE.md): every processed delivery's exact bytes and its sanitized record,
 * written by the processor, one S3 object of JSON lines per batch, provider and day. The
 * construct (the Glue table's columns and partitions), the processor (what it writes) and the ops
 * CLI (what `search` and `export` read) share this layout.
 */

/** Environment variable: the archive bucket's name, set on the processor when the archive is on. */
export const ARCHIVE_BUCKET_ENV = 'WEBHOOK_INBOX_ARCHIVE_BUCKET';

/** The folder of the archive's objects in its bucket. */
export const ARCHIVE_PREFIX = 'deliveries';

/** One archived delivery: a line of an archive object. */
export interface ArchiveRecord {
  readonly provider: string;
  /** The stable event id the inbox keys the delivery by. */
  readonly eventId: string;
  /** The provider's event type, where its deliveries name one (as the delivery record logs it). */
  readonly eventType?: string;
  /** When the verifier received it (ISO-8601, ms); for a result fetched by polling, when it was fetched. */
  readonly receivedAt: string;
  /** When the provider signed it, for a scheme that signs a time (ISO-8601). */
  readonly eventTimestamp?: string;
  /** When this processing attempt archived it (ISO-8601, ms). */
  readonly archivedAt: string;
  /** `valid` for a delivery (the signature verified), `not_checked` for a result fetched by polling the provider's API. */
  readonly signatureResult: 'valid' | 'not_checked';
  /** `new`: the first copy of its event id, the one the inbox stored. */
  readonly dedupeResult: 'new';
  /** What the processor decided (`winner`, `superseded`, `event`, ...). */
  readonly reconcileResult: string;
  /** SHA-256 of the exact bytes, lower-case hex. */
  readonly digest: string;
  /** The provider headers the inbox keeps (never a signature). */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes received, base64. */
  readonly bodyBase64: string;
}

/** The columns of the Glue table over the archive: every field of `ArchiveRecord` (partitions apart), text but for the headers. */
export const ARCHIVE_COLUMNS: readonly { readonly name: keyof ArchiveRecord; readonly type: string }[] = (
  [
    'provider',
    'eventId',
    'eventType',
    'receivedAt',
    'eventTimestamp',
    'archivedAt',
    'signatureResult',
    'dedupeResult',
    'reconcileResult',
    'digest',
    'headers',
    'bodyBase64',
  ] as const
).map((name) => ({ name, type: name === 'headers' ? 'map<string,string>' : 'string' }));

/** The partition columns: the provider, and the UTC day the delivery was received. */
export const ARCHIVE_PARTITIONS = { PROVIDER: 'source', DAY: 'day' } as const;

/** `deliveries/source=<provider>/day=<yyyy-mm-dd>/`: where a provider's deliveries of one UTC day are. */
export function archiveDayPrefix(provider: string, day: string): string {
  return `${ARCHIVE_PREFIX}/${ARCHIVE_PARTITIONS.PROVIDER}=${provider}/${ARCHIVE_PARTITIONS.DAY}=${day}/`;
}

/** The UTC day (`yyyy-mm-dd`) of an instant in epoch ms. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
