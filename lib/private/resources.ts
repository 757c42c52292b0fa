import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, IConstruct } from 'constructs';
import { BodyPrefix, Defaults, IndexSchema, KeyAttributeSchema, ResultAttr, SECRETLESS_ADAPTERS, TableSchema, TableShape } from '../contract';
import type { WebhookProviderConfig } from '../provider';
import type { TableSettings, WebhookInboxProps } from '../webhook-inbox-props';
import { pascalCase } from './names';
import type { InboxSettings } from './settings';
import { ValidationError } from './validation-error';

/**
 * The resources an inbox creates when the user brings none: its two tables, the work queue and
 * its dead-letter queue, a signing secret per provider, the body bucket and the event bus. Each
 * merges default → user → construct-required, with the construct ids of the public contract.
 */

/** The inbox table: keys `pk`/`sk`, TTL, and the sparse keys-only indexes of `TableSchema.inbox`. */
export function createInboxTable(scope: Construct, settings: TableSettings = {}): dynamodb.Table {
  return createTable(scope, 'InboxTable', TableSchema.inbox, settings);
}

/**
 * The results table: one item per logical job, partition key `pk`, with TTL on `expiresAt` (a
 * table the user brings need not have it: its expired items are read as absent all the same).
 */
export function createResultsTable(scope: Construct, settings: TableSettings = {}): dynamodb.Table {
  return createTable(scope, 'ResultsTable', { ...TableSchema.results, ttlAttribute: ResultAttr.EXPIRES_AT }, settings);
}

const ATTRIBUTE_TYPE: Record<KeyAttributeSchema['type'], dynamodb.AttributeType> = { S: dynamodb.AttributeType.STRING, N: dynamodb.AttributeType.NUMBER };
const PROJECTION_TYPE: Record<IndexSchema['projection'], dynamodb.ProjectionType> = { KEYS_ONLY: dynamodb.ProjectionType.KEYS_ONLY };
const attributeOf = (key: KeyAttributeSchema): dynamodb.Attribute => ({ name: key.name, type: ATTRIBUTE_TYPE[key.type] });

function createTable(scope: Construct, id: string, shape: TableShape, settings: TableSettings): dynamodb.Table {
  const table = new dynamodb.Table(scope, id, {
    ...tableDefaults(settings),
    partitionKey: attributeOf(shape.partitionKey),
    sortKey: shape.sortKey && attributeOf(shape.sortKey),
    timeToLiveAttribute: shape.ttlAttribute,
  });
  // Sparse indexes: only the items that carry their keys are in them.
  for (const index of shape.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: attributeOf(index.partitionKey),
      sortKey: index.sortKey && attributeOf(index.sortKey),
      projectionType: PROJECTION_TYPE[index.projection],
      // An index takes a write for each of its table's writes that carries its keys: warmed alike.
      warmThroughput: settings.warmThroughput,
    });
  }
  return table;
}

function tableDefaults(settings: TableSettings): Omit<dynamodb.TableProps, 'partitionKey'> {
  return {
    tableName: settings.tableName,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: settings.encryption ?? dynamodb.TableEncryption.AWS_MANAGED,
    encryptionKey: settings.encryptionKey,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: settings.pointInTimeRecovery ?? true },
    deletionProtection: settings.deletionProtection ?? false,
    removalPolicy: settings.removalPolicy ?? RemovalPolicy.RETAIN,
    warmThroughput: settings.warmThroughput,
  };
}

/** The queues between verifier and processor. */
export interface WorkQueues {
  readonly workQueue: sqs.IQueue;
  readonly deadLetterQueue?: sqs.IQueue;
}

/**
 * The work queue and its dead-letter queue: the user's (`workQueue`, and `deadLetterQueue` or the
 * one its redrive policy names), or new ones, encrypted and TLS-only, redriving after
 * `maxReceiveCount` receives (construct-required).
 */
