/**
 * A global secondary index that lags its table, as DynamoDB's do (an index is updated
 * asynchronously) and dynalite's never do. The proxy hands every write of a function to
 * `beforeWrite` (which reads the item's image before the write, straight from the emulator),
 * and every answer of a Query on a global index to `lagQuery`, which answers as an index `lagMs`
 * behind its table would: an item written less than `lagMs` ago shows the image it had before
 * that write, so an entry written recently is missing, an entry moved or removed recently is
 * still where it was, and updated attributes still hold their old values.
 *
 * Writes the proxy does not see (an operator's, the app's through the IAM gateway) are not
 * delayed. Queries with a `FilterExpression` (none of the handlers' index queries has one), or a
 * `ProjectionExpression` naming anything but top-level attributes, are answered as the table is.
 */
import type { AwsCall } from './aws-calls';

/** An attribute value on the wire (binary values in base64). */
type WireValue = { S?: string; N?: string; B?: string } & Record<string, unknown>;
type Item = Record<string, WireValue>;
type Json = Record<string, unknown>;

/** A DynamoDB call of the emulator itself (not through the proxy), in wire JSON. */
export type DynamoDbReader = (operation: 'GetItem' | 'Query' | 'DescribeTable', input: Json) => Promise<Json>;

interface IndexSchema {
  readonly hash: string;
  readonly range?: string;
  /** The attributes an entry holds besides the keys: all of them (`ALL`), or those listed (`INCLUDE`). */
  readonly projected: 'ALL' | readonly string[];
}

interface TableSchema {
  readonly hash: string;
  readonly range?: string;
  /** Its global secondary indexes, by name. */
  readonly indexes: ReadonlyMap<string, IndexSchema>;
}

/** One write of an item: when the proxy forwarded it, and the item's image just before (undefined: absent). */
interface WriteRecord {
  readonly at: number;
  readonly before?: Item;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

export class IndexLag {
  /** How far the global indexes lag their tables; 0: not at all. */
  private lagMs = 0;
  private now: () => number = Date.now;
  /** Recent writes per table, by item key. */
  private readonly journal = new Map<string, Map<string, WriteRecord[]>>();
  private readonly schemas = new Map<string, Promise<TableSchema | undefined>>();

  /** @param read reads the tables directly (not through the proxy): an item's image before a write, a table's indexes */
  constructor(private readonly read: DynamoDbReader) {}

  /** Whether a call of `operation` to DynamoDB is one the lag reads or changes (a write, a query) while it lasts. */
  concerns(operation: string): boolean {
    return this.lagMs > 0 && (WRITES.has(operation) || operation === 'Query');
  }

  /** From now on the indexes lag `ms` behind their tables, by `now`; 0 ends the lag (and forgets the writes). */
  lagBy(ms: number, now: () => number): void {
    this.lagMs = ms;
    this.now = now;
    if (ms <= 0) this.journal.clear();
  }

  /**
   * Remembers the image of each item `call` writes, as the indexes still show it; nothing while
   * the lag is 0, nor for an update that touches no attribute an index holds.
   */
  async beforeWrite(call: AwsCall): Promise<void> {
    if (this.lagMs <= 0 || call.service !== 'dynamodb' || !WRITES.has(call.operation)) return;
    for (const [table, keys] of Object.entries(await this.writtenKeys(call))) {
      const schema = await this.schemaOf(table);
      if (!schema || schema.indexes.size === 0 || (call.operation === 'UpdateItem' && !updatesIndexed(call.input, schema))) continue;
      const journal = this.journal.get(table) ?? new Map<string, WriteRecord[]>();
      this.journal.set(table, journal);
      for (const key of keys) {
        const before = (await this.read('GetItem', { TableName: table, Key: key, ConsistentRead: true })).Item as Item | undefined;
        const id = keyId(schema, key);
        journal.set(id, [...(journal.get(id) ?? []), { at: this.now(), ...(before ? { before } : {}) }]);
      }
    }
  }

