/**
 * What an AWS API request asks IAM for: its service (from the SigV4 credential scope), the
 * action(s), the resource ARN(s) and the request's condition keys, read from the wire as the
 * SDK sends it. Covered: DynamoDB (JSON 1.0), SQS (JSON 1.0 and query), S3 (REST, path-style),
 * Secrets Manager (and the KMS key of a secret encrypted with a customer-managed one) and
 * EventBridge (JSON 1.1), Lambda Invoke (REST). A request this module does
 * not understand maps to no access at all, which the gateway refuses (fail closed); so does a
 * request whose condition key a policy reads but this module cannot tell (an item read without a
 * projection, under a policy on `dynamodb:Attributes`).
 */
import type { IncomingHttpHeaders } from 'node:http';

/** One request as it came over the wire. */
export interface WireRequest {
  readonly method: string;
  /** Path and query, as in the request line. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** One authorization the request needs. */
export interface AccessRequest {
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string | string[]>>;
}

export type ServiceName = 'dynamodb' | 'sqs' | 's3' | 'secretsmanager' | 'events' | 'lambda';

/** How the response of a service is shaped (its errors must look like the service's own). */
export type Protocol = 'json' | 'sqs-json' | 'sqs-query' | 's3' | 'rest-json';

export interface MappedRequest {
  readonly service: ServiceName;
  readonly protocol: Protocol;
  /** The API operation, for messages and counts. */
  readonly operation: string;
  /** Every authorization needed; empty when the request is not understood. */
  readonly accesses: readonly AccessRequest[];
}

/** What a mapping needs from the local world: the account and region ARNs name, and the key schemas of tables. */
export interface LocalScope {
  readonly account: string;
  readonly region: string;
  /** The ARN of a secret named by its name or ARN; undefined when it does not exist. */
  secretArn(secretId: string): string | undefined;
  /** The KMS key (ARN or id) a secret is encrypted with; undefined for the AWS managed key. */
  secretKmsKey(secretArn: string): string | undefined;
  /** The partition key attribute of a table, or of one of its indexes. */
  partitionKeyOf(table: string, index?: string): Promise<string | undefined>;
  /** Whether any policy in force reads `dynamodb:LeadingKeys` (reading it costs a key-schema lookup). */
  readonly needsLeadingKeys: boolean;
  /** Whether any policy in force reads `dynamodb:Attributes` (a request whose attributes cannot be told is then refused). */
  readonly needsAttributes: boolean;
}

/** The access key id and the service of a SigV4-signed request (header or presigned query). */
export function credentialOf(request: Pick<WireRequest, 'headers' | 'url'>): { accessKeyId: string; service: string } | undefined {
  const header = String(request.headers.authorization ?? '');
  const scope = /Credential=([^,\s]+)/.exec(header)?.[1] ?? new URL(request.url, 'http://local').searchParams.get('X-Amz-Credential') ?? undefined;
  if (!scope) return undefined;
  const [accessKeyId, , , service] = scope.split('/');
  return accessKeyId && service ? { accessKeyId, service } : undefined;
}

export async function mapRequest(service: string, request: WireRequest, scope: LocalScope): Promise<MappedRequest | undefined> {
  switch (service) {
    case 'dynamodb':
      return mapDynamoDb(request, scope);
    case 'sqs':
      return mapSqs(request, scope);
    case 's3':
      return mapS3(request);
    case 'secretsmanager':
      return mapJson11(request, 'secretsmanager', (operation, input) => secretAccesses(operation, input, scope));
    case 'events':
      return mapJson11(request, 'events', (operation, input) => eventAccesses(operation, input, scope));
    case 'lambda':
      return mapLambda(request, scope);
    default:
      return undefined;
  }
}

// --- DynamoDB -------------------------------------------------------------------------------

type Attribute = Record<string, unknown>;

async function mapDynamoDb(request: WireRequest, scope: LocalScope): Promise<MappedRequest> {
  const operation = targetOperation(request, 'DynamoDB_20120810.');
  const input = jsonBody(request);
  const tableArn = (table: string, index?: string) => `arn:aws:dynamodb:${scope.region}:${scope.account}:table/${table}${index ? `/index/${index}` : ''}`;
  const action = `dynamodb:${operation}`;
  const accesses: AccessRequest[] = [];
  const leading = async (table: string, keys: Attribute[], index?: string): Promise<Record<string, string[]>> => {
    if (!scope.needsLeadingKeys || keys.length === 0) return {};
    const partitionKey = await scope.partitionKeyOf(table, index);
    const values =
      partitionKey === undefined
        ? []
        : keys.map((key) => attributeText(key[partitionKey] as Attribute | undefined)).filter((v): v is string => v !== undefined);
    return { 'dynamodb:LeadingKeys': [...new Set(values)] };
  };
  // The request's own parameters and the attributes it accesses; undefined when a policy reads attributes this request cannot tell.
  const requestKeys = (parameters: Record<string, unknown>, names: ReadonlySet<string> | undefined): Record<string, string | string[]> | undefined => {
    if (names === undefined && scope.needsAttributes) return undefined;
    return {
      ...(names !== undefined ? { 'dynamodb:Attributes': [...names] } : {}),
      ...(typeof parameters.ReturnValues === 'string' ? { 'dynamodb:ReturnValues': parameters.ReturnValues } : {}),
      ...(typeof parameters.Select === 'string' ? { 'dynamodb:Select': parameters.Select } : {}),
      ...(typeof parameters.ReturnConsumedCapacity === 'string' ? { 'dynamodb:ReturnConsumedCapacity': parameters.ReturnConsumedCapacity } : {}),
    };
  };
  const access = async (
    resource: string,
    keys: Record<string, string | string[]> | undefined,
    leadingKeys: Promise<Record<string, string[]>> | Record<string, string[]>,
  ) => {
    // A condition key the gateway cannot tell for a policy that reads it: no access, so the gateway refuses (fail closed).
    if (keys === undefined) return;
    accesses.push({ action, resource, context: { ...(await leadingKeys), ...keys } });
  };
  const table = typeof input.TableName === 'string' ? input.TableName : undefined;
  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
    case 'PutItem':
      if (table) {
        const key = (operation === 'PutItem' ? input.Item : input.Key) as Attribute | undefined;
        await access(tableArn(table), requestKeys(input, accessedAttributes(operation, input)), leading(table, key ? [key] : []));
      }
      break;
    case 'Query': {
      if (!table) break;
      const index = typeof input.IndexName === 'string' ? input.IndexName : undefined;
      const partitionKey = scope.needsLeadingKeys ? await scope.partitionKeyOf(table, index) : undefined;
      const value = partitionKey === undefined ? undefined : queriedPartition(input, partitionKey);
      await access(
        tableArn(table, index),
        requestKeys(input, accessedAttributes(operation, input)),
        value === undefined ? {} : { 'dynamodb:LeadingKeys': [value] },
      );
      break;
    }
    case 'Scan':
      if (table) {
        const index = typeof input.IndexName === 'string' ? input.IndexName : undefined;
        await access(tableArn(table, index), requestKeys(input, accessedAttributes(operation, input)), {});
      }
      break;
    case 'BatchGetItem':
    case 'BatchWriteItem':
      for (const [name, entries] of Object.entries((input.RequestItems ?? {}) as Record<string, unknown>)) {
        const reads = entries as { Keys?: Attribute[] };
        const writes = entries as { PutRequest?: { Item: Attribute }; DeleteRequest?: { Key: Attribute } }[];
        const keys =
          operation === 'BatchGetItem' ? ((reads.Keys ?? []) as Attribute[]) : writes.map((entry) => entry.PutRequest?.Item ?? entry.DeleteRequest?.Key ?? {});
        const names = operation === 'BatchGetItem' ? accessedAttributes(operation, entries as Record<string, unknown>) : new Set(keys.flatMap(Object.keys));
        await access(tableArn(name), requestKeys(input, names), leading(name, keys));
      }
      break;
    case 'ListTables':
      accesses.push({ action, resource: '*', context: {} });
      break;
    default:
      // Table-level operations (CreateTable, DescribeTable, UpdateTimeToLive, ...).
      if (table) accesses.push({ action, resource: tableArn(table), context: {} });
  }
  return { service: 'dynamodb', protocol: 'json', operation, accesses };
}

