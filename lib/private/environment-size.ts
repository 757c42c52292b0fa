import { CfnElement, CfnResource, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { RESOURCE_NAMES } from '../contract';

/** Lambda's limit on a function's environment variables: the JSON text of the whole map, in bytes (not adjustable). */
export const LAMBDA_ENVIRONMENT_LIMIT_BYTES = 4096;

/**
 * How long a value CloudFormation fills in at deploy can be, at its longest (docs/LIMITS.md): the
 * pseudo parameters in any partition, region and account, and the names CloudFormation generates.
 */
const LONGEST_PARTITION = 'aws-us-gov'.length;
const LONGEST_REGION = 'us-isof-south-1'.length;
const ACCOUNT = 12;
const LONGEST_URL_SUFFIX = 'amazonaws.com.cn'.length;
const LONGEST_STACK_NAME = 128;
/** What a value of a kind not listed here (an ARN, an id) is counted as. */
const UNKNOWN_VALUE = 256;

const filler = (length: number) => 'x'.repeat(length);
const arnOf = (service: string, resource: string) => `arn:${filler(LONGEST_PARTITION)}:${service}:${filler(LONGEST_REGION)}:${filler(ACCOUNT)}:${resource}`;

/**
 * A function's environment as Lambda measures it, each value CloudFormation fills in at deploy
 * counted at its longest: the JSON text of the whole map, in bytes. The user's own variables
 * (`environment` of the function props) are in it.
 */
export function longestEnvironmentBytes(fn: lambda.Function): number {
  const stack = Stack.of(fn);
  const rendered = stack.resolve((fn.node.defaultChild as lambda.CfnFunction).environment) as { variables?: Record<string, unknown> } | undefined;
  const longest = longestValues(stack);
  return Buffer.byteLength(
    JSON.stringify(Object.fromEntries(Object.entries(rendered?.variables ?? {}).map(([name, value]) => [name, longest(value)]))),
    'utf8',
  );
}

/** How a value of `stack` (a string with tokens, or a resolved CloudFormation value) can read once deployed, at its longest. */
export function longestValues(stack: Stack): (value: unknown) => string {
  const resources = resourcesByLogicalId(stack);
  return (value) => longestOf(stack.resolve(value), resources, stack);
}

/**
 * The refusal of a function whose environment may exceed Lambda's limit, naming the size and the
 * limit (the message is prefixed with the function's path); `overridesProp` is the prop its own
 * variables come from.
 */
export function environmentSizeProblems(fn: lambda.Function, overridesProp: string | undefined): string[] {
  const bytes = longestEnvironmentBytes(fn);
  if (bytes <= LAMBDA_ENVIRONMENT_LIMIT_BYTES) return [];
  const remedy = overridesProp ? `: move variables of ${overridesProp}.environment elsewhere (a file, a parameter) or shorten them` : '';
  return [
    `its environment variables can reach ${bytes} bytes once deployed, over Lambda's limit of ${LAMBDA_ENVIRONMENT_LIMIT_BYTES} bytes ` +
      `(4 KB: the JSON text of all its variables, which cannot be raised)${remedy}`,
  ];
}

function resourcesByLogicalId(stack: Stack): Map<string, CfnResource> {
  const found = new Map<string, CfnResource>();
  for (const child of stack.node.findAll()) {
    if (child instanceof CfnResource && Stack.of(child) === stack) found.set(stack.resolve((child as CfnElement).logicalId) as string, child);
  }
  return found;
}

/** A resolved CloudFormation value as it can read once deployed, at its longest. */
function longestOf(value: unknown, resources: ReadonlyMap<string, CfnResource>, stack: Stack): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const [entry] = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
  const [fn, args] = entry ?? [];
  const of = (inner: unknown) => longestOf(inner, resources, stack);
  switch (fn) {
    case 'Ref':
      return longestReference(String(args), resources, stack);
    case 'Fn::GetAtt': {
      const [logicalId, attribute] = args as [string, string];
      return longestAttribute(logicalId, attribute, resources, stack);
    }
    case 'Fn::Join': {
      const [separator, parts] = args as [string, unknown[]];
      return parts.map(of).join(separator);
    }
    case 'Fn::Select': {
      const [index, list] = args as [unknown, unknown];
      const split = (list as { 'Fn::Split'?: [string, unknown] })['Fn::Split'];
      const items = Array.isArray(list) ? list.map(of) : split ? of(split[1]).split(split[0]) : [];
      return items[Number(of(index))] ?? filler(UNKNOWN_VALUE);
    }
    case 'Fn::Sub': {
      const [text, variables = {}] = (typeof args === 'string' ? [args] : args) as [string, Record<string, unknown>?];
      return text.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
        if (name in variables) return of(variables[name]);
        const [logicalId, attribute] = name.split('.');
        return attribute ? longestAttribute(logicalId, attribute, resources, stack) : longestReference(name, resources, stack);
      });
    }
    default:
      return filler(UNKNOWN_VALUE);
  }
}

