/**
 * Creates a stack's data resources on the local services, from their template properties: DynamoDB
 * tables with their key schema and indexes, SQS queues with their attributes and redrive policy,
 * S3 buckets, Secrets Manager secrets (empty until a value is chosen, with the KMS key they name)
 * and EventBridge buses. Each
 * created resource's local identity (a queue's URL, a secret's ARN) is set on the binding.
 */
import { CreateTableCommand, CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { waitForActiveTable } from '../provision';
import type { SynthesizedStack } from './assembly';
import type { StackBinding } from './binding';
import type { LocalServices } from '../services';

/** SQS attributes a template sets as properties, by property name. */
const QUEUE_ATTRIBUTES = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'DelaySeconds',
  'MaximumMessageSize',
  'ReceiveMessageWaitTimeSeconds',
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;

/** The local queues of a stack, by logical id. */
export interface LocalQueue {
  readonly logicalId: string;
  readonly name: string;
  readonly url: string;
  readonly arn: string;
}

export interface CreatedResources {
  readonly queues: ReadonlyMap<string, LocalQueue>;
  readonly tables: ReadonlyMap<string, string>;
  readonly buckets: ReadonlyMap<string, string>;
  /** Secret ARN by logical id; values are put later. */
  readonly secrets: ReadonlyMap<string, string>;
  readonly buses: ReadonlyMap<string, string>;
}

export async function createDataResources(stack: SynthesizedStack, binding: StackBinding, services: LocalServices): Promise<CreatedResources> {
  const of = (type: string) => Object.entries(stack.template.Resources).filter(([, resource]) => resource.Type === type);
  const tables = new Map<string, string>();
  for (const [logicalId] of of('AWS::DynamoDB::Table')) {
    const name = binding.nameOf(logicalId);
    await services.clients.dynamodb.send(new CreateTableCommand(tableInput(name, binding.resolveProperties(logicalId)))).catch((error: { name?: string }) => {
      // Kept from an earlier run with the same data folder.
      if (error.name !== 'ResourceInUseException') throw error;
    });
    tables.set(logicalId, name);
  }
  await Promise.all([...tables.values()].map((name) => waitForActiveTable(services.clients.dynamodb, name)));

  const queues = new Map<string, LocalQueue>();
  // Dead-letter queues first: a redrive policy names an existing queue.
  const queueResources = of('AWS::SQS::Queue').sort(
    ([, a], [, b]) => Number(Boolean(a.Properties?.RedrivePolicy)) - Number(Boolean(b.Properties?.RedrivePolicy)),
  );
  for (const [logicalId] of queueResources) {
    const name = binding.nameOf(logicalId);
    const { QueueUrl } = await services.clients.sqs.send(
      new CreateQueueCommand({ QueueName: name, Attributes: queueAttributes(binding.resolveProperties(logicalId)) }),
    );
    const bound = binding.get(logicalId);
    binding.set(logicalId, { ref: QueueUrl!, attributes: { ...bound.attributes, QueueUrl: QueueUrl! } });
    queues.set(logicalId, { logicalId, name, url: QueueUrl!, arn: bound.attributes!.Arn });
  }

  const buckets = new Map<string, string>();
  for (const [logicalId] of of('AWS::S3::Bucket')) {
    const name = binding.nameOf(logicalId);
    await services.clients.s3.send(new CreateBucketCommand({ Bucket: name })).catch((error: { name?: string }) => {
      if (error.name !== 'BucketAlreadyOwnedByYou') throw error;
    });
    buckets.set(logicalId, name);
  }

  const secrets = new Map<string, string>();
  for (const [logicalId, resource] of of('AWS::SecretsManager::Secret')) {
    const name = binding.nameOf(logicalId);
    // Encrypted with a customer-managed key, reading it takes kms:Decrypt on that key (the IAM gateway judges it).
    const kmsKeyId = resource.Properties?.KmsKeyId === undefined ? undefined : binding.resolvePropertyText(logicalId, 'KmsKeyId');
    const { ARN } = await services.clients.secrets.send(new CreateSecretCommand({ Name: name, ...(kmsKeyId ? { KmsKeyId: kmsKeyId } : {}) }));
    binding.set(logicalId, { ref: ARN!, attributes: { Name: name, Id: ARN! } });
    secrets.set(logicalId, ARN!);
  }

  const buses = new Map<string, string>();
  for (const [logicalId] of of('AWS::Events::EventBus')) {
    const name = binding.nameOf(logicalId);
    services.eventBridge.createBus(name);
    buses.set(logicalId, name);
  }
  return { queues, tables, buckets, secrets, buses };
}

function tableInput(name: string, properties: Record<string, unknown>): CreateTableCommandInput {
  const billingMode = (properties.BillingMode as string | undefined) ?? 'PROVISIONED';
  const throughput =
    billingMode === 'PROVISIONED' ? { ProvisionedThroughput: properties.ProvisionedThroughput ?? { ReadCapacityUnits: 5, WriteCapacityUnits: 5 } } : {};
  const indexes = (key: string) =>
    ((properties[key] as Record<string, unknown>[] | undefined) ?? []).map((index) => ({
      IndexName: index.IndexName,
      KeySchema: index.KeySchema,
      Projection: index.Projection,
      ...(billingMode === 'PROVISIONED' && key === 'GlobalSecondaryIndexes'
        ? { ProvisionedThroughput: index.ProvisionedThroughput ?? throughput.ProvisionedThroughput }
        : {}),
    }));
  const global = indexes('GlobalSecondaryIndexes');
  const local = indexes('LocalSecondaryIndexes');
  return {
    TableName: name,
    AttributeDefinitions: properties.AttributeDefinitions,
    KeySchema: properties.KeySchema,
    BillingMode: billingMode,
    ...throughput,
    ...(global.length ? { GlobalSecondaryIndexes: global } : {}),
    ...(local.length ? { LocalSecondaryIndexes: local } : {}),
  } as CreateTableCommandInput;
}

function queueAttributes(properties: Record<string, unknown>): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const name of QUEUE_ATTRIBUTES) if (properties[name] !== undefined) attributes[name] = String(properties[name]);
  if (properties.RedrivePolicy !== undefined) attributes.RedrivePolicy = JSON.stringify(properties.RedrivePolicy);
  if (properties.RedriveAllowPolicy !== undefined) attributes.RedriveAllowPolicy = JSON.stringify(properties.RedriveAllowPolicy);
  return attributes;
}