/**
 * The top-level attribute names a request accesses, as `dynamodb:Attributes` holds them:
 * the written item's names (PutItem) or the key's, and every name its expressions and legacy
 * parameters use (a nested path counts as its top-level attribute). Undefined for a read that
 * names no attributes (no projection): it reads every attribute, which no list can be checked
 * against here.
 */
function accessedAttributes(operation: string, input: Record<string, unknown>): Set<string> | undefined {
  const names = new Set<string>();
  const aliases = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const expressionNames = (field: string) => {
    if (typeof input[field] === 'string') for (const name of topLevelNames(input[field], aliases)) names.add(name);
  };
  const keysOf = (field: string) => {
    const value = input[field];
    if (value && typeof value === 'object' && !Array.isArray(value)) for (const name of Object.keys(value)) names.add(name);
  };
  const listed = (field: string) => {
    if (Array.isArray(input[field])) for (const name of input[field] as unknown[]) if (typeof name === 'string') names.add(name);
  };
  for (const field of ['ConditionExpression', 'UpdateExpression', 'KeyConditionExpression', 'FilterExpression', 'ProjectionExpression']) expressionNames(field);
  for (const field of ['Item', 'Key', 'Expected', 'AttributeUpdates', 'KeyConditions', 'QueryFilter', 'ScanFilter']) keysOf(field);
  listed('AttributesToGet');
  // A batch read's keys (BatchGetItem's entry for one table).
  if (Array.isArray(input.Keys)) for (const key of input.Keys as Attribute[]) for (const name of Object.keys(key)) names.add(name);
  const reads = ['GetItem', 'BatchGetItem', 'Query', 'Scan'].includes(operation);
  const projected = typeof input.ProjectionExpression === 'string' || Array.isArray(input.AttributesToGet) || input.Select === 'COUNT';
  return reads && !projected ? undefined : names;
}