function longestReference(name: string, resources: ReadonlyMap<string, CfnResource>, stack: Stack): string {
  const pseudo: Record<string, number> = {
    'AWS::Partition': LONGEST_PARTITION,
    'AWS::Region': LONGEST_REGION,
    'AWS::AccountId': ACCOUNT,
    'AWS::URLSuffix': LONGEST_URL_SUFFIX,
    'AWS::StackName': LONGEST_STACK_NAME,
  };
  if (pseudo[name] !== undefined) return filler(pseudo[name]);
  const resource = resources.get(name);
  if (!resource) return filler(UNKNOWN_VALUE);
  switch (resource.cfnResourceType) {
    case 'AWS::SecretsManager::Secret':
      return secretArnOf(name, resource, stack);
    case 'AWS::SQS::Queue':
      return `https://sqs.${filler(LONGEST_REGION)}.${filler(LONGEST_URL_SUFFIX)}/${filler(ACCOUNT)}/${nameOf(resource, stack)}`;
    case 'AWS::SNS::Topic':
      return arnOf('sns', nameOf(resource, stack));
    default:
      return RESOURCE_NAMES[resource.cfnResourceType] ? nameOf(resource, stack) : filler(UNKNOWN_VALUE);
  }
}

function longestAttribute(logicalId: string, attribute: string, resources: ReadonlyMap<string, CfnResource>, stack: Stack): string {
  const resource = resources.get(logicalId);
  if (!resource) return filler(UNKNOWN_VALUE);
  switch (`${resource.cfnResourceType}.${attribute}`) {
    case 'AWS::Lambda::Function.Arn':
      return arnOf('lambda', `function:${nameOf(resource, stack)}`);
    case 'AWS::SQS::Queue.Arn':
      return arnOf('sqs', nameOf(resource, stack));
    case 'AWS::DynamoDB::Table.Arn':
      return arnOf('dynamodb', `table/${nameOf(resource, stack)}`);
    case 'AWS::S3::Bucket.Arn':
      return `arn:${filler(LONGEST_PARTITION)}:s3:::${nameOf(resource, stack)}`;
    case 'AWS::Events::EventBus.Arn':
      return arnOf('events', `event-bus/${nameOf(resource, stack)}`);
    case 'AWS::Events::EventBus.Name':
    case 'AWS::SQS::Queue.QueueName':
      return nameOf(resource, stack);
    case 'AWS::SecretsManager::Secret.Id':
      return secretArnOf(logicalId, resource, stack);
    default:
      return filler(UNKNOWN_VALUE);
  }
}

/** The name the resource is given, or the longest CloudFormation generates for its type. */
function nameOf(resource: CfnResource, stack: Stack): string {
  const naming = RESOURCE_NAMES[resource.cfnResourceType];
  // An L1 resource's properties are the template's, in lower camel case (`TableName` is `tableName`).
  const property = naming && `${naming.property[0].toLowerCase()}${naming.property.slice(1)}`;
  const own: unknown = property && stack.resolve((resource as unknown as Record<string, unknown>)[property]);
  return own !== undefined ? longestOf(own, new Map(), stack) : filler(naming?.maxLength ?? UNKNOWN_VALUE);
}

/** A secret's ARN: `<name>-<6 characters>` after `secret:`, the name generated as `<logical id>-<12 characters>` when it has none. */
function secretArnOf(logicalId: string, resource: CfnResource, stack: Stack): string {
  const own: unknown = stack.resolve((resource as secretsmanager.CfnSecret).name);
  const name = own !== undefined ? longestOf(own, new Map(), stack) : `${logicalId}-${filler(12)}`;
  return arnOf('secretsmanager', `secret:${name}-${filler(6)}`);
}
