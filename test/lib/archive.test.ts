/**
 * The archive as the construct synthesizes it. Stated here on their own: with `archive: {}` the
 * processor (and only it) may put objects under `deliveries/` of a new bucket that is encrypted,
 * TLS only, not public, kept a year; a Glue table over `deliveries/` projects its partitions
 * (provider, day) so Athena needs no crawler; `grantReadArchive` lets a reader list the prefix and
 * get its objects; without the prop there is none of it.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { WebhookInbox, WebhookInboxProps, WebhookProvider } from '../../lib';
import { ARCHIVE_BUCKET_ENV } from '../../lib/contract';
import { handlerSettings } from '../support/handler-settings';

function build(props: WebhookInboxProps): { stack: Stack; inbox: WebhookInbox; template: Template } {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const inbox = new WebhookInbox(stack, 'Inbox', props);
  return { stack, inbox, template: Template.fromStack(stack) };
}

const statementsNaming = (template: Template, text: string) =>
  Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy: any) =>
    (policy.Properties.PolicyDocument.Statement as any[])
      .filter((statement) => JSON.stringify(statement).includes(text))
      .map((statement) => ({ roles: policy.Properties.Roles, statement })),
  );

test('archive: {} makes an encrypted, TLS-only, private bucket kept a year, a projected Glue table, and lets the processor put objects', () => {
  const { stack, template } = build({ providers: [WebhookProvider.stripe(), WebhookProvider.github()], archive: {} });
  const [bucketId, bucket] = Object.entries(template.findResources('AWS::S3::Bucket')).find(([id]) => id.startsWith('InboxArchiveBucket'))!;
  expect(bucket.Properties).toMatchObject({
    BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
    PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    LifecycleConfiguration: { Rules: [{ Prefix: 'deliveries/', ExpirationInDays: 365, Status: 'Enabled' }] },
  });
  expect(bucket.DeletionPolicy).toBe('Retain');
  template.hasResourceProperties('AWS::S3::BucketPolicy', {
    Bucket: { Ref: bucketId },
    PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
  });
  template.hasResourceProperties('AWS::Glue::Table', {
    DatabaseName: Match.stringLikeRegexp('^webhook_inbox_testinbox[a-z0-9]+$'),
    TableInput: {
      Name: 'deliveries',
      PartitionKeys: [
        { Name: 'source', Type: 'string' },
        { Name: 'day', Type: 'string' },
      ],
      Parameters: Match.objectLike({ 'projection.enabled': 'true', 'projection.source.values': 'stripe,github', 'projection.day.type': 'date' }),
      StorageDescriptor: Match.objectLike({ SerdeInfo: Match.objectLike({ SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe' }) }),
    },
  });
  expect(handlerSettings(stack, 'InboxProcessor')[ARCHIVE_BUCKET_ENV]).toEqual({ Ref: bucketId });
  const puts = statementsNaming(template, 'deliveries/*');
  expect(puts).toHaveLength(1);
  expect(puts[0].statement.Action).toBe('s3:PutObject');
  expect(JSON.stringify(puts[0].roles)).toContain('InboxProcessor');
});

test('without archive: no archive bucket, no Glue table, no archive variable', () => {
  const { stack, template } = build({});
  expect(Object.keys(template.findResources('AWS::S3::Bucket')).filter((id) => id.startsWith('InboxArchive'))).toEqual([]);
  template.resourceCountIs('AWS::Glue::Table', 0);
  expect(handlerSettings(stack, 'InboxProcessor')[ARCHIVE_BUCKET_ENV]).toBeUndefined();
});

test("the user's key, retention and Glacier transition; grantReadArchive lists the prefix and reads its objects", () => {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const key = new kms.Key(stack, 'Key');
  const inbox = new WebhookInbox(stack, 'Inbox', {
    archive: { encryptionKey: key, retention: Duration.days(730), transitionToGlacierInstantRetrievalAfter: Duration.days(30), glueDatabaseName: 'hooks' },
  });
  const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() });
  inbox.grantReadArchive(reader);
  const template = Template.fromStack(stack);
  template.hasResourceProperties('AWS::S3::Bucket', {
    BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' }, BucketKeyEnabled: true }] },
    LifecycleConfiguration: { Rules: [{ ExpirationInDays: 730, Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }] }] },
  });
  const policy = Object.values(template.findResources('AWS::IAM::Policy')).find((each: any) => JSON.stringify(each.Properties.Roles).includes('Reader')) as any;
  const actions = (policy.Properties.PolicyDocument.Statement as any[]).map((statement) => statement.Action);
  expect(actions).toEqual(expect.arrayContaining(['s3:GetObject', 's3:ListBucket', ['glue:GetDatabase', 'glue:GetTable', 'glue:GetPartitions']]));
  expect(JSON.stringify(policy)).toContain('"s3:prefix":["deliveries/*"]');
  expect(JSON.stringify(policy)).toContain('kms:Decrypt');
});

test('settings for a new bucket beside your own bucket, and a Glue name that is not one, are refused naming the prop', () => {
  expect(() => build({ archive: { glueDatabaseName: 'Web-Hooks' } })).toThrow(
    /archive\.glueDatabaseName "Web-Hooks" must be lower-case letters, digits and underscores/,
  );
  const stack = new Stack(new App(), 'Test');
  const bucket = new s3.Bucket(stack, 'Mine');
  expect(() => new WebhookInbox(stack, 'Inbox', { archive: { bucket, retention: Duration.days(30) } })).toThrow(/archive\.bucket: encryptionKey, retention/);
  expect(() => build({}).inbox.grantReadArchive(new iam.AccountRootPrincipal())).toThrow(/grantReadArchive: this inbox has no archive/);
});
