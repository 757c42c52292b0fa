/**
 * DynamoDB request units, counted the way DynamoDB bills them on demand, from the items
 * themselves: a write costs one write request unit (WRU) per started KB of the larger of the
 * item before and after it; every global secondary index whose entry the write creates, removes
 * or changes costs its own writes (a KEYS_ONLY entry changes only when its keys do; a removed
 * key deletes the entry, a changed key deletes and puts it); a read costs one read request unit
 * (RRU) per started 4 KB of what it reads (half for an eventually consistent read, which every
 * GSI query is), and a GetItem, or each item of a BatchGetItem, is billed on the whole item
 * whatever its projection.
 *
 * The meter reads each written item before and after the write through its own client (not
 * counted, not metered), so it runs on a small trace, not while anything is being timed.
 * dynalite also reports the table's units (ReturnConsumedCapacity); the meter asks for them and
 * keeps both, so the bench can show that the two agree.
 */
import { AttributeValue, DescribeTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { addMiddleware, purposeOf, SdkClient } from './counting';

type Item = Record<string, AttributeValue>;

/** Size of an attribute value in bytes, by DynamoDB's item size rules. */
export function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.B !== undefined) return value.B.length;
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s, 'utf8'), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.length, 0);
  // A map or list: 3 bytes, and 1 byte per element (plus each element's name and value).
  if (value.M !== undefined) return 3 + Object.entries(value.M).reduce((sum, [name, v]) => sum + 1 + Buffer.byteLength(name, 'utf8') + valueBytes(v), 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueBytes(v), 0);
  return 0;
}

/** A number: about one byte per two significant digits, plus one. */
function numberBytes(text: string): number {
  const digits = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

/** Size of an item in bytes: the names and the values of its attributes. */
export function itemBytes(item: Item | undefined): number {
  if (!item) return 0;
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name, 'utf8') + valueBytes(value), 0);
}

const KB = 1024;
const writeUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / KB));
const readUnits = (bytes: number, consistent: boolean): number => Math.max(1, Math.ceil(bytes / (4 * KB))) * (consistent ? 1 : 0.5);

interface IndexShape {
  readonly name: string;
  readonly keys: readonly string[];
  readonly projection: 'KEYS_ONLY' | 'INCLUDE' | 'ALL';
  readonly included: readonly string[];
}

interface TableShape {
  readonly keys: readonly string[];
  readonly indexes: readonly IndexShape[];
}

/** Request units of one metered purpose (e.g. the processor's claim), added up. */
export interface MeteredUnits {
  readonly stage: string;
  readonly operation: string;
  readonly purpose: string;
  calls: number;
  /** Items written or read: one per call, but each item a batch write wrote. */
  items: number;
  /** Table write units by the size rules. */
  tableWru: number;
  /** Index writes, in write units, and how many index entries were written. */
  indexWru: number;
  indexWrites: number;
  rru: number;
  /** The table units dynalite reported for the same requests (ReturnConsumedCapacity). */
  dynaliteUnits: number;
  /** Bytes of the item after the write (or read), added up. */
  itemBytes: number;
  /** Which indexes were written, by name. */
  readonly indexes: Record<string, number>;
}

type Next = (args: { input: Record<string, unknown> }) => Promise<{ output: Record<string, unknown> }>;

export class CapacityMeter {
  private readonly shapes = new Map<string, Promise<TableShape>>();
  private readonly units = new Map<string, MeteredUnits>();

  /** `reader` must be a client nobody counts or meters: the meter's own reads are not the pipeline's. */
  constructor(private readonly reader: DynamoDBClient) {}

