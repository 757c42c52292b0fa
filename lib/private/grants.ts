import { Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ARCHIVE_PREFIX, BodyPrefix, SUBMISSION_PARTITION_PREFIX, SUBMISSION_RECORD_ATTRIBUTES } from '../contract';
import { longestValues } from './environment-size';

/**
 * The grants of the inbox's own functions: exactly the actions each uses, on exactly its
 * resources (no index wildcards, no `grantReadWriteData`), plus the keys of encrypted ones.
 */

/** Exactly these actions on the table itself (no index wildcard), plus its key when it has one. */
export function grantTableActions(role: iam.IRole, table: dynamodb.ITable, actions: string[]): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [table.tableArn] }));
  table.encryptionKey?.grantEncryptDecrypt(role);
}

/** SendMessage on the work queue, plus its key when it has one. */
export function grantSend(role: iam.IRole, queue: sqs.IQueue): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
  queue.encryptionMasterKey?.grantEncryptDecrypt(role);
}

/**
 * Exactly these actions on the body bucket's objects under one prefix (keys are digests, unknown
 * at deploy time), with the cdk-nag acknowledgement of that one wildcard on the grantee's
 * principal; nothing without a bucket.
 */
export function grantObjects(
  scope: Construct,
  bucket: s3.IBucket | undefined,
  grantee: iam.IGrantable,
  actions: string[],
  prefix: (typeof BodyPrefix)[keyof typeof BodyPrefix] | typeof ARCHIVE_PREFIX,
): void {
  if (!bucket) return;
  iam.Grant.addToPrincipal({ grantee, actions, resourceArns: [bucket.arnForObjects(`${prefix}/*`)] });
  bucket.encryptionKey?.grantEncryptDecrypt(grantee);
  const principal = grantee.grantPrincipal;
  if (!Construct.isConstruct(principal)) return;
  const cfnBucket = bucket.node.defaultChild as s3.CfnBucket | undefined;
  const bucketArn = cfnBucket ? `<${Stack.of(scope).getLogicalId(cfnBucket)}.Arn>` : nagResource(Stack.of(scope).resolve(bucket.bucketArn));
  Validations.of(principal).acknowledge({
    id: `AwsSolutions::AwsSolutions-IAM5[Resource::${bucketArn}/${prefix}/*]`,
    reason: `Object keys under ${prefix}/ are content digests, unknown at deploy time; the grant is limited to that prefix and these actions.`,
  });
}

/**
 * Reading a table's items by key (GetItem, BatchGetItem, Query on the table): no Scan, no stream,
 * no index wildcard, so a grant names exactly the table; plus decrypting with its key.
 */
export function grantReadItems(table: dynamodb.ITable, grantee: iam.IGrantable): iam.Grant {
  table.encryptionKey?.grantDecrypt(grantee);
  return iam.Grant.addToPrincipal({ grantee, actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'], resourceArns: [table.tableArn] });
}

/**
 * Recording submissions: PutItem on the inbox table, only of items whose partition key is a
 * submission's and whose attributes are a submission's, returning no old item; plus its key.
 */
export function grantSubmissionRecords(inboxTable: dynamodb.ITable, grantee: iam.IGrantable): iam.Grant {
  inboxTable.encryptionKey?.grantEncryptDecrypt(grantee);
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:PutItem'],
    resourceArns: [inboxTable.tableArn],
    // IAM has no condition on the sort key: the attributes are what keep a delivery row out of reach
    // (docs/SUBMISSION-LEDGER.md#what-the-grant-allows).
    conditions: {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SUBMISSION_PARTITION_PREFIX}*`] },
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...SUBMISSION_RECORD_ATTRIBUTES] },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
    },
  });
}

/**
 * Reading a secret (`grantRead`) and, when it is encrypted with a customer-managed key, decrypting
 * with that key through Secrets Manager only (`kms:ViaService`), on the reader's own policy.
 * aws-cdk-lib's `grantRead` puts that permission in the key's policy, which an imported key
 * (`kms.Key.fromKeyArn`, the usual companion of an imported secret) cannot take: there the
 * statement is dropped without a word, and AWS refuses the read.
 */
export function grantReadSecret(secret: secretsmanager.ISecret, role: iam.IRole): void {
  secret.grantRead(role);
  grantSecretKey(secret, role, ['kms:Decrypt']);
}

/** IAM's limit on one customer managed policy, in characters (whitespace not counted); not adjustable. */
const MANAGED_POLICY_CHARACTERS = 6144;
/** What a policy of one statement takes beside its resources, with room to spare. */
const POLICY_OVERHEAD_CHARACTERS = 400;
const SECRET_READ_ACTIONS = ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'];

/**
 * Reading the signing secrets, in customer managed policies attached to the role rather than in
 * its inline policy: a role's inline policies share 10,240 characters, which 40 secrets with long
 * logical ids exceed, while each managed policy has 6,144 of its own (docs/LIMITS.md). Each holds
 * one statement naming as many secrets as fit, their ARNs counted at their longest.
 */
export function grantReadSigningSecrets(scope: Construct, secrets: readonly secretsmanager.ISecret[], role: iam.IRole): void {
  const longest = longestValues(Stack.of(scope));
  const policies: string[][] = [];
  let characters = Infinity;
  for (const secret of secrets) {
    // As `grantRead` names a secret: its full ARN, or any of the ARNs its name can have.
    const arn = secret.secretFullArn ?? `${secret.secretArn}-??????`;
    const length = longest(arn).length + 3;
    if (characters + length > MANAGED_POLICY_CHARACTERS - POLICY_OVERHEAD_CHARACTERS) {
      policies.push([]);
      characters = 0;
    }
    policies[policies.length - 1].push(arn);
    characters += length;
    grantSecretKey(secret, role, ['kms:Decrypt']);
  }
  policies.forEach((resources, index) => {
    new iam.ManagedPolicy(scope, `VerifierSigningSecretsPolicy${index === 0 ? '' : index + 1}`, {
      description: 'Webhook inbox verifier: reads the providers’ signing secrets',
      statements: [new iam.PolicyStatement({ actions: SECRET_READ_ACTIONS, resources })],
      roles: [role],
    });
  });
}

/** These KMS actions on a secret's customer-managed key, through Secrets Manager only; nothing for the AWS managed key. */
export function grantSecretKey(secret: secretsmanager.ISecret, role: iam.IRole, actions: string[]): void {
  const key = secret.encryptionKey;
  if (!key) return;
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions,
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(secret).region}.amazonaws.com` } },
    }),
  );
}

/**
 * Invoking exactly this function: its ARN as the handlers call it, not `grantInvoke`'s added
 * `<arn>:*` (every version and alias), which a caller of the unqualified ARN never needs.
 */
export function grantInvokeFunction(fn: lambda.IFunction, role: iam.IRole): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }));
}

/**
 * A resource as cdk-nag names it in a finding's id: an imported bucket's ARN is built with
 * `Ref AWS::Partition`, written `<AWS::Partition>` (a finding id is a plain string, never a token).
 */
function nagResource(resolved: unknown): string {
  if (typeof resolved === 'string') return resolved;
  const [fn, args] = Object.entries(resolved as Record<string, unknown>)[0] ?? [];
  if (fn === 'Ref') return `<${String(args)}>`;
  if (fn === 'Fn::GetAtt') return `<${(args as string[]).join('.')}>`;
  if (fn === 'Fn::Join') return (args as [string, unknown[]])[1].map(nagResource).join((args as [string, unknown[]])[0]);
  return JSON.stringify(resolved);
}
