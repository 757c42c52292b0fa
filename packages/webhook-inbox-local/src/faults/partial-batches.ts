/**
 * Partial results of batch calls, as AWS gives them when some entries of a batch cannot be
 * handled (throttled, an internal failure) and the emulators never do: the proxy forwards the
 * entries it keeps and reports the others back in the service's own shape, merged into what the
 * service answered for the kept ones.
 *
 * - DynamoDB `BatchWriteItem`: the refused requests in `UnprocessedItems` (nothing written);
 *   `BatchGetItem`: the refused keys in `UnprocessedKeys` with the request's projection (nothing
 *   read). When every entry is refused, DynamoDB answers `ProvisionedThroughputExceededException`
 *   instead, as its API reference says.
 * - SQS `SendMessageBatch`: the refused entries in `Failed` (`SenderFault: false`, nothing sent).
 * - EventBridge `PutEvents`: the refused entries with an `ErrorCode`, in their places in
 *   `Entries`, counted in `FailedEntryCount` (nothing put on the bus).
 */
import { AwsCall, AwsService, throttledAnswer, WireAnswer } from './aws-calls';

/** The batch operations whose partial results the proxy can inject. */
export const BATCH_OPERATIONS: Readonly<Record<AwsService, readonly string[]>> = {
  dynamodb: ['BatchWriteItem', 'BatchGetItem'],
  sqs: ['SendMessageBatch'],
  events: ['PutEvents'],
};

/** Which entries are refused: the second, fourth, … of the batch, or a lone entry. */
export function refusedByDefault(index: number, count: number): boolean {
  return count === 1 || index % 2 === 1;
}

/** A batch call split in two: what to forward, and how to answer once the kept entries were handled. */
export interface SplitBatch {
  /** How many entries are refused. */
  readonly refused: number;
  /** The request to forward with the kept entries; undefined when every entry is refused. */
  readonly forward?: Record<string, unknown>;
  /** The answer: the service's answer for the kept entries (absent when nothing was forwarded) with the refused ones reported. */
  answer(upstream?: Record<string, unknown>): Record<string, unknown>;
  /** When every entry is refused, the error the service answers instead of a result (DynamoDB's). */
  readonly refusedWhole?: WireAnswer;
}

type Json = Record<string, unknown>;

/** Splits a batch call; undefined when the call is no batch the proxy splits, or nothing is refused. */
export function splitBatch(call: AwsCall, refuse: (index: number, count: number) => boolean = refusedByDefault): SplitBatch | undefined {
  switch (`${call.service}.${call.operation}`) {
    case 'dynamodb.BatchWriteItem':
      return splitWrites(call.input, refuse);
    case 'dynamodb.BatchGetItem':
      return splitGets(call.input, refuse);
    case 'sqs.SendMessageBatch':
      return splitSends(call.input, refuse);
    case 'events.PutEvents':
      return splitPuts(call.input, refuse);
    default:
      return undefined;
  }
}

/** Each table's entries, numbered across the whole request in order, split by `refuse`. */
function partition<T>(
  byTable: Record<string, readonly T[]>,
  refuse: (index: number, count: number) => boolean,
): { kept: Record<string, T[]>; refused: Record<string, T[]>; refusedCount: number; keptCount: number } {
  const count = Object.values(byTable).reduce((sum, entries) => sum + entries.length, 0);
  const kept: Record<string, T[]> = {};
  const refused: Record<string, T[]> = {};
  let index = 0;
  let refusedCount = 0;
  for (const [table, entries] of Object.entries(byTable)) {
    for (const entry of entries) {
      const target = refuse(index++, count) ? refused : kept;
      (target[table] ??= []).push(entry);
      if (target === refused) refusedCount++;
    }
  }
  return { kept, refused, refusedCount, keptCount: count - refusedCount };
}