/** Words of the expression grammar that are no attribute names (DynamoDB reserves them, so no bare name can be one). */
const EXPRESSION_WORDS = new Set(['and', 'or', 'not', 'between', 'in', 'set', 'remove', 'add', 'delete']);

/**
 * The top-level attribute names an expression uses: each path's first element, bare or through
 * an `#alias`; what follows a `.` is nested, a name followed by `(` is a function, `:values` are values.
 */
function topLevelNames(expression: string, aliases: Readonly<Record<string, string>>): string[] {
  const tokens = expression.match(/#\w+|:\w+|[A-Za-z_]\w*|\[\d+\]|\S/g) ?? [];
  const names: string[] = [];
  tokens.forEach((token, index) => {
    if (tokens[index - 1] === '.') return;
    if (token.startsWith('#')) {
      if (aliases[token] !== undefined) names.push(aliases[token]);
    } else if (/^[A-Za-z_]/.test(token) && tokens[index + 1] !== '(' && !EXPRESSION_WORDS.has(token.toLowerCase())) {
      names.push(token);
    }
  });
  return names;
}

/** The text IAM sees of a key attribute value. */
function attributeText(value: Attribute | undefined): string | undefined {
  if (!value) return undefined;
  if (typeof value.S === 'string') return value.S;
  if (typeof value.N === 'string') return value.N;
  if (typeof value.B === 'string') return value.B;
  return undefined;
}

/** The partition key value a Query's key condition names (`#pk = :v`, or the legacy KeyConditions). */
function queriedPartition(input: Record<string, unknown>, partitionKey: string): string | undefined {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, Attribute>;
  const expression = typeof input.KeyConditionExpression === 'string' ? input.KeyConditionExpression : '';
  for (const match of expression.matchAll(/([#\w.]+)\s*=\s*(:\w+)/g)) {
    const name = match[1].startsWith('#') ? names[match[1]] : match[1];
    if (name === partitionKey) return attributeText(values[match[2]]);
  }
  const legacy = (input.KeyConditions as Record<string, { AttributeValueList?: Attribute[] }> | undefined)?.[partitionKey];
  return attributeText(legacy?.AttributeValueList?.[0]);
}

// --- SQS ------------------------------------------------------------------------------------

/** Batch operations are authorized as their single-message action. */
const SQS_BATCH_ACTIONS: Readonly<Record<string, string>> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

function mapSqs(request: WireRequest, scope: LocalScope): MappedRequest {
  const query = String(request.headers['content-type'] ?? '').includes('x-www-form-urlencoded');
  let operation: string;
  let input: Record<string, unknown>;
  if (query) {
    const form = new URLSearchParams(request.body.toString('utf8'));
    operation = form.get('Action') ?? '';
    input = Object.fromEntries(form);
  } else {
    operation = targetOperation(request, 'AmazonSQS.');
    input = jsonBody(request);
  }
  const queueArn = (name: string) => `arn:aws:sqs:${scope.region}:${scope.account}:${name}`;
  const named =
    typeof input.QueueUrl === 'string'
      ? // The last path segment; local queue URLs (`sqs.us-east-1.127.0.0.1:port`) are not always valid URLs.
        decodeURIComponent(input.QueueUrl.split('?')[0].split('/').filter(Boolean).pop() ?? '')
      : typeof input.QueueName === 'string'
        ? input.QueueName
        : typeof input.SourceArn === 'string'
          ? input.SourceArn.split(':').pop()
          : undefined;
  const resource = operation === 'ListQueues' ? '*' : named ? queueArn(named) : undefined;
  const action = `sqs:${SQS_BATCH_ACTIONS[operation] ?? operation}`;
  return {
    service: 'sqs',
    protocol: query ? 'sqs-query' : 'sqs-json',
    operation,
    accesses: operation && resource ? [{ action, resource, context: {} }] : [],
  };
}

// --- S3 -------------------------------------------------------------------------------------

function mapS3(request: WireRequest): MappedRequest {
  const url = new URL(request.url, 'http://local');
  const [bucket, ...rest] = url.pathname.split('/').slice(1);
  const key = rest.map(decodeURIComponent).join('/');
  const method = request.method.toUpperCase();
  const objectArn = `arn:aws:s3:::${bucket}/${key}`;
  const bucketArn = `arn:aws:s3:::${bucket}`;
  const access = (action: string, resource: string): MappedRequest => ({
    service: 's3',
    protocol: 's3',
    operation: action.slice(3),
    accesses: [{ action, resource, context: {} }],
  });
  if (!bucket) return access('s3:ListAllMyBuckets', '*');
  if (key) {
    if (method === 'GET' || method === 'HEAD') return access('s3:GetObject', objectArn);
    if (method === 'PUT' || method === 'POST') return access('s3:PutObject', objectArn);
    if (method === 'DELETE') return access('s3:DeleteObject', objectArn);
  } else {
    if (method === 'PUT') return access('s3:CreateBucket', bucketArn);
    if (method === 'DELETE') return access('s3:DeleteBucket', bucketArn);
    if (method === 'GET' || method === 'HEAD') return access('s3:ListBucket', bucketArn);
  }
  return { service: 's3', protocol: 's3', operation: method, accesses: [] };
}

// --- Secrets Manager, EventBridge (JSON 1.1) -------------------------------------------------

function mapJson11(request: WireRequest, prefix: string, accessesOf: (operation: string, input: Record<string, unknown>) => AccessRequest[]): MappedRequest {
  const target = String(request.headers['x-amz-target'] ?? '');
  const operation = target.slice(target.indexOf('.') + 1);
  return { service: prefix as ServiceName, protocol: 'json', operation, accesses: operation ? accessesOf(operation, jsonBody(request)) : [] };
}

function secretAccesses(operation: string, input: Record<string, unknown>, scope: LocalScope): AccessRequest[] {
  const action = `secretsmanager:${operation}`;
  if (operation === 'ListSecrets' || operation === 'GetRandomPassword') return [{ action, resource: '*', context: {} }];
  const id = typeof input.SecretId === 'string' ? input.SecretId : typeof input.Name === 'string' ? input.Name : undefined;
  if (id === undefined) return [];
  // A secret that does not exist is named as AWS names it in the denial: by the id given.
  const resource = scope.secretArn(id) ?? (id.startsWith('arn:') ? id : `arn:aws:secretsmanager:${scope.region}:${scope.account}:secret:${id}`);
  const accesses = [{ action, resource, context: {} }];
  const keyAction = SECRET_KEY_ACTIONS[operation];
  const key = keyAction && scope.secretKmsKey(resource);
  if (!key) return accesses;
  // Secrets Manager calls KMS with the caller's credentials, through itself, in the secret's encryption context.
  const keyArn = kmsKeyArn(key, scope);
  // An alias cannot be resolved here (there is no KMS): no access, so the gateway refuses (fail closed).
  if (!keyArn) return [];
  const context = {
    'kms:ViaService': `secretsmanager.${scope.region}.amazonaws.com`,
    'kms:CallerAccount': scope.account,
    'kms:EncryptionContext:SecretARN': resource,
  };
  return [...accesses, { action: keyAction, resource: keyArn, context }];
}

/** What Secrets Manager asks of a secret's customer-managed key on the caller's behalf, by operation. */
const SECRET_KEY_ACTIONS: Readonly<Record<string, string>> = {
  GetSecretValue: 'kms:Decrypt',
  PutSecretValue: 'kms:GenerateDataKey',
};

/** A key's ARN from a key ARN or a key id; undefined for an alias. */
function kmsKeyArn(key: string, scope: LocalScope): string | undefined {
  if (/^arn:aws[\w-]*:kms:[^:]+:\d{12}:key\//.test(key)) return key;
  if (/^[0-9a-f-]{36}$|^mrk-[0-9a-f]{32}$/.test(key)) return `arn:aws:kms:${scope.region}:${scope.account}:key/${key}`;
  return undefined;
}

function eventAccesses(operation: string, input: Record<string, unknown>, scope: LocalScope): AccessRequest[] {
  const busArn = (nameOrArn: unknown) => {
    const name = typeof nameOrArn === 'string' && nameOrArn !== '' ? nameOrArn : 'default';
    return name.startsWith('arn:') ? name : `arn:aws:events:${scope.region}:${scope.account}:event-bus/${name}`;
  };
  const action = `events:${operation}`;
  if (operation === 'PutEvents') {
    return ((input.Entries ?? []) as { EventBusName?: string; Source?: string; DetailType?: string }[]).map((entry) => ({
      action,
      resource: busArn(entry.EventBusName),
      context: { ...(entry.Source ? { 'events:source': entry.Source } : {}), ...(entry.DetailType ? { 'events:detail-type': entry.DetailType } : {}) },
    }));
  }
  if (operation === 'CreateEventBus' || operation === 'DescribeEventBus' || operation === 'DeleteEventBus') {
    return [{ action, resource: busArn(input.Name), context: {} }];
  }
  if (typeof input.Name === 'string' || typeof input.Rule === 'string') {
    const bus = typeof input.EventBusName === 'string' && input.EventBusName !== 'default' ? `${input.EventBusName}/` : '';
    return [{ action, resource: `arn:aws:events:${scope.region}:${scope.account}:rule/${bus}${String(input.Name ?? input.Rule)}`, context: {} }];
  }
  return [];
}

// --- Lambda ---------------------------------------------------------------------------------

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

function mapLambda(request: WireRequest, scope: LocalScope): MappedRequest {
  const url = new URL(request.url, 'http://local');
  const name = INVOKE_PATH.exec(url.pathname)?.[1];
  if (request.method.toUpperCase() !== 'POST' || name === undefined) return { service: 'lambda', protocol: 'rest-json', operation: 'unknown', accesses: [] };
  const decoded = decodeURIComponent(name);
  const qualifier = url.searchParams.get('Qualifier');
  const base = decoded.startsWith('arn:') ? decoded : `arn:aws:lambda:${scope.region}:${scope.account}:function:${decoded}`;
  return {
    service: 'lambda',
    protocol: 'rest-json',
    operation: 'Invoke',
    accesses: [{ action: 'lambda:InvokeFunction', resource: qualifier ? `${base}:${qualifier}` : base, context: {} }],
  };
}

// --- shared ---------------------------------------------------------------------------------

function targetOperation(request: WireRequest, prefix: string): string {
  const target = String(request.headers['x-amz-target'] ?? '');
  return target.startsWith(prefix) ? target.slice(prefix.length) : '';
}

function jsonBody(request: WireRequest): Record<string, unknown> {
  try {
    const parsed = JSON.parse(request.body.toString('utf8') || '{}') as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
