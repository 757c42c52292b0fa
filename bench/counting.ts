/**
 * Counting AWS requests with AWS SDK v3 middleware: every client the bench builds gets a counter
 * on its middleware stack, so what is counted is exactly what the handlers send, operation by
 * operation, attempt by attempt (a retried request is two billed requests).
 *
 * Each client belongs to one stage of the pipeline (edge, event source, processor, reconciler,
 * secrets): the stage is fixed when the client is built, never switched while it runs.
 */
import { DeliveryStatus, FlowControlKey, InboxItemKind, SweepWatermark } from '../lib/contract';

/** The slice of an AWS SDK v3 client this module touches (any client's stack accepts these middlewares). */
export interface SdkClient {
  readonly middlewareStack: object;
}

interface MiddlewareOptions {
  readonly step: 'initialize' | 'deserialize';
  readonly name: string;
  readonly override?: boolean;
  readonly priority?: 'high' | 'normal' | 'low';
}

/** Adds `middleware` to a client's stack (each client's stack is typed by its own commands). */
export function addMiddleware(client: SdkClient, middleware: unknown, options: MiddlewareOptions): void {
  (client.middlewareStack as { add(middleware: unknown, options: MiddlewareOptions): void }).add(middleware, options);
}

interface HandlerContext {
  readonly clientName?: string;
  readonly commandName?: string;
}

type Next = (args: { input: Record<string, unknown> }) => Promise<{ output: Record<string, unknown> }>;

/** A request as counted: where it was sent from, what it was, and on which table or queue. */
export interface CountedOperation {
  readonly stage: string;
  readonly service: string;
  readonly operation: string;
  /** What the request does in the pipeline (e.g. `claim`, `result offer`), when the bench can tell. */
  readonly purpose: string;
}

/** Counts of one operation: how often it was called, and how many HTTP attempts that took. */
export interface OperationCount extends CountedOperation {
  calls: number;
  attempts: number;
  /** A batch write's or batch read's items, added up over its calls (DynamoDB bills each item as its own write or read). */
  items?: number;
}

const SERVICE_OF: Readonly<Record<string, string>> = {
  DynamoDBClient: 'DynamoDB',
  SQSClient: 'SQS',
  EventBridgeClient: 'EventBridge',
  SecretsManagerClient: 'Secrets Manager',
  S3Client: 'S3',
  LambdaClient: 'Lambda',
};

/**
 * What a request does, read from its input the way a reader of the code would name it: the
 * inbox's conditional writes by the values they set, the results table by name, Powertools'
 * idempotency records by their status.
 */
export function purposeOf(operation: string, input: Record<string, unknown>): string {
  const table = String(input.TableName ?? '');
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, { S?: string } | undefined>;
  const item = (input.Item ?? {}) as Record<string, { S?: string } | undefined>;
  if (table.endsWith('-idempotency')) {
    if (operation === 'PutItem') return 'idempotency record: INPROGRESS';
    if (operation === 'UpdateItem') return 'idempotency record: COMPLETED';
    return `idempotency record: ${operation}`;
  }
  if (operation === 'PutItem' && table.endsWith('-deliveries')) return 'store the delivery';
  if (operation === 'PutItem' && item.status?.S === DeliveryStatus.RECEIVED) return 'conditional insert';
  const sortKey = ((input.Key ?? input.Item) as Record<string, { S?: string }> | undefined)?.sk?.S;
  if (sortKey?.startsWith(InboxItemKind.BODY_PREFIX)) return operation === 'PutItem' ? 'body item' : 'body item read';
  if (operation === 'UpdateItem' && table.endsWith('-results')) return 'result offer';
  if (operation === 'UpdateItem' && values[':processing']?.S === DeliveryStatus.PROCESSING) return 'claim';
  if (operation === 'UpdateItem' && values[':processed']?.S === DeliveryStatus.PROCESSED && values[':owner']) return 'complete';
  if (operation === 'UpdateItem' && input.UpdateExpression === 'SET #since = :now') return 'touch pending';
  if (operation === 'BatchWriteItem') return 'complete batch';
  if (operation === 'BatchGetItem') return 'sweep status read';
  if ((input.Key as Record<string, { S?: string }> | undefined)?.pk?.S === SweepWatermark.PARTITION)
    return `sweep watermark ${operation === 'GetItem' ? 'read' : 'advance'}`;
  if ((input.Key as Record<string, { S?: string }> | undefined)?.pk?.S === FlowControlKey.PARTITION)
    return `flow-control ${operation === 'GetItem' ? 'read' : 'write'}`;
  if (operation === 'Query') return `query ${String(input.IndexName ?? 'table')} index shard`;
  if (operation === 'SendMessage' || operation === 'SendMessageBatch') return 'enqueue';
  if (operation === 'ReceiveMessage') return 'receive batch';
  if (operation === 'DeleteMessageBatch') return 'delete batch';
  if (operation === 'PutEvents') return 'effects';
  if (operation === 'DescribeSecret' || operation === 'GetSecretValue') return 'signing secret read';
  return operation;
}

