import { AttributeValue, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { AdapterKind, Defaults, InboxAttr as A, InboxItemKind, OpsConfig, providerRuntimeConfig, ResultAttr as R } from '../../lib/contract';
import { queryPages } from '../../lambda/shared/stores/dynamo';
import { inlineBodyOf } from '../../lambda/shared/stores/inline-body';
import { readBodyItem, rowDigestOf } from '../../lambda/shared/stores/inbox';
import { adaptersFor } from '../../lambda/shared/providers/registry';
import { safeErrorText } from '../../lambda/shared/runtime/errors';
import { S3BodyStore } from '../../lambda/shared/stores/s3-body-store';
import { isLive, resultKey } from '../../lambda/shared/stores/results-store';
import { OpsClients } from '../clients';
import { OpsError } from '../errors';
import { EventRef, iso, numberAttr } from './common';

/** A delivery row without its body: what an operator may see. */
export interface InspectedRow {
  readonly key: string;
  readonly provider: string;
  readonly eventId: string;
  readonly status: string;
  readonly attempts: number;
  readonly outcome?: string;
  readonly digest: string;
  readonly receivedAt?: string;
  readonly processedAt?: string;
  /** Pending since (pending index), when the row is not processed. */
  readonly pendingSince?: string;
  readonly leaseUntil?: string;
  /** Provider headers kept at admission; the verifier already left out signatures and credentials. */
  readonly meta: Readonly<Record<string, string>>;
  readonly lastError?: string;
  /** Where the body is: in the row, in an item of its own beside it, or in the body bucket. */
  readonly body: { readonly where: 'inline' | 'item' | 's3'; readonly bytes?: number; readonly reference?: string };
}

export interface InspectedCopy {
  readonly digest: string;
  readonly count: number;
  readonly firstSeen?: string;
  readonly lastSeen?: string;
}

/** The job a delivery reports a final result for, and the job's current winner. */
export interface InspectedJob {
  readonly jobKey: string;
  /** Absent when the results table has no item for the job (not processed yet). */
  readonly status?: string;
  readonly taskId?: string;
  /** True when the winner is this very delivery's result. */
  readonly decidedByThisDelivery?: boolean;
}

export interface InspectReport {
  readonly row: InspectedRow;
  readonly quarantined: readonly InspectedCopy[];
  /** Undefined when the delivery reports no final result of a job; `note` says why when it is unknown. */
  readonly job?: InspectedJob;
  readonly jobNote?: string;
}

/** Reads one event's row, its quarantined copies and its job's result (absent once expired at `now`). Never returns the body. */
export async function inspect(clients: OpsClients, config: OpsConfig, event: EventRef, now: number = Date.now()): Promise<InspectReport> {
  const out = await clients.dynamodb.send(
    new GetItemCommand({
      TableName: config.inboxTable,
      Key: { [A.PK]: { S: event.key }, [A.SK]: { S: InboxItemKind.DELIVERY } },
      ConsistentRead: true,
    }),
  );
  const item = out.Item;
  if (!item) {
    throw new OpsError(
      `unknown event ${event.key}: no row in ${config.inboxTable} (providers of inbox ${config.inboxName}: ${config.providers.join(', ') || 'none'}; rows expire after the retention period)`,
    );
  }
  const [body, quarantined] = await Promise.all([bodyInfo(clients, config, item), copies(clients, config, event.key)]);
  const meta = Object.fromEntries(Object.entries(item[A.META]?.M ?? {}).map(([name, value]) => [name, value.S ?? '']));
  const row: InspectedRow = {
    key: event.key,
    provider: event.provider,
    eventId: event.eventId,
    status: item[A.STATUS]?.S ?? 'UNKNOWN',
    attempts: numberAttr(item[A.ATTEMPTS]) ?? 0,
    ...defined('outcome', item[A.OUTCOME]?.S),
    digest: rowDigestOf(item),
    ...defined('receivedAt', iso(numberAttr(item[A.RECEIVED_AT]))),
    ...defined('processedAt', iso(numberAttr(item[A.PROCESSED_AT]))),
    ...defined('pendingSince', iso(numberAttr(item[A.PENDING_SINCE]))),
    ...defined('leaseUntil', iso(numberAttr(item[A.LEASE_UNTIL]))),
    meta,
    ...defined('lastError', item[A.LAST_ERROR]?.S),
    body,
  };
  const { job, note } = await jobOf(clients, config, event.key, row, item, now);
  return { row, quarantined, ...(job ? { job } : {}), ...(note ? { jobNote: note } : {}) };
}

function defined<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

async function bodyInfo(clients: OpsClients, config: OpsConfig, item: Record<string, AttributeValue>): Promise<InspectedRow['body']> {
  const reference = item[A.BODY_REF]?.S;
  if (item[A.BODY_ITEM]?.BOOL) return { where: 'item', bytes: (await storedBody(clients, config, item)).length };
  if (reference === undefined) return { where: 'inline', bytes: inlineBodyOf(item).length };
  if (!config.bodyBucket) return { where: 's3', reference };
  const head = await clients.s3.send(new HeadObjectCommand({ Bucket: config.bodyBucket, Key: reference }));
  return { where: 's3', reference, ...(head.ContentLength === undefined ? {} : { bytes: head.ContentLength }) };
}

/** The altered copies kept beside the row: one Query of the row's own partition. */
async function copies(clients: OpsClients, config: OpsConfig, key: string): Promise<InspectedCopy[]> {
  const result: InspectedCopy[] = [];
  await queryPages(
    clients.dynamodb,
    {
      TableName: config.inboxTable,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :quarantine)',
      ProjectionExpression: '#digest, #count, #receivedAt, #lastSeen',
      ExpressionAttributeNames: {
        '#pk': A.PK,
        '#sk': A.SK,
        '#digest': A.DIGEST,
        '#count': A.COUNT,
        '#receivedAt': A.RECEIVED_AT,
        '#lastSeen': A.LAST_SEEN_AT,
      },
      ExpressionAttributeValues: { ':pk': { S: key }, ':quarantine': { S: InboxItemKind.QUARANTINE_PREFIX } },
      ConsistentRead: true,
    },
    (items) => {
      for (const copy of items) result.push(quarantinedCopy(copy));
    },
  );
  return result;
}