export function createWorkQueues(
  scope: Construct,
  props: Pick<WebhookInboxProps, 'workQueue' | 'deadLetterQueue' | 'workQueueProps' | 'deadLetterQueueProps'>,
  processorTimeout: Duration,
  maxReceiveCount: number,
): WorkQueues {
  if (props.workQueue) {
    const redrivesTo = props.workQueue instanceof sqs.Queue ? props.workQueue.deadLetterQueue?.queue : undefined;
    return { workQueue: props.workQueue, deadLetterQueue: props.deadLetterQueue ?? redrivesTo };
  }
  const dlq = new sqs.Queue(scope, 'DeadLetterQueue', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(Defaults.DEAD_LETTER_RETENTION_DAYS),
    ...props.deadLetterQueueProps,
  });
  const workQueue = new sqs.Queue(scope, 'WorkQueue', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(processorTimeout.toSeconds() * Defaults.VISIBILITY_TIMEOUT_FACTOR),
    ...props.workQueueProps,
    deadLetterQueue: { queue: dlq, maxReceiveCount },
  });
  return { workQueue, deadLetterQueue: dlq };
}

/**
 * Each provider's signing secret, by provider name: the one it brings, or a new placeholder. A
 * provider whose requests name the certificate that signed them (SNS), or that sends no requests
 * at all (a polled-only batch API), has none.
 */
export function signingSecrets(scope: Construct, providers: readonly WebhookProviderConfig[]): Map<string, secretsmanager.ISecret> {
  const secrets = new Map<string, secretsmanager.ISecret>();
  for (const provider of providers) {
    if (SECRETLESS_ADAPTERS.includes(provider.adapter)) continue;
    secrets.set(provider.name, provider.signingSecret ?? createSigningSecret(scope, provider.name));
  }
  return secrets;
}

function createSigningSecret(scope: Construct, providerName: string): secretsmanager.Secret {
  const secret = new secretsmanager.Secret(scope, `${pascalCase(providerName)}SigningSecret`, {
    description: `Webhook signing secret of ${providerName}: replace the placeholder with the provider's secret`,
    // A placeholder until the operator stores the provider's secret: 48 alphanumerics are valid base64.
    generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
  });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions::AwsSolutions-SMG4',
    reason:
      'The provider issues this signing secret; a new one is staged by the operator as the provider rotates it ' +
      '(docs/ROTATION.md), not generated on a schedule.',
  });
  return secret;
}

/**
 * The bucket of bodies and results too large for a table item. Each object expires a day after
 * the items that reference it (it is written a moment before its item; an item past its expiry
 * reads as absent, whether its TTL has deleted it yet or not): bodies, and the resources effects
 * reference, with the rows (`retention`); results with their items (`resultRetention`).
 */
export function createBodyBucket(scope: Construct, settings: Pick<InboxSettings, 'retention' | 'resultRetention'>): s3.Bucket {
  const dayAfter = (itemRetention: Duration) => Duration.days(Math.ceil(itemRetention.toDays({ integral: false })) + 1);
  const [rows, results] = [dayAfter(settings.retention), dayAfter(settings.resultRetention)];
  const bucket = new s3.Bucket(scope, 'BodyBucket', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: RemovalPolicy.RETAIN,
    // One rule while both are kept alike; else one per prefix (S3 applies the earliest expiration of the rules an object matches).
    lifecycleRules:
      rows.toDays() === results.toDays()
        ? [{ expiration: rows }]
        : [
            { prefix: `${BodyPrefix.BODIES}/`, expiration: rows },
            { prefix: `${BodyPrefix.RESOURCES}/`, expiration: rows },
            { prefix: `${BodyPrefix.RESPONSES}/`, expiration: results },
          ],
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions::AwsSolutions-S1',
    reason:
      'Objects are written only by the verifier and read only by the processor and principals granted ' +
      'grantReadInbox/grantReadResults, under IAM; object-level access is audited with CloudTrail data events, ' +
      'not a second bucket of access logs.',
  });
  return bucket;
}

/** The bus decided results are published to. */
export function createEventBus(scope: Construct): events.EventBus {
  return new events.EventBus(scope, 'EventBus', { description: 'Webhook inbox: decided results and events' });
}

/** The signing secret of a provider the inbox serves; an error naming it otherwise. */
export function signingSecretOf(inbox: IConstruct, secrets: ReadonlyMap<string, secretsmanager.ISecret>, providerName: string): secretsmanager.ISecret {
  const secret = secrets.get(providerName);
  if (!secret) throw new ValidationError(`this inbox serves no provider named "${providerName}" with a signing secret`, inbox);
  return secret;
}