function splitWrites(input: Json, refuse: (index: number, count: number) => boolean): SplitBatch | undefined {
  const requests = (input.RequestItems ?? {}) as Record<string, unknown[]>;
  const { kept, refused, refusedCount, keptCount } = partition(requests, refuse);
  if (refusedCount === 0) return undefined;
  return {
    refused: refusedCount,
    ...(keptCount > 0 ? { forward: { ...input, RequestItems: kept } } : { refusedWhole: throttledAnswer('dynamodb') }),
    answer(upstream = {}) {
      const unprocessed = { ...((upstream.UnprocessedItems ?? {}) as Record<string, unknown[]>) };
      for (const [table, entries] of Object.entries(refused)) unprocessed[table] = [...(unprocessed[table] ?? []), ...entries];
      return { ...upstream, UnprocessedItems: unprocessed };
    },
  };
}

function splitGets(input: Json, refuse: (index: number, count: number) => boolean): SplitBatch | undefined {
  const requests = (input.RequestItems ?? {}) as Record<string, Json & { Keys?: unknown[] }>;
  const { kept, refused, refusedCount, keptCount } = partition(
    Object.fromEntries(Object.entries(requests).map(([table, request]) => [table, request.Keys ?? []])),
    refuse,
  );
  if (refusedCount === 0) return undefined;
  // Each table's keys with its own projection, consistency and names, as DynamoDB hands them back.
  const withKeys = (keys: Record<string, unknown[]>) =>
    Object.fromEntries(Object.entries(keys).map(([table, tableKeys]) => [table, { ...requests[table], Keys: tableKeys }]));
  return {
    refused: refusedCount,
    ...(keptCount > 0 ? { forward: { ...input, RequestItems: withKeys(kept) } } : { refusedWhole: throttledAnswer('dynamodb') }),
    answer(upstream = {}) {
      const unprocessed = { ...((upstream.UnprocessedKeys ?? {}) as Record<string, Json & { Keys: unknown[] }>) };
      for (const [table, request] of Object.entries(withKeys(refused))) {
        unprocessed[table] = { ...request, Keys: [...(unprocessed[table]?.Keys ?? []), ...request.Keys] };
      }
      return { Responses: {}, ...upstream, UnprocessedKeys: unprocessed };
    },
  };
}

function splitSends(input: Json, refuse: (index: number, count: number) => boolean): SplitBatch | undefined {
  const entries = (input.Entries ?? []) as (Json & { Id: string })[];
  const refusedEntries = entries.filter((_, index) => refuse(index, entries.length));
  if (refusedEntries.length === 0) return undefined;
  const kept = entries.filter((entry) => !refusedEntries.includes(entry));
  return {
    refused: refusedEntries.length,
    ...(kept.length > 0 ? { forward: { ...input, Entries: kept } } : {}),
    answer(upstream = {}) {
      return {
        Successful: upstream.Successful ?? [],
        Failed: [
          ...((upstream.Failed ?? []) as unknown[]),
          ...refusedEntries.map((entry) => ({ Id: entry.Id, SenderFault: false, Code: 'InternalError', Message: 'An internal error occurred.' })),
        ],
      };
    },
  };
}

function splitPuts(input: Json, refuse: (index: number, count: number) => boolean): SplitBatch | undefined {
  const entries = (input.Entries ?? []) as unknown[];
  const refusedAt = new Set(entries.flatMap((_, index) => (refuse(index, entries.length) ? [index] : [])));
  if (refusedAt.size === 0) return undefined;
  const kept = entries.filter((_, index) => !refusedAt.has(index));
  return {
    refused: refusedAt.size,
    ...(kept.length > 0 ? { forward: { ...input, Entries: kept } } : {}),
    answer(upstream = {}) {
      // The service's entries for the kept ones, in order, with the refused ones in their places.
      const answered = [...((upstream.Entries ?? []) as unknown[])];
      const merged = entries.map((_, index) => (refusedAt.has(index) ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' } : answered.shift()));
      return { ...upstream, FailedEntryCount: Number(upstream.FailedEntryCount ?? 0) + refusedAt.size, Entries: merged };
    },
  };
}