  /**
   * The answer a global index `lagMs` behind its table gives to `call` (a Query), from the answer
   * the table's current state gave; undefined when nothing differs. `changed` counts the entries
   * hidden, shown with their old image, or shown where they no longer are.
   */
  async lagQuery(call: AwsCall, answer: Json): Promise<{ answer: Json; changed: number } | undefined> {
    const input = call.input as Json & { TableName?: string; IndexName?: string };
    if (this.lagMs <= 0 || call.operation !== 'Query' || !input.TableName || !input.IndexName) return undefined;
    const projection = projectionOf(input);
    if (input.FilterExpression !== undefined || projection === 'unsupported') return undefined;
    const schema = await this.schemaOf(input.TableName);
    const index = schema?.indexes.get(input.IndexName);
    const recent = this.recentImages(input.TableName);
    if (!schema || !index || recent.size === 0) return undefined;

    const condition = keyCondition(input);
    const shows = (item: Item | undefined): item is Item =>
      item !== undefined && item[index.hash] !== undefined && (!index.range || item[index.range] !== undefined) && condition(item);
    const counting = input.Select === 'COUNT';
    // A count names no items, and a projection not every key: the same page's entries, read
    // directly and whole, say which entries it holds.
    const items: Item[] =
      counting || projection
        ? (((await this.read('Query', { ...wholeEntries(input), Select: 'ALL_PROJECTED_ATTRIBUTES' })).Items ?? []) as Item[])
        : ((answer.Items ?? []) as Item[]);
    let changed = 0;
    const seen = new Set<string>();
    const entries: Item[] = [];
    for (const item of items) {
      const id = keyId(schema, item);
      seen.add(id);
      if (!recent.has(id)) {
        entries.push(item);
        continue;
      }
      const before = recent.get(id);
      if (!shows(before)) {
        changed++;
        continue;
      }
      const old = project(before, schema, index);
      if (JSON.stringify(old) !== JSON.stringify(project(item, schema, index))) changed++;
      entries.push(old);
    }
    const order = indexOrder(schema, index, input.ScanIndexForward !== false);
    const after = input.ExclusiveStartKey as Item | undefined;
    const upTo = answer.LastEvaluatedKey as Item | undefined;
    for (const [id, before] of recent) {
      if (seen.has(id) || !shows(before)) continue;
      // Only within this page's stretch of the index: another page holds the rest.
      if ((after && order(before, after) <= 0) || (upTo && order(before, upTo) > 0)) continue;
      entries.push(project(before, schema, index));
      changed++;
    }
    if (changed === 0) return undefined;
    entries.sort(order);
    const limit = typeof input.Limit === 'number' ? input.Limit : Infinity;
    const page = entries.slice(0, limit);
    const last = entries.length > limit ? keysOf(page[page.length - 1], schema, index) : upTo;
    const { Items: _items, LastEvaluatedKey: _last, ...rest } = answer;
    return {
      answer: {
        ...rest,
        ...(counting ? {} : { Items: projection ? page.map((entry) => pick(entry, projection)) : page }),
        Count: page.length,
        ScannedCount: page.length,
        ...(last ? { LastEvaluatedKey: last } : {}),
      },
      changed,
    };
  }

  /** The image each item of `table` written within the lag shows in its indexes (undefined: absent), dropping older writes. */
  private recentImages(table: string): Map<string, Item | undefined> {
    const journal = this.journal.get(table);
    const images = new Map<string, Item | undefined>();
    if (!journal) return images;
    const since = this.now() - this.lagMs;
    for (const [id, writes] of journal) {
      const pending = writes.filter((write) => write.at > since);
      if (pending.length === 0) journal.delete(id);
      else {
        journal.set(id, pending);
        // The index has caught up with every write before the first one still pending.
        images.set(id, pending[0].before);
      }
    }
    return images;
  }

