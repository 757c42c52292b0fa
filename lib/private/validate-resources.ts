import { Annotations, Duration, Stack, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { IndexSchema, KeyAttributeSchema, TableSchema, TableShape } from '../contract';
import type { WebhookProviderConfig } from '../provider';
import type { WebhookInboxProps } from '../webhook-inbox-props';
import type { InboxSettings } from './settings';

/** Where a brought resource's requirements are written down, for the user who reads the error. */
const DOC = 'docs/BRING-YOUR-OWN.md';

/** SQS's visibility timeout of a queue created without one, in seconds. */
const SQS_DEFAULT_VISIBILITY_SECONDS = 30;

/**
 * Checks the resources the user brings, at synth (once the app has added its indexes to a table
 * and its settings to a queue): a table or queue defined in the app is compared with what the
 * runtime needs; an imported one, which CDK cannot see into, needs its acknowledgement prop.
 * A value that is an unresolved token is not checked.
 */
export function broughtResourceProblems(props: WebhookInboxProps, settings: InboxSettings): string[] {
  return [
    ...tableProblems(
      { prop: 'inboxTable', anchor: `${DOC}#the-inbox-table`, acknowledgement: 'acknowledgeImportedInboxTable' },
      props.inboxTable,
      TableSchema.inbox,
      props.acknowledgeImportedInboxTable,
    ),
    ...tableProblems(
      { prop: 'resultsTable', anchor: `${DOC}#the-results-table`, acknowledgement: 'acknowledgeImportedResultsTable' },
      props.resultsTable,
      TableSchema.results,
      props.acknowledgeImportedResultsTable,
    ),
    ...workQueueProblems(props, settings),
  ];
}

/** How a brought table is named in its errors. */
interface TableNames {
  readonly prop: string;
  readonly anchor: string;
  readonly acknowledgement: string;
}

/** A key as a resource declares it: its name and type, `UNKNOWN` when a token, undefined when there is none. */
type SeenKey = KeyAttributeSchema | typeof UNKNOWN | undefined;
const UNKNOWN = 'unknown';

function tableProblems(names: TableNames, table: dynamodb.ITable | undefined, shape: TableShape, acknowledged: boolean | undefined): string[] {
  if (!table) return [];
  const definition = table.node.defaultChild;
  if (!(definition instanceof dynamodb.CfnTable || definition instanceof dynamodb.CfnGlobalTable)) {
    return acknowledged
      ? []
      : [
          `${names.prop}: an imported table (CDK cannot see its keys and indexes) is refused unless you check it has ${summaryOf(shape)} ` +
            `as ${names.anchor} describes, then set ${names.acknowledgement}: true`,
        ];
  }
  const stack = Stack.of(definition);
  const types = attributeTypes(stack.resolve(definition.attributeDefinitions));
  const problems: string[] = [];
  const keys = keysOf(stack.resolve(definition.keySchema), types);
  if (keys) {
    problems.push(...keyProblems('partition key', shape.partitionKey, keys.partitionKey));
    problems.push(...keyProblems('sort key', shape.sortKey, keys.sortKey));
  }
  if (shape.ttlAttribute) problems.push(...ttlProblems(shape.ttlAttribute, stack.resolve(definition.timeToLiveSpecification)));
  const indexes: unknown = stack.resolve(definition.globalSecondaryIndexes);
  if (indexes === undefined || Array.isArray(indexes)) {
    for (const index of shape.indexes) problems.push(...indexProblems(index, indexes ?? [], types));
  }
  return problems.map((problem) => `${names.prop}: ${problem} (${names.anchor})`);
}

function keyProblems(what: string, expected: KeyAttributeSchema | undefined, seen: SeenKey): string[] {
  if (seen === UNKNOWN || sameKey(expected, seen)) return [];
  return [`${what} must be ${expected ? describeKey(expected) : 'absent'}, got ${seen ? describeKey(seen) : 'none'}`];
}

/** TTL on the attribute the runtime writes each row's expiry to: without it rows stay for ever, and outlive their bodies in the bucket. */
function ttlProblems(attribute: string, specification: unknown): string[] {
  const { attributeName, enabled } = (specification ?? {}) as { attributeName?: unknown; enabled?: unknown };
  if (enabled !== undefined && typeof enabled !== 'boolean') return [];
  if (enabled === true && (typeof attributeName !== 'string' || attributeName === attribute)) return [];
  return [`TTL must be enabled on "${attribute}" (epoch seconds), got ${enabled === true ? `"${attributeName as string}"` : 'none'}`];
}

function indexProblems(expected: IndexSchema, indexes: unknown[], types: Map<string, string>): string[] {
  const wanted = `partition key ${describeKey(expected.partitionKey)}, ${expected.sortKey ? `sort key ${describeKey(expected.sortKey)}` : 'no sort key'}, any projection`;
  const found = indexes.find((index) => (index as { indexName?: unknown }).indexName === expected.name) as { keySchema?: unknown } | undefined;
  if (!found) {
    // An index named by a token may be this one.
    if (indexes.some((index) => typeof (index as { indexName?: unknown }).indexName !== 'string')) return [];
    return [`global secondary index "${expected.name}" is missing (${wanted}): the runtime queries it`];
  }
  const keys = keysOf(found.keySchema, types);
  if (!keys || keys.partitionKey === UNKNOWN || keys.sortKey === UNKNOWN) return [];
  if (sameKey(expected.partitionKey, keys.partitionKey) && sameKey(expected.sortKey, keys.sortKey)) return [];
  const got = `partition key ${keys.partitionKey ? describeKey(keys.partitionKey) : 'none'}, ${keys.sortKey ? `sort key ${describeKey(keys.sortKey)}` : 'no sort key'}`;
  return [`global secondary index "${expected.name}" must have ${wanted}; it has ${got}`];
}

/** What to check on a table: `partition key "pk" (S), sort key "sk" (S), TTL on "expiresAt", the global secondary indexes "pending", …`. */
function summaryOf(shape: TableShape): string {
  return [
    `partition key ${describeKey(shape.partitionKey)}`,
    shape.sortKey ? `sort key ${describeKey(shape.sortKey)}` : 'no sort key',
    ...(shape.ttlAttribute ? [`TTL on "${shape.ttlAttribute}"`] : []),
    ...(shape.indexes.length > 0 ? [`the global secondary indexes ${shape.indexes.map((index) => `"${index.name}"`).join(', ')}`] : []),
  ].join(', ');
}

const describeKey = (key: KeyAttributeSchema) => `"${key.name}" (${key.type})`;

const sameKey = (expected: KeyAttributeSchema | undefined, seen: KeyAttributeSchema | undefined) =>
  expected === undefined ? seen === undefined : seen?.name === expected.name && seen.type === expected.type;

/** Attribute name → type (`S`, `N`, `B`) of a resolved `attributeDefinitions`. */
function attributeTypes(definitions: unknown): Map<string, string> {
  const types = new Map<string, string>();
  for (const definition of Array.isArray(definitions) ? definitions : []) {
    const { attributeName, attributeType } = definition as { attributeName?: unknown; attributeType?: unknown };
    if (typeof attributeName === 'string' && typeof attributeType === 'string') types.set(attributeName, attributeType);
  }
  return types;
}

/** The partition and sort key of a resolved key schema; undefined when the schema is a token. */
function keysOf(keySchema: unknown, types: Map<string, string>): { partitionKey: SeenKey; sortKey: SeenKey } | undefined {
  if (!Array.isArray(keySchema)) return undefined;
  const key = (keyType: string): SeenKey => {
    const element = keySchema.find((each) => (each as { keyType?: unknown }).keyType === keyType) as { attributeName?: unknown } | undefined;
    if (!element) return undefined;
    const type = typeof element.attributeName === 'string' ? types.get(element.attributeName) : undefined;
    return typeof element.attributeName === 'string' && type ? { name: element.attributeName, type: type as KeyAttributeSchema['type'] } : UNKNOWN;
  };
  return { partitionKey: key('HASH'), sortKey: key('RANGE') };
}

/**
 * The work queue: a standard queue (the verifier sends without a message group id) that redrives
 * to the dead-letter queue after `maxReceiveCount` receives, with a visibility timeout no shorter
 * than the processor's timeout (Lambda refuses such an event source mapping).
 */
function workQueueProblems(props: WebhookInboxProps, settings: InboxSettings): string[] {
  const queue = props.workQueue;
  if (!queue) return [];
  const anchor = `${DOC}#the-work-queue`;
  const problems: string[] = [];
  if (queue.fifo) problems.push(`workQueue: a FIFO queue is refused: the verifier sends without a message group id; bring a standard queue (${anchor})`);
  const processorSeconds = settings.processorTimeout.toSeconds();
  const processorTimeout = Token.isUnresolved(processorSeconds) ? 'its timeout' : Duration.seconds(processorSeconds).toHumanString();
  const definition = queue.node.defaultChild;
  if (!(definition instanceof sqs.CfnQueue)) {
    if (!props.deadLetterQueue) {
      problems.push(
        `deadLetterQueue: required with an imported workQueue (CDK cannot see its redrive policy): the queue it redrives to, which the alarms watch (${anchor})`,
      );
    }
    if (!props.acknowledgeImportedWorkQueue) {
      problems.push(
        `workQueue: an imported queue (CDK cannot see its redrive policy and visibility timeout) is refused unless you check it redrives to ` +
          `deadLetterQueue after maxReceiveCount (${settings.maxReceiveCount}) receives and its visibility timeout is at least the processor's ` +
          `timeout (${processorTimeout}) and set acknowledgeImportedWorkQueue: true (${anchor})`,
      );
    }
    return problems;
  }
  const stack = Stack.of(definition);
  const redrive = stack.resolve(definition.redrivePolicy) as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown } | undefined;
  if (!redrive) {
    problems.push(
      `workQueue: it has no dead-letter queue (redrive policy): a message that keeps failing would be received until the queue's retention ` +
        `drops it; give it deadLetterQueue: { queue, maxReceiveCount: ${settings.maxReceiveCount} } (${anchor})`,
    );
  } else {
    if (typeof redrive.maxReceiveCount === 'number' && redrive.maxReceiveCount !== settings.maxReceiveCount) {
      problems.push(
        `workQueue: its redrive policy's maxReceiveCount (${redrive.maxReceiveCount}) must be the inbox's maxReceiveCount ` +
          `(${settings.maxReceiveCount}): a row is DEAD after that many attempts, as its message moves to the dead-letter queue (${anchor})`,
      );
    }
    // Compared only when both queues are the app's: an imported reference to the same queue resolves differently.
    if (props.deadLetterQueue?.node.defaultChild instanceof sqs.CfnQueue) {
      if (JSON.stringify(stack.resolve(props.deadLetterQueue.queueArn)) !== JSON.stringify(redrive.deadLetterTargetArn)) {
        problems.push(
          `deadLetterQueue: it is not the queue workQueue's redrive policy sends to, so the alarms would watch a queue nothing reaches (${anchor})`,
        );
      }
    }
  }
  const visibility: unknown = stack.resolve(definition.visibilityTimeout ?? SQS_DEFAULT_VISIBILITY_SECONDS);
  if (typeof visibility === 'number' && !Token.isUnresolved(processorSeconds) && visibility < processorSeconds) {
    problems.push(
      `workQueue: its visibility timeout (${Duration.seconds(visibility).toHumanString()}) must be at least the processor's timeout ` +
        `(${processorTimeout}; 6 times that is advised): Lambda refuses an event source whose messages would reappear while a batch ` +
        `is still processed (${anchor})`,
    );
  }
  return problems;
}