/**
 * Counts requests by stage, service, operation and purpose. `capture` keeps a copy of the first
 * input of each (stage, purpose), so a bare replay can send exactly the same requests.
 */
export class RequestCounter {
  private readonly counts = new Map<string, OperationCount>();
  private readonly captured = new Map<string, Record<string, unknown>>();
  private readonly byContext = new WeakMap<object, OperationCount>();

  /** Puts the counting middleware on `client`; every request it sends is counted under `stage`. */
  attach<C extends SdkClient>(client: C, stage: string): C {
    addMiddleware(
      client,
      (next: Next, context: HandlerContext) => async (args: { input: Record<string, unknown> }) => {
        const entry = this.entry(stage, context, args.input);
        entry.calls += 1;
        const batch = args.input.RequestItems as Record<string, unknown[]> | undefined;
        if (context.commandName === 'BatchWriteItemCommand' && batch) entry.items = (entry.items ?? 0) + Object.values(batch).flat().length;
        if (context.commandName === 'BatchGetItemCommand' && batch) {
          entry.items =
            (entry.items ?? 0) + Object.values(batch as unknown as Record<string, { Keys: unknown[] }>).reduce((sum, request) => sum + request.Keys.length, 0);
        }
        const key = `${stage}|${entry.purpose}`;
        if (!this.captured.has(key)) this.captured.set(key, structuredClone(args.input));
        // The attempts are counted below the retry middleware, which sees the same context.
        this.byContext.set(context, entry);
        return next(args);
      },
      { step: 'initialize', name: 'benchCountCalls', override: true },
    );
    addMiddleware(
      client,
      (next: Next, context: HandlerContext) => async (args: { input: Record<string, unknown> }) => {
        const entry = this.byContext.get(context);
        if (entry) entry.attempts += 1;
        return next(args);
      },
      { step: 'deserialize', name: 'benchCountAttempts', override: true },
    );
    return client;
  }

  private entry(stage: string, context: HandlerContext, input: Record<string, unknown>): OperationCount {
    const service = SERVICE_OF[context.clientName ?? ''] ?? context.clientName ?? 'unknown';
    const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
    const purpose = purposeOf(operation, input);
    const key = `${stage}|${service}|${operation}|${purpose}`;
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { stage, service, operation, purpose, calls: 0, attempts: 0 };
      this.counts.set(key, entry);
    }
    return entry;
  }

  /** Every operation counted so far, in the order first seen. */
  all(): OperationCount[] {
    return [...this.counts.values()].map((entry) => ({ ...entry }));
  }

  /** The counts of one stage. */
  stage(stage: string): OperationCount[] {
    return this.all().filter((entry) => entry.stage === stage);
  }

  /** A copy of the first input sent for (stage, purpose), if any. */
  capturedInput(stage: string, purpose: string): Record<string, unknown> | undefined {
    const input = this.captured.get(`${stage}|${purpose}`);
    return input && structuredClone(input);
  }
}

/** A per-delivery view of counted operations: attempts divided by accepted deliveries. */
export interface PerDelivery extends CountedOperation {
  readonly calls: number;
  readonly attempts: number;
  /** Attempts per accepted delivery. */
  readonly perDelivery: number;
}

export function perDelivery(counts: readonly OperationCount[], deliveries: number): PerDelivery[] {
  return counts.map((entry) => ({ ...entry, perDelivery: entry.attempts / deliveries }));
}