  /** The keys `call` writes, by table. */
  private async writtenKeys(call: AwsCall): Promise<Record<string, Item[]>> {
    const input = call.input as Json & { TableName?: string; Key?: Item; Item?: Item };
    if (call.operation === 'BatchWriteItem') {
      const keys: Record<string, Item[]> = {};
      for (const [table, requests] of Object.entries((input.RequestItems ?? {}) as Record<string, Json[]>)) {
        const schema = await this.schemaOf(table);
        if (!schema) continue;
        keys[table] = requests.map((request) => {
          const put = request.PutRequest as { Item: Item } | undefined;
          return put ? keysOf(put.Item, schema) : (request.DeleteRequest as { Key: Item }).Key;
        });
      }
      return keys;
    }
    const table = input.TableName;
    const schema = table ? await this.schemaOf(table) : undefined;
    if (!table || !schema) return {};
    return { [table]: [call.operation === 'PutItem' ? keysOf(input.Item!, schema) : input.Key!] };
  }

  private schemaOf(table: string): Promise<TableSchema | undefined> {
    let schema = this.schemas.get(table);
    if (!schema) {
      schema = this.describe(table);
      this.schemas.set(table, schema);
    }
    return schema;
  }

  private async describe(table: string): Promise<TableSchema | undefined> {
    type KeyElement = { AttributeName?: string; KeyType?: string };
    type Description = {
      KeySchema?: KeyElement[];
      GlobalSecondaryIndexes?: { IndexName?: string; KeySchema?: KeyElement[]; Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] } }[];
    };
    const description = ((await this.read('DescribeTable', { TableName: table }).catch(() => undefined)) as { Table?: Description } | undefined)?.Table;
    if (!description) return undefined;
    const keyNames = (schema: KeyElement[] = []) => ({
      hash: schema.find((key) => key.KeyType === 'HASH')!.AttributeName!,
      range: schema.find((key) => key.KeyType === 'RANGE')?.AttributeName,
    });
    return {
      ...keyNames(description.KeySchema),
      indexes: new Map(
        (description.GlobalSecondaryIndexes ?? []).map((index) => [
          index.IndexName!,
          {
            ...keyNames(index.KeySchema),
            projected: index.Projection?.ProjectionType === 'ALL' ? 'ALL' : (index.Projection?.NonKeyAttributes ?? []),
          },
        ]),
      ),
    };
  }
}

/** Whether an UpdateItem names an attribute some index holds (its keys, or what it projects). */
function updatesIndexed(input: Json, schema: TableSchema): boolean {
  const indexes = [...schema.indexes.values()];
  if (indexes.some((index) => index.projected === 'ALL')) return true;
  const held = new Set(indexes.flatMap((index) => [index.hash, index.range, ...(index.projected as readonly string[])]));
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const words = String(input.UpdateExpression ?? '').match(/#?[A-Za-z_][\w]*/g) ?? [];
  const legacy = Object.keys((input.AttributeUpdates ?? {}) as Record<string, unknown>);
  return [...words.map((word) => names[word] ?? word), ...legacy].some((name) => held.has(name));
}

/** The table key of an item, with the index's keys when given (what a page's `LastEvaluatedKey` names). */
function keysOf(item: Item, schema: TableSchema, index?: IndexSchema): Item {
  const names = [schema.hash, schema.range, index?.hash, index?.range].filter((name): name is string => name !== undefined);
  return Object.fromEntries(names.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]));
}

function keyId(schema: TableSchema, item: Item): string {
  return JSON.stringify([item[schema.hash], schema.range ? item[schema.range] : null]);
}

/**
 * The top-level attributes a query's `ProjectionExpression` names (`#name` tokens resolved);
 * undefined without one, `unsupported` for one naming a nested path or a list element.
 */
function projectionOf(input: Json): readonly string[] | 'unsupported' | undefined {
  if (input.ProjectionExpression === undefined) return undefined;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const tokens = String(input.ProjectionExpression)
    .split(',')
    .map((token) => token.trim());
  return tokens.every((token) => /^#?[\w-]+$/.test(token)) ? tokens.map((token) => names[token] ?? token) : 'unsupported';
}

/** The query without its projection, and without the attribute names only the projection used (DynamoDB refuses unused ones). */
function wholeEntries(input: Json): Json {
  const { ProjectionExpression: _projection, ExpressionAttributeNames: names, ...rest } = input;
  const expressions = [rest.KeyConditionExpression, rest.FilterExpression].filter((expression): expression is string => typeof expression === 'string');
  const used = Object.entries((names ?? {}) as Record<string, string>).filter(([token]) =>
    expressions.some((expression) => new RegExp(`${token}(?![\\w-])`).test(expression)),
  );
  return { ...rest, ...(used.length > 0 ? { ExpressionAttributeNames: Object.fromEntries(used) } : {}) };
}

/** `item` with only the attributes named. */
function pick(item: Item, names: readonly string[]): Item {
  return Object.fromEntries(names.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]));
}