  attach<C extends SdkClient>(client: C, stage: string): C {
    addMiddleware(
      client,
      (next: Next, context: { commandName?: string }) => async (args: { input: Record<string, unknown> }) => {
        const operation = (context.commandName ?? '').replace(/Command$/, '');
        const input = args.input;
        if (operation === 'BatchWriteItem') return this.batchWrite(stage, input, next, args);
        if (operation === 'BatchGetItem') return this.batchGet(stage, input, next, args);
        const table = String(input.TableName ?? '');
        if (!table || !['PutItem', 'UpdateItem', 'DeleteItem', 'GetItem', 'Query'].includes(operation)) return next(args);
        const purpose = purposeOf(operation, input);
        const shape = await this.shape(table);
        input.ReturnConsumedCapacity = 'TOTAL';
        const entry = this.entry(stage, operation, purpose);
        entry.calls += 1;
        entry.items += 1;
        if (operation === 'Query') {
          const result = await next(args);
          const items = (result.output.Items ?? []) as Item[];
          entry.rru += readUnits(
            items.reduce((sum, item) => sum + itemBytes(item), 0),
            input.ConsistentRead === true && !input.IndexName,
          );
          entry.dynaliteUnits += Number((result.output.ConsumedCapacity as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0);
          return result;
        }
        const key = (input.Key as Item | undefined) ?? pick(input.Item as Item, shape.keys);
        const before = await this.read(table, key);
        let result;
        try {
          result = await next(args);
        } catch (error) {
          // A failed condition still costs the write units of the item as it stands.
          if ((error as { name?: string }).name === 'ConditionalCheckFailedException') entry.tableWru += writeUnits(itemBytes(before));
          throw error;
        }
        entry.dynaliteUnits += Number((result.output.ConsumedCapacity as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0);
        if (operation === 'GetItem') {
          entry.rru += readUnits(itemBytes(before), input.ConsistentRead === true);
          entry.itemBytes += itemBytes(before);
          return result;
        }
        const after = await this.read(table, key);
        entry.itemBytes += itemBytes(after);
        entry.tableWru += writeUnits(Math.max(itemBytes(before), itemBytes(after)));
        for (const index of shape.indexes) {
          const writes = indexWrites(index, shape.keys, before, after);
          if (writes.count === 0) continue;
          entry.indexWrites += writes.count;
          entry.indexWru += writes.units;
          entry.indexes[index.name] = (entry.indexes[index.name] ?? 0) + writes.count;
        }
        return result;
      },
      { step: 'initialize', name: 'benchCapacityMeter', override: true, priority: 'low' },
    );
    return client;
  }

  /** Each put or delete of a BatchWriteItem metered as its own write; DynamoDB bills them so. */
  private async batchWrite(stage: string, input: Record<string, unknown>, next: Next, args: { input: Record<string, unknown> }) {
    const entry = this.entry(stage, 'BatchWriteItem', purposeOf('BatchWriteItem', input));
    entry.calls += 1;
    input.ReturnConsumedCapacity = 'TOTAL';
    const writes: { table: string; key: Item; shape: TableShape; before: Item | undefined }[] = [];
    for (const [table, requests] of Object.entries(input.RequestItems as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>)) {
      const shape = await this.shape(table);
      for (const request of requests) {
        const key = request.DeleteRequest?.Key ?? pick(request.PutRequest!.Item, shape.keys);
        writes.push({ table, key, shape, before: await this.read(table, key) });
      }
    }
    const result = await next(args);
    const unprocessed = new Set<string>();
    for (const [table, requests] of Object.entries(
      (result.output.UnprocessedItems ?? {}) as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>,
    )) {
      const { keys } = await this.shape(table);
      for (const request of requests) unprocessed.add(`${table}|${JSON.stringify(request.DeleteRequest?.Key ?? pick(request.PutRequest!.Item, keys))}`);
    }
    for (const write of writes) {
      if (unprocessed.has(`${write.table}|${JSON.stringify(write.key)}`)) continue;
      entry.items += 1;
      const after = await this.read(write.table, write.key);
      entry.itemBytes += itemBytes(after);
      entry.tableWru += writeUnits(Math.max(itemBytes(write.before), itemBytes(after)));
      for (const index of write.shape.indexes) {
        const written = indexWrites(index, write.shape.keys, write.before, after);
        if (written.count === 0) continue;
        entry.indexWrites += written.count;
        entry.indexWru += written.units;
        entry.indexes[index.name] = (entry.indexes[index.name] ?? 0) + written.count;
      }
    }
    const consumed = (result.output.ConsumedCapacity ?? []) as { CapacityUnits?: number }[];
    entry.dynaliteUnits += consumed.reduce((sum, table) => sum + Number(table.CapacityUnits ?? 0), 0);
    return result;
  }

  /** Each key of a BatchGetItem read as its own GetItem: DynamoDB bills each item's whole size, whatever the projection. */
  private async batchGet(stage: string, input: Record<string, unknown>, next: Next, args: { input: Record<string, unknown> }) {
    const entry = this.entry(stage, 'BatchGetItem', purposeOf('BatchGetItem', input));
    entry.calls += 1;
    input.ReturnConsumedCapacity = 'TOTAL';
    const result = await next(args);
    for (const [table, request] of Object.entries(input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>)) {
      const unread = new Set(
        ((result.output.UnprocessedKeys as Record<string, { Keys: Item[] }> | undefined)?.[table]?.Keys ?? []).map((key) => JSON.stringify(key)),
      );
      for (const key of request.Keys) {
        if (unread.has(JSON.stringify(key))) continue;
        const item = await this.read(table, key);
        entry.items += 1;
        entry.itemBytes += itemBytes(item);
        entry.rru += readUnits(itemBytes(item), request.ConsistentRead === true);
      }
    }
    const consumed = (result.output.ConsumedCapacity ?? []) as { CapacityUnits?: number }[];
    entry.dynaliteUnits += consumed.reduce((sum, table) => sum + Number(table.CapacityUnits ?? 0), 0);
    return result;
  }

  all(): MeteredUnits[] {
    return [...this.units.values()].map((entry) => ({ ...entry, indexes: { ...entry.indexes } }));
  }

  private entry(stage: string, operation: string, purpose: string): MeteredUnits {
    const key = `${stage}|${operation}|${purpose}`;
    let entry = this.units.get(key);
    if (!entry) {
      entry = { stage, operation, purpose, calls: 0, items: 0, tableWru: 0, indexWru: 0, indexWrites: 0, rru: 0, dynaliteUnits: 0, itemBytes: 0, indexes: {} };
      this.units.set(key, entry);
    }
    return entry;
  }

  private async read(table: string, key: Item): Promise<Item | undefined> {
    const out = await this.reader.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }));
    return out.Item;
  }

  private shape(table: string): Promise<TableShape> {
    let shape = this.shapes.get(table);
    if (!shape) {
      shape = this.reader.send(new DescribeTableCommand({ TableName: table })).then(({ Table }) => ({
        keys: (Table?.KeySchema ?? []).map((key) => key.AttributeName!),
        indexes: (Table?.GlobalSecondaryIndexes ?? []).map((index) => ({
          name: index.IndexName!,
          keys: (index.KeySchema ?? []).map((key) => key.AttributeName!),
          projection: (index.Projection?.ProjectionType ?? 'ALL') as IndexShape['projection'],
          included: index.Projection?.NonKeyAttributes ?? [],
        })),
      }));
      this.shapes.set(table, shape);
    }
    return shape;
  }
}