export function quarantinedCopy(item: Record<string, AttributeValue>): InspectedCopy {
  return {
    digest: item[A.DIGEST]?.S ?? '',
    count: numberAttr(item[A.COUNT]) ?? 0,
    ...defined('firstSeen', iso(numberAttr(item[A.RECEIVED_AT]))),
    ...defined('lastSeen', iso(numberAttr(item[A.LAST_SEEN_AT]))),
  };
}

/** The adapter kind serving a provider: the config's map, else a provider named after its preset. */
export function adapterKindOf(config: OpsConfig, provider: string): string | undefined {
  const kinds: readonly string[] = Object.values(AdapterKind);
  return config.adapters?.[provider] ?? (kinds.includes(provider) ? provider : undefined);
}

/**
 * The job this delivery reports a final result for, read the way the processor reads it (the
 * provider's adapter on the stored body, in memory only), and the job's current winner.
 */
async function jobOf(
  clients: OpsClients,
  config: OpsConfig,
  key: string,
  row: InspectedRow,
  item: Record<string, AttributeValue>,
  now: number,
): Promise<{ job?: InspectedJob; note?: string }> {
  const kind = adapterKindOf(config, row.provider);
  if (!kind) return { note: `the adapter of provider ${row.provider} is not known to this CLI; job result not looked up` };
  let adapter;
  try {
    adapter = adaptersFor([providerRuntimeConfig({ name: row.provider, adapter: kind, secretId: '-' })]).get(row.provider)!;
  } catch {
    // The generic HMAC adapter cannot be built without its scheme; it reports no jobs anyway.
    return {};
  }
  let body: Buffer;
  try {
    body = await storedBody(clients, config, item);
  } catch (error) {
    return { note: `the body could not be read to find its job (${safeErrorText(error)})` };
  }
  let observation;
  try {
    observation = adapter.observe(body, row.meta);
  } catch (error) {
    return { note: `the body cannot be interpreted (${safeErrorText(error)})` };
  }
  if (!observation) return {};
  const out = await clients.dynamodb.send(
    new GetItemCommand({
      TableName: config.resultsTable,
      Key: { [R.PK]: { S: resultKey(row.provider, observation.jobKey) } },
      ConsistentRead: true,
      ProjectionExpression: '#status, #taskId, #eventKey, #expiresAt, #updatedAt',
      ExpressionAttributeNames: { '#status': R.STATUS, '#taskId': R.TASK_ID, '#eventKey': R.EVENT_KEY, '#expiresAt': R.EXPIRES_AT, '#updatedAt': R.UPDATED_AT },
    }),
  );
  const result = out.Item;
  // An expired result is absent, as the processor reads it, whether its TTL has deleted it yet or not.
  const expiry = { updatedAt: numberAttr(result?.[R.UPDATED_AT]) ?? 0, ...defined('expiresAt', numberAttr(result?.[R.EXPIRES_AT])) };
  if (!result || !isLive(expiry, now, config.resultRetentionSeconds ?? Defaults.RETENTION_DAYS * 86_400)) return { job: { jobKey: observation.jobKey } };
  return {
    job: {
      jobKey: observation.jobKey,
      ...defined('status', result[R.STATUS]?.S),
      ...defined('taskId', result[R.TASK_ID]?.S),
      decidedByThisDelivery: result[R.EVENT_KEY]?.S === key,
    },
  };
}

async function storedBody(clients: OpsClients, config: OpsConfig, item: Record<string, AttributeValue>): Promise<Buffer> {
  const reference = item[A.BODY_REF]?.S;
  if (item[A.BODY_ITEM]?.BOOL) return inlineBodyOf(await readBodyItem(clients.dynamodb, config.inboxTable, item));
  if (reference === undefined) return inlineBodyOf(item);
  if (!config.bodyBucket) throw new OpsError('the row points at the body bucket, but the inbox configuration names none');
  return new S3BodyStore(clients.s3, config.bodyBucket).get(reference);
}