/** An item as the index holds it: its keys and the projected attributes. */
function project(item: Item, schema: TableSchema, index: IndexSchema): Item {
  if (index.projected === 'ALL') return item;
  const keys = keysOf(item, schema, index);
  return { ...keys, ...Object.fromEntries(index.projected.filter((name) => item[name] !== undefined).map((name) => [name, item[name]])) };
}

/** The order of an index's entries: by its sort key (descending when the query reads backwards), then by table key. */
function indexOrder(schema: TableSchema, index: IndexSchema, forward: boolean): (a: Item, b: Item) => number {
  return (a, b) => {
    const bySort = index.range ? compareValues(a[index.range], b[index.range]) : 0;
    return (forward ? bySort : -bySort) || keyId(schema, a).localeCompare(keyId(schema, b));
  };
}

function compareValues(a: WireValue | undefined, b: WireValue | undefined): number {
  if (a?.N !== undefined && b?.N !== undefined) return Number(a.N) - Number(b.N);
  if (a?.S !== undefined && b?.S !== undefined) return Buffer.compare(Buffer.from(a.S, 'utf8'), Buffer.from(b.S, 'utf8'));
  if (a?.B !== undefined && b?.B !== undefined) return Buffer.compare(Buffer.from(a.B, 'base64'), Buffer.from(b.B, 'base64'));
  return 0;
}

/**
 * A Query's `KeyConditionExpression` as a test of an item: the partition key's `=`, and on the
 * sort key `=`, `<`, `<=`, `>`, `>=`, `BETWEEN … AND …` or `begins_with(…)`, in either order.
 */
function keyCondition(input: Json): (item: Item) => boolean {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, WireValue>;
  const name = (token: string) => names[token] ?? token;
  const tests: ((item: Item) => boolean)[] = [];
  const rest = String(input.KeyConditionExpression ?? '')
    .replace(/(\S+)\s+BETWEEN\s+(:\w+)\s+AND\s+(:\w+)/gi, (_, attr: string, low: string, high: string) => {
      tests.push((item) => compareValues(item[name(attr)], values[low]) >= 0 && compareValues(item[name(attr)], values[high]) <= 0);
      return 'TRUE';
    })
    .replace(/begins_with\s*\(\s*([^,\s]+)\s*,\s*(:\w+)\s*\)/gi, (_, attr: string, prefix: string) => {
      tests.push((item) => {
        const value = item[name(attr)];
        const start = values[prefix];
        if (value?.S !== undefined && start?.S !== undefined) return value.S.startsWith(start.S);
        if (value?.B === undefined || start?.B === undefined) return false;
        const bytes = Buffer.from(start.B, 'base64');
        return Buffer.from(value.B, 'base64').subarray(0, bytes.length).equals(bytes);
      });
      return 'TRUE';
    });
  for (const clause of rest.split(/\s+AND\s+/i)) {
    if (clause.trim() === 'TRUE') continue;
    const match = /^\s*\(?\s*(\S+?)\s*(<=|>=|=|<|>)\s*(:\w+)\s*\)?\s*$/.exec(clause);
    if (!match) throw new Error(`the index lag cannot read the key condition ${JSON.stringify(input.KeyConditionExpression)}`);
    const [, attr, operator, token] = match;
    tests.push((item) => {
      const order = compareValues(item[name(attr)], values[token]);
      const comparable = item[name(attr)] !== undefined;
      switch (operator) {
        case '=':
          return comparable && JSON.stringify(item[name(attr)]) === JSON.stringify(values[token]);
        case '<':
          return comparable && order < 0;
        case '<=':
          return comparable && order <= 0;
        case '>':
          return comparable && order > 0;
        default:
          return comparable && order >= 0;
      }
    });
  }
  return (item) => tests.every((test) => test(item));
}