/** The id of the warning on an imported secret that names no key (`Annotations.of(secret).acknowledgeWarning(id)` acknowledges it). */
const IMPORTED_SECRET_WITHOUT_KEY = 'cdk-webhook-inbox:importedSecretWithoutKey';

/**
 * Warns, on each secret the user brings by reference (`fromSecretCompleteArn`, `fromSecretNameV2`,
 * ...) without its encryption key, that a customer-managed key must be named: CDK cannot see how
 * an imported secret is encrypted, and without the key no function that reads it is granted
 * kms:Decrypt, so AWS refuses every read of a secret encrypted with one. A secret defined in the
 * app (`new Secret(...)`) says its key itself.
 */
export function warnOfImportedSecretsWithoutKey(
  providers: readonly WebhookProviderConfig[],
  signingSecrets: ReadonlyMap<string, secretsmanager.ISecret>,
): void {
  const read = providers.flatMap((provider) => [
    {
      secret: signingSecrets.get(provider.name),
      prop: `${provider.name}: signingSecret`,
      readers: provider.rotation ? 'the verifier and the rotator' : 'the verifier',
    },
    { secret: provider.authoritativeRead?.apiKeySecret, prop: `${provider.name}: authoritativeRead.apiKeySecret`, readers: 'the processor' },
    { secret: provider.polling?.apiKeySecret, prop: `${provider.name}: polling.apiKeySecret`, readers: 'the reconciler' },
  ]);
  for (const { secret, prop, readers } of read) {
    if (!secret || secretsmanager.Secret.isSecret(secret) || secret.encryptionKey) continue;
    Annotations.of(secret).addWarningV2(
      IMPORTED_SECRET_WITHOUT_KEY,
      `${prop} is an imported secret without its encryption key. If it is encrypted with a customer-managed KMS key, name the key ` +
        '(secretsmanager.Secret.fromSecretAttributes(scope, id, { secretCompleteArn, encryptionKey })): without it ' +
        `${readers} get no kms:Decrypt and AWS refuses every read. A secret encrypted with the AWS managed key (aws/secretsmanager) ` +
        'needs none: acknowledge this warning on the secret.',
    );
  }
}