function pick(item: Item, names: readonly string[]): Item {
  return Object.fromEntries(names.map((name) => [name, item[name]]));
}

/** The entry an item has in an index: undefined when it lacks one of the index's keys (sparse). */
function indexEntry(index: IndexShape, tableKeys: readonly string[], item: Item | undefined): Item | undefined {
  if (!item || index.keys.some((name) => item[name] === undefined)) return undefined;
  if (index.projection === 'ALL') return item;
  const names = new Set([...tableKeys, ...index.keys, ...(index.projection === 'INCLUDE' ? index.included : [])]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => names.has(name)));
}

function indexWrites(index: IndexShape, tableKeys: readonly string[], before: Item | undefined, after: Item | undefined): { count: number; units: number } {
  const old = indexEntry(index, tableKeys, before);
  const next = indexEntry(index, tableKeys, after);
  if (!old && !next) return { count: 0, units: 0 };
  if (!old) return { count: 1, units: writeUnits(itemBytes(next)) };
  if (!next) return { count: 1, units: writeUnits(itemBytes(old)) };
  const keysChanged = index.keys.some((name) => JSON.stringify(old[name]) !== JSON.stringify(next[name]));
  if (keysChanged) return { count: 2, units: writeUnits(itemBytes(old)) + writeUnits(itemBytes(next)) };
  if (JSON.stringify(sorted(old)) === JSON.stringify(sorted(next))) return { count: 0, units: 0 };
  return { count: 1, units: writeUnits(Math.max(itemBytes(old), itemBytes(next))) };
}

function sorted(item: Item): [string, AttributeValue][] {
  return Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1));
}
