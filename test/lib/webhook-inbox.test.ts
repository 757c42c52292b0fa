import { readFileSync } from 'node:fs';
import { Annotations as CdkAnnotations, App, CfnElement, CfnParameter, Duration, Lazy, RemovalPolicy, Size, Stack, Stage, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Construct } from 'constructs';
import {
  InboxAlarm,
  InboxTableSettings,
  SignatureEncoding,
  TableSettings,
  WebhookInbox,
  WebhookInboxAlarms,
  WebhookInboxProps,
  WebhookIngress,
  WebhookProvider,
} from '../../lib';
import { Defaults, Env, METRIC_NAMESPACE, OPS_CONFIG_OUTPUT_DESCRIPTION } from '../../lib/contract';
import { environmentBytes, Template as DeployedTemplate } from '../support/deploy-limits';
import { handlerSettings } from '../support/handler-settings';

function build(props?: WebhookInboxProps): { stack: Stack; inbox: WebhookInbox; template: Template } {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const inbox = new WebhookInbox(stack, 'Inbox', props);
  return { stack, inbox, template: templateOf(stack) };
}

/** The stack each template of this file was synthesized from: its functions' configuration files are in its assembly. */
const stacksByTemplate = new WeakMap<Template, Stack>();

function templateOf(stack: Stack): Template {
  const template = Template.fromStack(stack);
  stacksByTemplate.set(template, stack);
  return template;
}

/** What the function whose logical id starts with `prefix` reads: its environment and its configuration file. */
function settingsOf(template: Template, prefix: string): Record<string, any> {
  return handlerSettings(stacksByTemplate.get(template)!, prefix);
}

/** The single resource of a type whose logical id starts with `prefix`. */
function resourceNamed(template: Template, type: string, prefix: string): { id: string; resource: any } {
  const matches = Object.entries(template.findResources(type)).filter(([id]) => id.startsWith(prefix));
  expect(matches).toHaveLength(1);
  return { id: matches[0][0], resource: matches[0][1] };
}

/** Every statement of the policies attached to a role (inline, and customer managed ones of the template), with CDK's grouping flattened. */
function statementsOf(template: Template, rolePrefix: string): any[] {
  const role = resourceNamed(template, 'AWS::IAM::Role', rolePrefix);
  return [...Object.values(template.findResources('AWS::IAM::Policy')), ...Object.values(template.findResources('AWS::IAM::ManagedPolicy'))]
    .filter((policy: any) => policy.Properties.Roles.some((r: any) => r.Ref === role.id))
    .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement);
}

function actionsOf(statements: any[]): string[] {
  return statements.flatMap((s) => [s.Action].flat()).sort();
}

describe('WebhookInbox with defaults', () => {
  const { template } = build();

  test('serves POST /hooks/answerline on an HTTP API with throttling and access logs', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /hooks/answerline' });
    template.resourceCountIs('AWS::ApiGatewayV2::Route', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
  });

  test('runs three ARM64 functions on the newest Node.js runtime, untraced, with explicit log groups', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    expect(Object.keys(functions)).toHaveLength(3);
    for (const fn of Object.values(functions) as any[]) {
      expect(fn.Properties).toMatchObject({
        Runtime: lambda.Runtime.NODEJS_24_X.name,
        Architectures: ['arm64'],
        Handler: 'index.handler',
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
      // X-Ray records a trace of nearly every invocation of a quiet inbox: an opt-in (tracing).
      expect(fn.Properties.TracingConfig).toBeUndefined();
    }
    const newest = lambda.Runtime.ALL.filter((r) => r.family === lambda.RuntimeFamily.NODEJS && !r.isVariable)
      .map((r) => Number(/nodejs(\d+)/.exec(r.name)?.[1] ?? 0))
      .reduce((a, b) => Math.max(a, b));
    expect(lambda.Runtime.NODEJS_24_X.name).toBe(`nodejs${newest}.x`);
    template.resourcePropertiesCountIs('AWS::Logs::LogGroup', { RetentionInDays: 30 }, 4);
  });

  test('gives the functions their timeouts and sizes', () => {
    expect(resourceNamed(template, 'AWS::Lambda::Function', 'InboxVerifier').resource.Properties).toMatchObject({ Timeout: 10, MemorySize: 512 });
    expect(resourceNamed(template, 'AWS::Lambda::Function', 'InboxProcessor').resource.Properties).toMatchObject({ Timeout: 30, MemorySize: 512 });
    expect(resourceNamed(template, 'AWS::Lambda::Function', 'InboxReconciler').resource.Properties).toMatchObject({ Timeout: 120, MemorySize: 1769 });
  });

  test('keeps the inbox in an on-demand, encrypted, recoverable table with a TTL and sparse keys-only indexes', () => {
    const { resource } = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable');
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'pending',
          KeySchema: [
            { AttributeName: 'pendingShard', KeyType: 'HASH' },
            { AttributeName: 'pendingSince', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: 'awaiting',
          KeySchema: [
            { AttributeName: 'awaitShard', KeyType: 'HASH' },
            { AttributeName: 'awaitDueAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        { IndexName: 'jobRef', KeySchema: [{ AttributeName: 'jobRef', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
      ],
    });
  });

  test('keeps results in their own encrypted, recoverable table', () => {
    const { resource } = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxResultsTable');
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  });

  test('redrives the work queue to an encrypted DLQ after 5 receives, with visibility 6x the processor timeout', () => {
    const dlq = resourceNamed(template, 'AWS::SQS::Queue', 'InboxDeadLetterQueue');
    const work = resourceNamed(template, 'AWS::SQS::Queue', 'InboxWorkQueue');
    expect(work.resource.Properties).toMatchObject({
      VisibilityTimeout: 180,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq.id, 'Arn'] }, maxReceiveCount: 5 },
    });
    expect(dlq.resource.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1209600 });
    template.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      {
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      },
      2,
    );
  });

  test('drives the processor from the queue with partial batch responses', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
      FunctionName: { Ref: resourceNamed(template, 'AWS::Lambda::Function', 'InboxProcessor').id },
    });
  });

  test("deploys in a new account: no function reserves concurrency, and the processor takes at most half of the account's", () => {
    // A new account starts with 10 concurrent executions, and Lambda keeps at least 10 unreserved: any reservation fails to deploy there.
    const NEW_ACCOUNT_CONCURRENCY = 10;
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
    // The verifier answers providers synchronously: a processor draining a burst must leave it room.
    const [mapping] = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mapping.Properties.ScalingConfig.MaximumConcurrency).toBeLessThanOrEqual(NEW_ACCOUNT_CONCURRENCY / 2);
  });

  test('creates a signing secret per provider and outputs its ARN and the URLs', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { PasswordLength: 48, ExcludePunctuation: true },
    });
    const outputs = template.findOutputs('*');
    const byDescription = Object.fromEntries(Object.values(outputs).map((o: any) => [o.Description, o.Value]));
    expect(byDescription['Signing secret of answerline']).toEqual({
      Ref: resourceNamed(template, 'AWS::SecretsManager::Secret', 'InboxAnswerlineSigningSecret').id,
    });
    expect(JSON.stringify(byDescription['Webhook URL for answerline'])).toContain('/hooks/answerline');
    expect(byDescription['Webhook inbox endpoint base URL']).toBeDefined();
  });

  test('publishes the ops configuration (tables, queues, reconciler) as one JSON output for the ops CLI', () => {
    const output = Object.values(template.findOutputs('*')).find((o: any) => String(o.Description).startsWith(OPS_CONFIG_OUTPUT_DESCRIPTION)) as any;
    expect(output.Description).toBe(`${OPS_CONFIG_OUTPUT_DESCRIPTION} (Test/Inbox)`);
    const value = JSON.stringify(output.Value);
    for (const prefix of ['InboxInboxTable', 'InboxResultsTable', 'InboxWorkQueue', 'InboxDeadLetterQueue', 'InboxReconciler', 'InboxBodyBucket']) {
      expect(value).toContain(
        resourceNamed(
          template,
          prefix.includes('Table')
            ? 'AWS::DynamoDB::Table'
            : prefix.includes('Queue')
              ? 'AWS::SQS::Queue'
              : prefix.includes('Bucket')
                ? 'AWS::S3::Bucket'
                : 'AWS::Lambda::Function',
          prefix,
        ).id,
      );
    }
    expect(value).toContain('\\"providers\\":[\\"answerline\\"]');
  });

  test('runs the reconciler every 5 minutes', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [resourceNamed(template, 'AWS::Lambda::Function', 'InboxReconciler').id, 'Arn'] } })],
    });
  });

  test('alarms as soon as the DLQ holds a message', () => {
    const dlq = resourceNamed(template, 'AWS::SQS::Queue', 'InboxDeadLetterQueue');
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq.id, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  test('attaches no managed policies: each role has only inline, named statements', () => {
    for (const role of Object.values(template.findResources('AWS::IAM::Role')) as any[]) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  test('lets the verifier write the inbox, send to the queue and read its secret, nothing else', () => {
    const statements = statementsOf(template, 'InboxVerifierRole');
    expect(actionsOf(statements)).toEqual(
      [
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        's3:PutObject',
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
        'sqs:SendMessage',
      ].sort(),
    );
    const inbox = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').id;
    const dynamo = statements.find((s) => [s.Action].flat().includes('dynamodb:PutItem'));
    expect(dynamo.Resource).toEqual({ 'Fn::GetAtt': [inbox, 'Arn'] });
    const send = statements.find((s) => s.Action === 'sqs:SendMessage');
    expect(send.Resource).toEqual({ 'Fn::GetAtt': [resourceNamed(template, 'AWS::SQS::Queue', 'InboxWorkQueue').id, 'Arn'] });
  });

  test('lets the processor claim inbox rows and read and write results, nothing else', () => {
    const statements = statementsOf(template, 'InboxProcessorRole');
    expect(actionsOf(statements)).toEqual(
      [
        'dynamodb:BatchWriteItem',
        'dynamodb:GetItem',
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        's3:GetObject',
        's3:PutObject',
        's3:PutObject',
        's3:PutObject',
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
      ].sort(),
    );
    const results = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxResultsTable').id;
    const onResults = statements.find((s) => s.Resource['Fn::GetAtt']?.[0] === results);
    expect(onResults.Action).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // A batch's completions are one BatchWriteItem, on the inbox table only.
    const inbox = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').id;
    expect(statements.find((s) => [s.Action].flat().includes('dynamodb:BatchWriteItem')).Resource).toEqual({ 'Fn::GetAtt': [inbox, 'Arn'] });
    expect(statements.some((s) => [s.Action].flat().includes('dynamodb:PutItem'))).toBe(false);
  });

  test('lets the reconciler query only its three indexes, read the rows the sweep finds, keep the ledger, feed recovered rows, send, and announce gone resources, nothing else', () => {
    const statements = statementsOf(template, 'InboxReconcilerRole');
    expect(actionsOf(statements)).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        's3:PutObject',
        'sqs:SendMessage',
      ].sort(),
    );
    const query = JSON.stringify(statements.find((s) => s.Action === 'dynamodb:Query').Resource);
    for (const index of ['/index/pending', '/index/awaiting', '/index/jobRef']) expect(query).toContain(index);
    expect(query).not.toContain('/index/*');
  });

  test('passes the runtime its configuration through the contract variables', () => {
    const verifier = settingsOf(template, 'InboxVerifier');
    expect(Object.keys(verifier).sort()).toEqual(
      [
        Env.INBOX_NAME,
        Env.INBOX_TABLE,
        Env.WORK_QUEUE_URL,
        Env.PROVIDERS,
        Env.MAX_BODY_BYTES,
        Env.RETENTION_SECONDS,
        Env.SECRET_CACHE_SECONDS,
        Env.BODY_BUCKET,
        Env.INLINE_BODY_BYTES,
        Env.REJECTION_RECORDS_PER_MINUTE,
        Env.REJECTION_SAMPLE_PERCENT,
        Env.REJECTION_RETENTION_SECONDS,
        Env.REJECTION_RECORD_BUDGET_MS,
      ].sort(),
    );
    // Refused requests: 60 records a minute per provider, every one considered, kept 7 days, at most 200 ms each.
    expect(verifier[Env.REJECTION_RECORDS_PER_MINUTE]).toBe('60');
    expect(verifier[Env.REJECTION_SAMPLE_PERCENT]).toBe('100');
    expect(verifier[Env.REJECTION_RETENTION_SECONDS]).toBe(String(7 * 86400));
    expect(verifier[Env.REJECTION_RECORD_BUDGET_MS]).toBe('200');
    expect(verifier[Env.MAX_BODY_BYTES]).toBe('6000000');
    expect(verifier[Env.INLINE_BODY_BYTES]).toBe(String(8 * 1024));
    expect(verifier[Env.RETENTION_SECONDS]).toBe(String(30 * 86400));
    const processor = settingsOf(template, 'InboxProcessor');
    expect(processor[Env.LEASE_SECONDS]).toBe('30');
    expect(processor[Env.MAX_RECEIVE_COUNT]).toBe('5');
  });

  test('matches the canonical snapshot (asset hashes scrubbed)', () => {
    const json = JSON.stringify(template.toJSON(), null, 1).replace(/[0-9a-f]{64}\.zip/g, '<asset>.zip');
    expect(JSON.parse(json)).toMatchSnapshot();
  });
});

describe('WebhookInbox with overrides', () => {
  test('a function whose environment, the user’s variables counted, can exceed Lambda’s 4 KB once deployed is refused at synth, naming it, the size and the limit', () => {
    const withVariable = (bytes: number) => {
      const stack = new Stack(new App(), 'Test');
      new WebhookInbox(stack, 'Inbox', { verifierFunctionProps: { environment: { APP_SETTINGS: 'x'.repeat(bytes) } } });
      return stack;
    };
    // The size the refusal names is the one this test estimates on its own, every reference at its longest.
    const oversized = withVariable(3400);
    const template = Stage.of(oversized)!.synth({ skipValidation: true }).getStackByName('Test').template as DeployedTemplate;
    const verifierId = Object.keys(template.Resources).find((id) => id.startsWith('InboxVerifier') && template.Resources[id].Type === 'AWS::Lambda::Function')!;
    const bytes = environmentBytes(template, verifierId);
    expect(bytes).toBeGreaterThan(4096);
    expect(() => Template.fromStack(withVariable(3400))).toThrow(
      `[Test/Inbox/Verifier] its environment variables can reach ${bytes} bytes once deployed, over Lambda's limit of 4096 bytes (4 KB: the JSON text of all its variables, which cannot be raised): move variables of verifierFunctionProps.environment elsewhere (a file, a parameter) or shorten them`,
    );
    // With 1,000 bytes fewer of its own, the same function fits.
    expect(() => Template.fromStack(withVariable(2400))).not.toThrow();
  });

  test('derives the visibility timeout and the lease from the processor timeout', () => {
    const { template } = build({ processorFunctionProps: { timeout: Duration.seconds(60) }, maxReceiveCount: 3 });
    expect(resourceNamed(template, 'AWS::SQS::Queue', 'InboxWorkQueue').resource.Properties).toMatchObject({
      VisibilityTimeout: 360,
      RedrivePolicy: { maxReceiveCount: 3 },
    });
    const env = settingsOf(template, 'InboxProcessor');
    expect(env[Env.LEASE_SECONDS]).toBe('60');
    expect(env[Env.MAX_RECEIVE_COUNT]).toBe('3');
  });

  test('applies throttling, schedule, retention and function overrides, keeping construct-required settings', () => {
    const { template } = build({
      throttle: { rateLimit: 10, burstLimit: 20 },
      retention: Duration.days(15),
      maxBodySize: Size.kibibytes(64),
      verifierFunctionProps: { memorySize: 1024, environment: { EXTRA: 'yes', [Env.INBOX_TABLE]: 'overridden?', [Env.MAX_BODY_BYTES]: '1' } },
      inboxTableSettings: { removalPolicy: RemovalPolicy.DESTROY, pointInTimeRecovery: false },
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
    });
    const verifier = resourceNamed(template, 'AWS::Lambda::Function', 'InboxVerifier').resource.Properties;
    expect(verifier.MemorySize).toBe(1024);
    const settings = settingsOf(template, 'InboxVerifier');
    expect(settings.EXTRA).toBe('yes');
    expect(settings[Env.INBOX_TABLE]).toEqual({ Ref: resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').id });
    expect(settings[Env.RETENTION_SECONDS]).toBe(String(15 * 86400));
    expect(settings[Env.MAX_BODY_BYTES]).toBe(String(64 * 1024));
    const table = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').resource;
    expect(table.DeletionPolicy).toBe('Delete');
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: false });
  });

  test('TableSettings configure the results table as they do the inbox table; InboxTableSettings still type them', () => {
    const legacy: InboxTableSettings = { tableName: 'my-inbox', deletionProtection: true };
    const results: TableSettings = { tableName: 'my-results', removalPolicy: RemovalPolicy.DESTROY, deletionProtection: true };
    const { template } = build({ inboxTableSettings: legacy, resultsTableSettings: results });
    const inbox = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').resource;
    expect(inbox.Properties).toMatchObject({ TableName: 'my-inbox', DeletionProtectionEnabled: true });
    expect(inbox.DeletionPolicy).toBe('Retain');
    const table = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxResultsTable').resource;
    expect(table.Properties).toMatchObject({ TableName: 'my-results', DeletionProtectionEnabled: true, BillingMode: 'PAY_PER_REQUEST' });
    expect(table.DeletionPolicy).toBe('Delete');
  });

  test('warmThroughput warms the table and each of its indexes; none by default', () => {
    const warmThroughput = { readUnitsPerSecond: 15_000, writeUnitsPerSecond: 6_000 };
    const { template } = build({ inboxTableSettings: { warmThroughput } });
    const inbox = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').resource.Properties;
    expect(inbox.WarmThroughput).toEqual({ ReadUnitsPerSecond: 15_000, WriteUnitsPerSecond: 6_000 });
    expect(inbox.GlobalSecondaryIndexes.length).toBeGreaterThan(0);
    for (const index of inbox.GlobalSecondaryIndexes) expect(index.WarmThroughput).toEqual({ ReadUnitsPerSecond: 15_000, WriteUnitsPerSecond: 6_000 });
    expect(resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxResultsTable').resource.Properties.WarmThroughput).toBeUndefined();
    const plain = resourceNamed(build().template, 'AWS::DynamoDB::Table', 'InboxInboxTable').resource.Properties;
    expect(plain.WarmThroughput).toBeUndefined();
  });

  test('refuses a warm throughput below what a new on-demand table serves, naming the prop', () => {
    expect(() =>
      build({
        inboxTableSettings: { warmThroughput: { readUnitsPerSecond: 11_999, writeUnitsPerSecond: 4_000 } },
        resultsTableSettings: { warmThroughput: { writeUnitsPerSecond: 3_999.5 } },
      }),
    ).toThrow(
      /inboxTableSettings\.warmThroughput\.readUnitsPerSecond: must be a whole number of at least 12,000 .*got 11999[\s\S]*resultsTableSettings\.warmThroughput\.writeUnitsPerSecond: must be a whole number of at least 4,000 .*got 3999\.5/,
    );
    expect(() => build({ inboxTableSettings: { warmThroughput: {} } })).toThrow(
      /inboxTableSettings\.warmThroughput: give readUnitsPerSecond, writeUnitsPerSecond or both/,
    );
    expect(() => build({ inboxTableSettings: { warmThroughput: { readUnitsPerSecond: 12_000, writeUnitsPerSecond: 4_000 } } })).not.toThrow();
  });

  test('uses the imported tables, queue and secret the user brings and acknowledges, and grants on them', () => {
    const stack = new Stack(new App(), 'Byo');
    const inboxTable = dynamodb.Table.fromTableName(stack, 'ExistingInbox', 'existing-inbox');
    const resultsTable = dynamodb.Table.fromTableName(stack, 'ExistingResults', 'existing-results');
    const workQueue = sqs.Queue.fromQueueArn(stack, 'ExistingQueue', 'arn:aws:sqs:eu-west-1:111111111111:existing-work');
    const deadLetterQueue = sqs.Queue.fromQueueArn(stack, 'ExistingDlq', 'arn:aws:sqs:eu-west-1:111111111111:existing-dlq');
    const signingSecret = secretsmanager.Secret.fromSecretNameV2(stack, 'ExistingSecret', 'answerline/signing');
    new WebhookInbox(stack, 'Inbox', {
      providers: [WebhookProvider.answerline({ signingSecret })],
      inboxTable,
      resultsTable,
      workQueue,
      deadLetterQueue,
      acknowledgeImportedInboxTable: true,
      acknowledgeImportedResultsTable: true,
      acknowledgeImportedWorkQueue: true,
    });
    const template = templateOf(stack);
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    template.resourceCountIs('AWS::SQS::Queue', 0);
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { Dimensions: [{ Name: 'QueueName', Value: 'existing-dlq' }] });
    const verifier = statementsOf(template, 'InboxVerifierRole');
    expect(JSON.stringify(verifier)).toContain('table/existing-inbox');
    expect(JSON.stringify(verifier)).toContain('secret:answerline/signing-??????');
  });

  test('serves several providers at their own paths with their own secrets', () => {
    const { template, inbox } = build({
      providers: [WebhookProvider.answerline(), WebhookProvider.answerline({ name: 'answerline-eu', pastTolerance: Duration.minutes(1) })],
    });
    template.resourceCountIs('AWS::ApiGatewayV2::Route', 2);
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /hooks/answerline-eu' });
    template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    const providers = JSON.parse(JSON.stringify(settingsOf(template, 'InboxVerifier')[Env.PROVIDERS]));
    expect(JSON.stringify(providers)).toContain('\\"tolerancePastSeconds\\":60');
    expect(inbox.urlFor('answerline-eu')).toContain('/hooks/answerline-eu');
    expect(() => inbox.signingSecretFor('stripe')).toThrow(/no provider named "stripe"/);
  });

  test('refuses invalid props with one error naming every problem', () => {
    const stack = new Stack(new App(), 'Bad');
    const table = dynamodb.Table.fromTableName(stack, 'T', 't');
    expect(
      () =>
        new WebhookInbox(stack, 'Inbox', {
          providers: [WebhookProvider.answerline(), WebhookProvider.answerline(), WebhookProvider.answerline({ name: 'Bad_Name' })],
          inboxTable: table,
          inboxTableSettings: {},
          maxReceiveCount: 0,
          processorBatchSize: 11,
          maxBodySize: Size.mebibytes(7),
          inlineBodyLimit: Size.kibibytes(400),
          rejectionRecordsPerMinute: 1001,
          rejectionRecordSamplePercent: 0,
          rejectionRecordRetention: Duration.hours(12),
        }),
    ).toThrow(
      /"answerline" is served twice[\s\S]*"Bad_Name" is not a valid name[\s\S]*inboxTableSettings: not allowed with inboxTable[\s\S]*maxReceiveCount[\s\S]*processorBatchSize[\s\S]*maxBodySize[\s\S]*inlineBodyLimit[\s\S]*rejectionRecordsPerMinute: must be a whole number from 0 to 1000, got 1001[\s\S]*rejectionRecordSamplePercent: must be a whole number from 1 to 100, got 0[\s\S]*rejectionRecordRetention \(days\): must be a whole number from 1 to 365, got 0.5/,
    );
  });

  test('a refusal at synth is a ValidationError whose message starts with the path of the construct refused', () => {
    const stack = new Stack(new App(), 'Refused');
    const refusal = (act: () => unknown): Error & { constructPath?: string } => {
      try {
        act();
      } catch (error) {
        return error as Error;
      }
      throw new Error('nothing was refused');
    };
    const props = refusal(() => new WebhookInbox(stack, 'Empty', { providers: [] }));
    expect(props).toMatchObject({ name: 'ValidationError', constructPath: 'Refused/Empty' });
    expect(props.message).toBe('Refused/Empty: Invalid WebhookInbox props:\n- providers: at least one provider is required');
    const inbox = new WebhookInbox(stack, 'Inbox', { providers: [WebhookProvider.stripe()], publishEvents: false });
    expect(refusal(() => inbox.urlFor('github')).message).toBe('Refused/Inbox: this inbox serves no provider named "github"');
    expect(refusal(() => inbox.signingSecretFor('github')).message).toBe('Refused/Inbox: this inbox serves no provider named "github" with a signing secret');
    expect(refusal(() => inbox.onJobResult('Results')).message).toBe('Refused/Inbox: Results: this inbox publishes no events (publishEvents is false)');
    expect(refusal(() => new WebhookInboxAlarms(stack, 'Alarms', { inbox, quarantinedThreshold: 0 })).message).toBe(
      'Refused/Alarms: Invalid WebhookInbox alarms:\n- alarms.quarantinedThreshold: must be a positive number, got 0',
    );
  });

  test('rejection records: the limit, the sample and the retention reach the verifier as set', () => {
    const { template } = build({ rejectionRecordsPerMinute: 0, rejectionRecordSamplePercent: 25, rejectionRecordRetention: Duration.days(2) });
    const env = settingsOf(template, 'InboxVerifier');
    expect(env[Env.REJECTION_RECORDS_PER_MINUTE]).toBe('0');
    expect(env[Env.REJECTION_SAMPLE_PERCENT]).toBe('25');
    expect(env[Env.REJECTION_RETENTION_SECONDS]).toBe(String(2 * 86400));
  });
});

describe('retention', () => {
  test.each([
    [
      'shorter than the dead-letter queue keeps a message',
      () => ({ retention: Duration.days(7) }),
      /retention: must be at least 14 days \(the dead-letter queue's retention: a message redriven from it must find its row\), got 7 days/,
    ],
    [
      'shorter than a provider may still deliver',
      () => ({ retention: Duration.days(2), deadLetterQueueProps: { retentionPeriod: Duration.days(1) }, providers: [WebhookProvider.stripe()] }),
      /retention: must be at least 3 days \(how long stripe may still deliver an event\)/,
    ],
    [
      'shorter than a polling horizon',
      (stack: Stack) => ({
        retention: Duration.days(20),
        providers: [WebhookProvider.answerline({ polling: { apiKeySecret: new secretsmanager.Secret(stack, 'Key'), horizon: Duration.days(25) } })],
      }),
      /retention: must be at least 25 days \(answerline's polling horizon\)/,
    ],
    [
      "shorter than a provider's timestamp tolerances",
      () => ({
        retention: Duration.days(1),
        deadLetterQueueProps: { retentionPeriod: Duration.hours(1) },
        providers: [WebhookProvider.pagerduty({ pastTolerance: Duration.days(2), futureTolerance: Duration.minutes(10) })],
      }),
      /retention: must be at least 2 days 10 minutes \(pagerduty's pastTolerance \(2 days\) \+ futureTolerance \(10 minutes\): a replay signed inside them must find its row, or it is processed again\), got 1 day/,
    ],
    [
      'shorter than sweepAfter and a reconcile interval',
      () => ({
        retention: Duration.days(1),
        deadLetterQueueProps: { retentionPeriod: Duration.hours(1) },
        providers: [WebhookProvider.pagerduty()],
        sweepAfter: Duration.hours(23),
        reconcileSchedule: events.Schedule.rate(Duration.hours(2)),
        deadlineWarning: Duration.hours(2),
      }),
      /retention: must be at least 1 day 1 hour \(sweepAfter \(23 hours\) \+ the reconcile schedule's rate \(2 hours\): a row whose enqueue failed is enqueued again only then\), got 1 day/,
    ],
  ])('is refused at synth when %s: a row must outlive whatever can still reach it', (_name, props: (stack: Stack) => WebhookInboxProps, problem) => {
    const stack = new Stack(new App(), 'Retention');
    expect(() => new WebhookInbox(stack, 'Inbox', props(stack))).toThrow(problem);
  });

  test('tolerances and sweepAfter that are tokens are not compared with it', () => {
    const stack = new Stack(new App(), 'RetentionTokens');
    const seconds = new CfnParameter(stack, 'Seconds', { type: 'Number' }).valueAsNumber;
    const props: WebhookInboxProps = {
      retention: Duration.days(4),
      providers: [WebhookProvider.stripe({ pastTolerance: Duration.seconds(seconds), futureTolerance: Duration.seconds(seconds) })],
      sweepAfter: Duration.seconds(seconds),
      deadLetterQueueProps: { retentionPeriod: Duration.days(1) },
    };
    expect(() => new WebhookInbox(stack, 'Inbox', props)).not.toThrow();
  });

  test('the default (30 days) outlives the dead-letter queue and every preset', () => {
    const stack = new Stack(new App(), 'RetentionDefault');
    const providers = [
      WebhookProvider.answerline(),
      WebhookProvider.echonova(),
      WebhookProvider.standardWebhooks(),
      WebhookProvider.stripe(),
      WebhookProvider.github(),
      WebhookProvider.slack(),
      WebhookProvider.zoom(),
    ];
    expect(() => new WebhookInbox(stack, 'Inbox', { providers })).not.toThrow();
  });
});

describe('sweepAfter', () => {
  const sweepAfterOfTemplate = (template: Template): string => settingsOf(template, 'InboxReconciler')[Env.SWEEP_AFTER_SECONDS];

  test.each([
    [
      '0 seconds',
      {},
      Duration.seconds(0),
      /sweepAfter: must be at least 2 minutes 10 seconds, the reconciler's timeout \(2 minutes\) plus 10 seconds: .*got 0 seconds/,
    ],
    ['the reconciler timeout itself', {}, Duration.minutes(2), /sweepAfter: must be at least 2 minutes 10 seconds.*got 2 minutes/],
    [
      'below the verifier timeout when it is the longest',
      {
        verifierFunctionProps: { timeout: Duration.seconds(30) },
        processorFunctionProps: { timeout: Duration.seconds(20) },
        reconcilerFunctionProps: { timeout: Duration.seconds(20) },
      },
      Duration.seconds(30),
      /sweepAfter: must be at least 40 seconds, the verifier's timeout \(30 seconds\) plus 10 seconds.*shorten the verifier's timeout/,
    ],
    [
      'below a longer processor timeout given as an override',
      { processorFunctionProps: { timeout: Duration.minutes(6) } },
      Duration.minutes(5),
      /sweepAfter: must be at least 6 minutes 10 seconds, the processor's timeout \(6 minutes\)/,
    ],
  ])('%s is refused at synth, naming the floor the function timeouts set and why', (_name, overrides: WebhookInboxProps, sweepAfter, problem) => {
    const stack = new Stack(new App(), 'SweepAfter');
    const error = (() => {
      try {
        new WebhookInbox(stack, 'Inbox', { ...overrides, sweepAfter });
        return '';
      } catch (thrown) {
        return (thrown as Error).message;
      }
    })();
    expect(error).toMatch(problem);
    expect(error).toMatch(/a sweep that read the index before that write would move its watermark past the row/);
  });

  test('the floor follows the timeouts: shortened, a shorter sweepAfter is accepted, down to the floor exactly', () => {
    const short = { reconcilerFunctionProps: { timeout: Duration.seconds(35) } };
    expect(sweepAfterOfTemplate(build({ ...short, sweepAfter: Duration.seconds(45) }).template)).toBe('45');
    expect(() => build({ ...short, sweepAfter: Duration.seconds(44) })).toThrow(
      /sweepAfter: must be at least 45 seconds, the reconciler's timeout \(35 seconds\)/,
    );
  });

  test('the default is 5 minutes, raised to the floor when a function timeout is longer', () => {
    expect(sweepAfterOfTemplate(build().template)).toBe(String(Defaults.SWEEP_AFTER_SECONDS));
    expect(sweepAfterOfTemplate(build({ reconcilerFunctionProps: { timeout: Duration.minutes(15) } }).template)).toBe(String(15 * 60 + 10));
  });

  test('a sweepAfter or a timeout that is a token is not compared', () => {
    const stack = new Stack(new App(), 'SweepAfterTokens');
    const seconds = new CfnParameter(stack, 'Seconds', { type: 'Number' }).valueAsNumber;
    expect(() => new WebhookInbox(stack, 'A', { sweepAfter: Duration.seconds(seconds) })).not.toThrow();
    expect(
      () => new WebhookInbox(stack, 'B', { sweepAfter: Duration.seconds(1), reconcilerFunctionProps: { timeout: Duration.seconds(seconds) } }),
    ).not.toThrow();
  });
});

describe("the pending index's shards and the sweep", () => {
  const opsConfig = (template: Template): string =>
    JSON.stringify((Object.values(template.findOutputs('*')).find((o: any) => String(o.Description).startsWith(OPS_CONFIG_OUTPUT_DESCRIPTION)) as any).Value);

  test('the default count (16) is what every handler falls back to: no variable, no ops-config field', () => {
    const { template } = build();
    for (const fn of ['InboxVerifier', 'InboxProcessor', 'InboxReconciler']) expect(settingsOf(template, fn)).not.toHaveProperty(Env.PENDING_SHARDS);
    expect(opsConfig(template)).not.toContain('pendingShards');
  });

  test('a count of its own reaches the functions that write and read the index, and the ops CLI that revives rows', () => {
    const { template } = build({ pendingIndexShards: 64 });
    expect(settingsOf(template, 'InboxVerifier')[Env.PENDING_SHARDS]).toBe('64');
    expect(settingsOf(template, 'InboxReconciler')[Env.PENDING_SHARDS]).toBe('64');
    // The processor only moves entries within their shard.
    expect(settingsOf(template, 'InboxProcessor')).not.toHaveProperty(Env.PENDING_SHARDS);
    expect(opsConfig(template)).toContain('\\"pendingShards\\":64');
  });

  test.each([
    [15, /pendingIndexShards: must be a whole number from 16 to 100, got 15/],
    [101, /pendingIndexShards: must be a whole number from 16 to 100, got 101/],
    [32.5, /pendingIndexShards: must be a whole number from 16 to 100, got 32.5/],
  ])('a count of %s is refused at synth, naming the prop and its range', (pendingIndexShards, problem) => {
    expect(() => build({ pendingIndexShards })).toThrow(problem);
  });

  test('a count that is a token is not checked', () => {
    const stack = new Stack(new App(), 'ShardTokens');
    const count = new CfnParameter(stack, 'Shards', { type: 'Number' }).valueAsNumber;
    expect(() => new WebhookInbox(stack, 'Inbox', { pendingIndexShards: count })).not.toThrow();
  });

  test('sweepBatchSize is ignored, with a warning that says so; the reconciler is not given it', () => {
    const { stack, template } = build({ sweepBatchSize: 500 });
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('sweepBatchSize is deprecated and ignored'));
    expect(warnings).toHaveLength(1);
    expect(Object.keys(settingsOf(template, 'InboxReconciler')).filter((name) => name.includes('BATCH'))).toEqual([Env.POLL_BATCH_SIZE]);
  });
});

describe('results lifecycle', () => {
  const processorEnv = (template: Template) => settingsOf(template, 'InboxProcessor');
  const lifecycleRules = (template: Template) => resourceNamed(template, 'AWS::S3::Bucket', 'InboxBodyBucket').resource.Properties.LifecycleConfiguration.Rules;

  test('result items expire by TTL on expiresAt, after the retention by default; their objects a day after, with the bodies, in one rule', () => {
    const { template } = build();
    const { resource } = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxResultsTable');
    expect(resource.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(processorEnv(template)[Env.RESULT_RETENTION_SECONDS]).toBe(String(Defaults.RETENTION_DAYS * 86_400));
    expect(lifecycleRules(template)).toEqual([{ ExpirationInDays: Defaults.RETENTION_DAYS + 1, Status: 'Enabled' }]);
  });

  test('a longer resultRetention: the processor writes it, and result objects expire a day after it, bodies a day after the rows', () => {
    const { template } = build({ retention: Duration.days(20), resultRetention: Duration.days(90) });
    expect(processorEnv(template)[Env.RESULT_RETENTION_SECONDS]).toBe(String(90 * 86_400));
    expect(lifecycleRules(template)).toEqual([
      { Prefix: 'bodies/', ExpirationInDays: 21, Status: 'Enabled' },
      { Prefix: 'resources/', ExpirationInDays: 21, Status: 'Enabled' },
      { Prefix: 'responses/', ExpirationInDays: 91, Status: 'Enabled' },
    ]);
    const output = Object.values(template.findOutputs('*')).find((o: any) => String(o.Description).startsWith(OPS_CONFIG_OUTPUT_DESCRIPTION)) as any;
    expect(JSON.stringify(output.Value)).toContain(`\\"resultRetentionSeconds\\":${90 * 86_400}`);
  });

  test('a resultRetention shorter than the retention is refused at synth, saying why', () => {
    expect(() => build({ retention: Duration.days(30), resultRetention: Duration.days(7) })).toThrow(
      /resultRetention: must be at least retention \(30 days\): a delivery still kept, replayed or redelivered, must find its job's result, or the job is decided anew; got 7 days/,
    );
  });
});

describe('large bodies', () => {
  test('go to an encrypted, TLS-only, private bucket whose objects expire a day after their rows', () => {
    const { template } = build({ retention: Duration.days(20) });
    const { id, resource } = resourceNamed(template, 'AWS::S3::Bucket', 'InboxBodyBucket');
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.Properties).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LifecycleConfiguration: { Rules: [{ ExpirationInDays: 21, Status: 'Enabled' }] },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: id },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const objects = (statements: any[], action: string) => JSON.stringify(statements.filter((s) => [s.Action].flat().includes(action)).map((s) => s.Resource));
    expect(objects(statementsOf(template, 'InboxVerifierRole'), 's3:PutObject')).toContain('/bodies/*');
    expect(objects(statementsOf(template, 'InboxProcessorRole'), 's3:GetObject')).toContain('/bodies/*');
    expect(objects(statementsOf(template, 'InboxProcessorRole'), 's3:PutObject')).toContain('/responses/*');
    expect(objects(statementsOf(template, 'InboxProcessorRole'), 's3:PutObject')).toContain('/resources/*');
  });

  test('need no bucket when every accepted body fits a row', () => {
    const { template } = build({ maxBodySize: Size.kibibytes(8) });
    template.resourceCountIs('AWS::S3::Bucket', 0);
    const env = settingsOf(template, 'InboxVerifier');
    expect(env[Env.BODY_BUCKET]).toBeUndefined();
    expect(JSON.stringify(statementsOf(template, 'InboxVerifierRole'))).not.toContain('s3:');
  });

  test('grantReadResults and grantReadInbox reach the objects of their own prefix only', () => {
    const stack = new Stack(new App(), 'BodyGrants');
    const inbox = new WebhookInbox(stack, 'Inbox');
    const results = new iam.Role(stack, 'ResultsReader', { assumedBy: new iam.AccountRootPrincipal() });
    const rows = new iam.Role(stack, 'InboxReader', { assumedBy: new iam.AccountRootPrincipal() });
    inbox.grantReadResults(results);
    inbox.grantReadInbox(rows);
    const template = templateOf(stack);
    expect(JSON.stringify(statementsOf(template, 'ResultsReader'))).toContain('/responses/*');
    expect(JSON.stringify(statementsOf(template, 'ResultsReader'))).not.toContain('/bodies/*');
    expect(JSON.stringify(statementsOf(template, 'InboxReader'))).toContain('/bodies/*');
  });
});

test("the grants on an app's principals and the invocations of its functions name exactly what is used", () => {
  const stack = new Stack(new App(), 'ExactGrants');
  const fn = (id: string) =>
    new lambda.Function(stack, id, { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('x') });
  const processing = fn('Processing');
  const register = fn('Register');
  const inbox = new WebhookInbox(stack, 'Inbox', {
    providers: [WebhookProvider.standardWebhooks({ rotation: { registerFunction: register } })],
    processingFunction: processing,
  });
  const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() });
  inbox.grantReadResults(reader);
  inbox.grantReadInbox(reader);
  const template = templateOf(stack);
  const readerStatements = JSON.stringify(statementsOf(template, 'Reader'));
  // Reads by key, objects by key: nothing lists the bucket, scans a table or reaches an index.
  for (const excess of ['s3:List', 's3:GetBucket', 'dynamodb:Scan', 'dynamodb:GetRecords', '/index/']) expect(readerStatements).not.toContain(excess);
  expect([...new Set(actionsOf(statementsOf(template, 'Reader')))].sort()).toEqual([
    'dynamodb:BatchGetItem',
    'dynamodb:GetItem',
    'dynamodb:Query',
    's3:GetObject',
  ]);
  // The handlers invoke the unqualified ARN: no `:*` of every version and alias.
  for (const [role, target] of [
    ['InboxProcessorRole', 'Processing'],
    ['InboxRotatorRole', 'Register'],
  ]) {
    const invokes = statementsOf(template, role).filter((statement) => JSON.stringify(statement.Action).includes('lambda:InvokeFunction'));
    expect(invokes.map((statement) => statement.Resource)).toEqual([{ 'Fn::GetAtt': [resourceNamed(template, 'AWS::Lambda::Function', target).id, 'Arn'] }]);
  }
});

describe('provider presets', () => {
  const providersOf = (template: Template) =>
    JSON.parse(
      settingsOf(template, 'InboxVerifier')
        [Env.PROVIDERS]['Fn::Join'][1].map((part: unknown) => (typeof part === 'string' ? part : '<token>'))
        .join(''),
    );

  test('every preset is served at its own path with its adapter, secret and tolerances', () => {
    const { template } = build({
      providers: [
        WebhookProvider.answerline(),
        WebhookProvider.echonova({ pastTolerance: Duration.seconds(60), futureTolerance: Duration.seconds(10) }),
        WebhookProvider.standardWebhooks({ name: 'openai', previousSecretGracePeriod: Duration.hours(2) }),
        WebhookProvider.stripe(),
        WebhookProvider.github(),
        WebhookProvider.hmac({
          name: 'shopify',
          signatureHeader: 'X-Shopify-Hmac-Sha256',
          signatureEncoding: SignatureEncoding.BASE64,
          idHeader: 'X-Shopify-Webhook-Id',
          acknowledgeUnsignedIdHeader: true,
        }),
      ],
    });
    for (const path of ['answerline', 'echonova', 'openai', 'stripe', 'github', 'shopify']) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: `POST /hooks/${path}` });
    }
    template.resourceCountIs('AWS::SecretsManager::Secret', 6);
    const providers = providersOf(template);
    expect(providers.map((p: any) => [p.name, p.adapter])).toEqual([
      ['answerline', 'answerline'],
      ['echonova', 'echonova'],
      ['openai', 'standard-webhooks'],
      ['stripe', 'stripe'],
      ['github', 'github'],
      ['shopify', 'hmac'],
    ]);
    expect(providers[1]).toMatchObject({ tolerancePastSeconds: 60, toleranceFutureSeconds: 10 });
    expect(providers[2]).toMatchObject({ previousSecretGraceSeconds: 7200 });
    expect(providers[0]).toMatchObject({ previousSecretGraceSeconds: 86400 });
    expect(providers[5].hmac).toEqual({
      signatureHeader: 'x-shopify-hmac-sha256',
      algorithm: 'sha256',
      encoding: 'base64',
      prefix: '',
      signedContent: '{body}',
      idHeader: 'x-shopify-webhook-id',
      acknowledgeUnsignedIdHeader: true,
      secretEncoding: 'utf8',
    });
  });

  test('an idHeader that signedContent does not cover is refused at synth unless acknowledged: a replay under a fresh id would be new', () => {
    const shopify = { signatureHeader: 'X-Shopify-Hmac-Sha256', idHeader: 'X-Shopify-Webhook-Id' };
    expect(() => build({ providers: [WebhookProvider.hmac({ name: 'shopify', ...shopify })] })).toThrow(
      /providers: shopify: hmac: idHeader is not covered by signedContent[\s\S]*acknowledgeUnsignedIdHeader/,
    );
    expect(() => build({ providers: [WebhookProvider.hmac({ name: 'shopify', ...shopify, acknowledgeUnsignedIdHeader: true })] })).not.toThrow();
    expect(() => build({ providers: [WebhookProvider.hmac({ name: 'acme', ...shopify, signedContent: '{id}.{body}' })] })).not.toThrow();
  });

  test("a provider's source allow-list reaches the verifier as given, and a range that is not one is refused at synth", () => {
    const { template } = build({ providers: [WebhookProvider.github({ allowedSources: ['192.30.252.0/22', '2a0a:a440::/29'] })] });
    expect(providersOf(template)[0].allowedSourceCidrs).toEqual(['192.30.252.0/22', '2a0a:a440::/29']);
    expect(() => build({ providers: [WebhookProvider.github({ allowedSources: ['192.30.252.0/33', 'github.com'] })] })).toThrow(
      /providers: github: allowedSources: \[0\] "192.30.252.0\/33" is not a CIDR range[\s\S]*\[1\] "github.com" is not a CIDR range/,
    );
  });

  test("a provider's tenant path reaches the handlers as given, none by default, and a path that is not a dotted path is refused at synth", () => {
    const { template } = build({ providers: [WebhookProvider.stripe({ tenantJsonPath: 'data.object.customer' }), WebhookProvider.github()] });
    expect(providersOf(template).map((provider: { tenantJsonPath?: string }) => provider.tenantJsonPath)).toEqual(['data.object.customer', undefined]);
    expect(() => build({ providers: [WebhookProvider.stripe({ tenantJsonPath: 'data..customer' }), WebhookProvider.github({ tenantJsonPath: '' })] })).toThrow(
      /providers: stripe: tenantJsonPath "data\.\.customer" is not a dotted path[\s\S]*providers: github: tenantJsonPath must be a non-empty dotted path/,
    );
  });

  test('only a provider that checks the endpoint with a GET (Meta) gets a GET route beside its POST; its secret is not rotated here', () => {
    const { template } = build({ providers: [WebhookProvider.meta(), WebhookProvider.github()] });
    const routeKeys = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (route) => (route as { Properties: { RouteKey: string } }).Properties.RouteKey,
    );
    expect(routeKeys.sort()).toEqual(['GET /hooks/meta', 'POST /hooks/github', 'POST /hooks/meta']);
    expect(() => build({ providers: [WebhookProvider.meta({ rotation: { schedule: Duration.days(30) } })] })).toThrow(
      /providers: meta: rotation: this provider's secret is chosen in its own dashboard/,
    );
  });

  test('Square: the notification URL reaches the runtime as written; a missing or plain-HTTP one is refused at synth, one built from a token is left to cold start', () => {
    const url = 'https://hooks.example.com/hooks/square';
    const providers = providersOf(build({ providers: [WebhookProvider.square({ notificationUrl: url }), WebhookProvider.discord()] }).template);
    expect(providers.map((p: any) => [p.name, p.adapter, p.notificationUrl])).toEqual([
      ['square', 'square', url],
      ['discord', 'discord', undefined],
    ]);
    expect(() => build({ providers: [WebhookProvider.square({ notificationUrl: 'http://hooks.example.com/hooks/square' })] })).toThrow(
      /providers: square: notificationUrl must be an https:\/\/ URL/,
    );
    expect(() => build({ providers: [WebhookProvider.square({ notificationUrl: '' })] })).toThrow(/providers: square: notificationUrl is required/);
    const domain = Lazy.string({ produce: () => 'hooks.example.com' });
    expect(() => build({ providers: [WebhookProvider.square({ notificationUrl: `https://${domain}/hooks/square` })] })).not.toThrow();
  });

  test("Discord: served on POST only; its stored value is the application's public key, so rotation is refused at synth", () => {
    build({ providers: [WebhookProvider.discord()] }).template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /hooks/discord' }, 1);
    expect(() => build({ providers: [WebhookProvider.discord({ rotation: { schedule: Duration.days(30) } })] })).toThrow(
      /providers: discord: rotation: the stored value is the Discord application's public key, not a secret: there is nothing to rotate/,
    );
  });

  test('Slack and Zoom: served on POST only (their URL checks are signed POSTs), with their adapters and the default 300 s tolerance', () => {
    const { template } = build({ providers: [WebhookProvider.slack(), WebhookProvider.zoom({ name: 'zoom-meetings' })] });
    for (const path of ['slack', 'zoom-meetings']) {
      template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: `POST /hooks/${path}` }, 1);
      template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: `GET /hooks/${path}` }, 0);
    }
    expect(providersOf(template).map((p: any) => [p.name, p.adapter, p.tolerancePastSeconds])).toEqual([
      ['slack', 'slack', 300],
      ['zoom-meetings', 'zoom', 300],
    ]);
  });

  test("Twilio's webhook URL, which it signs, reaches the verifier as configured; one that is not https is refused at synth", () => {
    const { template } = build({ providers: [WebhookProvider.twilio({ webhookUrl: 'https://hooks.example.com/hooks/twilio' })] });
    expect(providersOf(template)[0]).toMatchObject({ adapter: 'twilio', notificationUrl: 'https://hooks.example.com/hooks/twilio' });
    expect(() => build({ providers: [WebhookProvider.twilio({ webhookUrl: 'http://hooks.example.com/hooks/twilio' })] })).toThrow(
      /providers: twilio: notificationUrl/,
    );
  });

  test("Twilio's webhook URL keeps the query configured in Twilio as written; one naming bodySHA256, which Twilio appends itself, is refused at synth", () => {
    const webhookUrl = 'https://hooks.example.com/prod/hooks/twilio?tenant=acme&at=10:30&debug&note=a%20b';
    const { template } = build({ providers: [WebhookProvider.twilio({ webhookUrl })], ingress: WebhookIngress.restApi() });
    expect(providersOf(template)[0]).toMatchObject({ adapter: 'twilio', notificationUrl: webhookUrl });
    expect(() => build({ providers: [WebhookProvider.twilio({ webhookUrl: `${webhookUrl}&bodySHA256=${'0'.repeat(64)}` })] })).toThrow(
      /providers: twilio: notificationUrl \(webhookUrl\) names bodySHA256 in its query: Twilio appends it/,
    );
  });

  test('SNS: no signing secret is created, granted or output; the topics reach the verifier; POST only; its tolerance covers the hour of retries', () => {
    const topicArn = 'arn:aws:sns:eu-west-1:123456789012:orders';
    const { template, inbox } = build({ providers: [WebhookProvider.sns({ topicArns: [topicArn] }), WebhookProvider.github()] });
    expect(providersOf(template).map((p: any) => [p.name, p.adapter, p.secretId === undefined, p.topicArns, p.tolerancePastSeconds])).toEqual([
      ['sns', 'sns', true, [topicArn], 3_900],
      ['github', 'github', false, undefined, 300],
    ]);
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    expect(Object.keys(template.findOutputs('*')).filter((key) => key.includes('SigningSecretArn'))).toEqual([
      expect.stringContaining('GithubSigningSecretArn'),
    ]);
    template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /hooks/sns' }, 1);
    template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: 'GET /hooks/sns' }, 0);
    expect(inbox.urlFor('sns')).toContain('/hooks/sns');
    expect(() => inbox.signingSecretFor('sns')).toThrow(/no provider named "sns" with a signing secret/);
  });

  test('a polled-only provider (message batches) gets no route, no signing secret and no outputs of its own; its API key is read by the reconciler only', () => {
    const stack = new Stack(new App(), 'PolledOnly', { env: { account: '111111111111', region: 'eu-west-1' } });
    const apiKeySecret = new secretsmanager.Secret(stack, 'BatchesKey');
    const inbox = new WebhookInbox(stack, 'Inbox', {
      providers: [WebhookProvider.messageBatches({ apiKeySecret }, { name: 'batches' }), WebhookProvider.github()],
    });
    const template = templateOf(stack);
    // Routes: the GitHub provider's only.
    expect(Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((route: any) => route.Properties.RouteKey)).toEqual(['POST /hooks/github']);
    // Secrets: GitHub's signing secret and the batch API's key; none made for the batches provider.
    expect(Object.keys(template.findResources('AWS::SecretsManager::Secret')).sort()).toEqual([
      expect.stringMatching(/^BatchesKey/),
      expect.stringMatching(/^InboxGithubSigningSecret/),
    ]);
    expect(providersOf(template).map((p: any) => [p.name, p.secretId === undefined])).toEqual([
      ['batches', true],
      ['github', false],
    ]);
    const outputs = Object.keys(template.findOutputs('*'));
    expect(outputs.filter((key) => /Batches(Url|SigningSecretArn)/.test(key))).toEqual([]);
    expect(outputs.filter((key) => /Github(Url|SigningSecretArn)/.test(key))).toHaveLength(2);
    // The key is granted to the reconciler, never to the verifier.
    const keyId = resourceNamed(template, 'AWS::SecretsManager::Secret', 'BatchesKey').id;
    const reads = (role: string) => statementsOf(template, role).filter((s) => JSON.stringify(s.Resource).includes(keyId));
    expect(reads('InboxReconcilerRole')).not.toEqual([]);
    expect(reads('InboxVerifierRole')).toEqual([]);
    expect(() => inbox.urlFor('batches')).toThrow(/"batches" is polled only: it posts nothing and has no URL/);
    expect(() => inbox.signingSecretFor('batches')).toThrow(/no provider named "batches" with a signing secret/);
  });

  test('a polled-only provider refuses a signing secret, a rotation and source ranges at synth, naming each', () => {
    const stack = new Stack(new App(), 'PolledOnlyProps');
    const apiKeySecret = new secretsmanager.Secret(stack, 'BatchesKey');
    const signingSecret = new secretsmanager.Secret(stack, 'Given');
    const provider = WebhookProvider.messageBatches({ apiKeySecret }, { name: 'batches', signingSecret, rotation: {}, allowedSources: ['192.0.2.0/24'] });
    expect(() => new WebhookInbox(stack, 'Inbox', { providers: [provider] })).toThrow(
      /providers: batches: signingSecret: this provider sends no webhooks[\s\S]*providers: batches: rotation: [\s\S]*providers: batches: allowedSources: /,
    );
  });

  test('SNS: no topic, or one that is no SNS topic ARN of a served partition, is refused at synth; a topic of the app (a token) is left to cold start', () => {
    expect(() => build({ providers: [WebhookProvider.sns({ topicArns: [] })] })).toThrow(/providers: sns: topicArns is required/);
    expect(() =>
      build({ providers: [WebhookProvider.sns({ topicArns: ['arn:aws:sqs:us-east-1:123456789012:q', 'arn:aws-iso:sns:us-iso-east-1:123456789012:t'] })] }),
    ).toThrow(/topicArns \[0\] "arn:aws:sqs:us-east-1:123456789012:q" is not an SNS topic ARN[\s\S]*\[1\] "arn:aws-iso:sns/);
    const stack = new Stack(new App(), 'Topics');
    const topic = new sns.Topic(stack, 'Orders');
    expect(() => new WebhookInbox(stack, 'Inbox', { providers: [WebhookProvider.sns({ topicArns: [topic.topicArn] })] })).not.toThrow();
  });

  test('a generic HMAC scheme that cannot work is refused at synth, naming the provider', () => {
    expect(() =>
      build({
        providers: [
          WebhookProvider.hmac({ name: 'no-body', signatureHeader: 'X-Sig', signedContent: '{timestamp}', idHeader: 'X-Id' }),
          WebhookProvider.hmac({ name: 'no-id', signatureHeader: 'X-Sig' }),
          WebhookProvider.hmac({ name: 'both-ids', signatureHeader: 'X-Sig', idHeader: 'X-Id', idJsonPath: 'id', signedContent: '{id}.{body}' }),
          WebhookProvider.hmac({ name: 'unsigned-ts', signatureHeader: 'X-Sig', idHeader: 'X-Id', timestampHeader: 'X-Ts' }),
        ],
      }),
    ).toThrow(
      /no-body: hmac: signedContent must contain \{body\} exactly once[\s\S]*no-body: hmac: signedContent uses \{timestamp\} but no timestampHeader[\s\S]*no-id: hmac: exactly one of idHeader and idJsonPath[\s\S]*both-ids: hmac: exactly one of idHeader and idJsonPath[\s\S]*unsigned-ts: hmac: timestampHeader is set but signedContent does not use \{timestamp\}/,
    );
  });
});

describe('signing secret rotation', () => {
  test('a provider with rotation gets a schedule on its secret, driven by one least-privilege rotator', () => {
    const stack = new Stack(new App(), 'Rotation');
    const register = lambda.Function.fromFunctionAttributes(stack, 'Register', {
      functionArn: 'arn:aws:lambda:eu-west-1:111111111111:function:register-with-provider',
      sameEnvironment: true,
    });
    const inbox = new WebhookInbox(stack, 'Inbox', {
      providers: [
        WebhookProvider.standardWebhooks({ rotation: { schedule: Duration.days(7), registerFunction: register } }),
        WebhookProvider.github({ rotation: {} }),
        WebhookProvider.answerline(),
      ],
    });
    expect(inbox.rotatorFunction).toBeDefined();
    const template = templateOf(stack);
    template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 2);
    const rotator = resourceNamed(template, 'AWS::Lambda::Function', 'InboxRotator');
    template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      SecretId: { Ref: resourceNamed(template, 'AWS::SecretsManager::Secret', 'InboxStandardWebhooksSigningSecret').id },
      RotationLambdaARN: { 'Fn::GetAtt': [rotator.id, 'Arn'] },
      RotationRules: { ScheduleExpression: 'rate(7 days)' },
    });
    template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', { RotationRules: { ScheduleExpression: 'rate(30 days)' } });
    const env = settingsOf(template, 'InboxRotator')[Env.ROTATED_SECRETS];
    expect(JSON.stringify(env)).toContain('\\"format\\":\\"whsec\\"');
    expect(JSON.stringify(env)).toContain('register-with-provider');
    expect(JSON.stringify(env)).not.toContain('Answerline');

    const statements = statementsOf(template, 'InboxRotatorRole');
    const secretActions = statements.filter((s) => JSON.stringify(s.Action).includes('secretsmanager:PutSecretValue'));
    expect(secretActions).toHaveLength(2);
    expect(JSON.stringify(secretActions)).not.toContain(resourceNamed(template, 'AWS::SecretsManager::Secret', 'InboxAnswerlineSigningSecret').id);
    expect(statements.some((s) => s.Action === 'lambda:InvokeFunction' && JSON.stringify(s.Resource).includes('register-with-provider'))).toBe(true);
  });

  test('without rotation no rotator is created', () => {
    const { template, inbox } = build();
    expect(inbox.rotatorFunction).toBeUndefined();
    template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 0);
    expect(inbox.rotationFailureQueue).toBeUndefined();
    expect(inbox.alarms.rotationFailures).toBeUndefined();
    template.resourceCountIs('AWS::Events::Rule', 1); // the reconcile schedule only
  });

  const rotatingInbox = (rotation: { rotateOnDeploy?: boolean } = {}) => {
    const stack = new Stack(new App(), 'Rotating', { env: { account: '111111111111', region: 'eu-west-1' } });
    const imported = secretsmanager.Secret.fromSecretPartialArn(stack, 'Imported', 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:github-hooks');
    const inbox = new WebhookInbox(stack, 'Inbox', {
      providers: [
        WebhookProvider.standardWebhooks({ rotation }),
        WebhookProvider.github({ signingSecret: imported, rotation: {} }),
        WebhookProvider.answerline(),
      ],
    });
    return { stack, inbox, template: Template.fromStack(stack) };
  };

  test('a deploy does not rotate (it would replace the secret the operator stored): RotateImmediatelyOnUpdate is false unless rotateOnDeploy', () => {
    const schedules = (template: Template) =>
      Object.values(template.findResources('AWS::SecretsManager::RotationSchedule')).map((schedule) => schedule.Properties.RotateImmediatelyOnUpdate);
    expect(schedules(rotatingInbox().template)).toEqual([false, false]);
    expect(schedules(rotatingInbox({ rotateOnDeploy: true }).template).sort()).toEqual([false, true]);
  });

  test('the schedule keeps the logical id aws-cdk-lib’s RotationSchedule gave it: an upgrade does not replace it (which turns rotation off and on)', () => {
    const { template } = rotatingInbox();
    const stack = new Stack(new App(), 'Before');
    const secret = new secretsmanager.Secret(stack, 'Secret');
    const rotator = new lambda.Function(stack, 'Rotator', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => {};'),
    });
    const before = new secretsmanager.RotationSchedule(new Construct(stack, 'Inbox'), 'StandardWebhooksSigningSecretRotation', {
      secret,
      rotationLambda: rotator,
    });
    const logicalId = stack.getLogicalId(before.node.defaultChild as secretsmanager.CfnRotationSchedule);
    expect(Object.keys(template.findResources('AWS::SecretsManager::RotationSchedule'))).toContain(logicalId);
  });

  test('Secrets Manager may invoke the rotator only for a rotated secret of this account, one permission each, made before its schedule', () => {
    const { template } = rotatingInbox();
    const permissions = Object.entries(template.findResources('AWS::Lambda::Permission')).filter(
      ([, permission]) => permission.Properties.Principal === 'secretsmanager.amazonaws.com',
    );
    expect(permissions).toHaveLength(2);
    const created = resourceNamed(template, 'AWS::SecretsManager::Secret', 'InboxStandardWebhooksSigningSecret').id;
    expect(permissions.map(([, permission]) => permission.Properties.SourceArn)).toEqual(
      expect.arrayContaining([{ Ref: created }, 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:github-hooks-??????']),
    );
    for (const [permissionId, permission] of permissions) {
      expect(permission.Properties.SourceAccount).toBe('111111111111');
      expect(permission.Properties.Action).toBe('lambda:InvokeFunction');
      const schedule = Object.values(template.findResources('AWS::SecretsManager::RotationSchedule')).find(
        (candidate) => JSON.stringify(candidate.Properties.SecretId) === JSON.stringify(permission.Properties.SourceArn).replace('-??????', ''),
      );
      expect(schedule?.DependsOn).toContain(permissionId);
    }
  });

  test('a failed rotation, or a failed test of the rotation function at a deploy, raises an alarm until an operator has read it', () => {
    const { stack, inbox, template } = rotatingInbox();
    // Secrets Manager reports both as CloudTrail service events on the default bus, naming the secret by its full ARN.
    const [rule] = Object.values(template.findResources('AWS::Events::Rule')).filter((candidate) => candidate.Properties.EventPattern);
    expect(rule.Properties.EventBusName).toBeUndefined();
    const created = resourceNamed(template, 'AWS::SecretsManager::Secret', 'InboxStandardWebhooksSigningSecret').id;
    expect(rule.Properties.EventPattern).toEqual({
      source: ['aws.secretsmanager'],
      'detail-type': ['AWS Service Event via CloudTrail'],
      detail: {
        eventSource: ['secretsmanager.amazonaws.com'],
        eventName: ['RotationFailed', 'TestRotationFailed'],
        // The inbox's own secrets only: an imported one known without its random suffix by its prefix.
        additionalEventData: { SecretId: [{ Ref: created }, { prefix: 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:github-hooks-' }] },
      },
    });
    const queueId = resourceNamed(template, 'AWS::SQS::Queue', 'InboxRotationFailures').id;
    expect(rule.Properties.Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } })]);
    expect(JSON.stringify(template.findResources('AWS::SQS::QueuePolicy'))).toContain('events.amazonaws.com');
    // The alarm watches the reports waiting in the queue: it stays raised until they are removed.
    expect(inbox.alarms.rotationFailures).toBeDefined();
    expect(inbox.alarms.all).toContain(inbox.alarms.rotationFailures);
    const alarm = template.findResources('AWS::CloudWatch::Alarm')[stack.getLogicalId(inbox.alarms.rotationFailures!.node.defaultChild as CfnElement)];
    expect(alarm.Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarm.Properties.AlarmDescription).toContain('docs/RUNBOOK.md#rotation-failures');
    expect(() =>
      build({ providers: [WebhookProvider.standardWebhooks({ rotation: {} })], alarms: { disabled: [InboxAlarm.ROTATION_FAILURES] } }),
    ).not.toThrow();
  });

  test('a schedule Secrets Manager cannot keep is refused at synth, naming the provider', () => {
    expect(() => build({ providers: [WebhookProvider.standardWebhooks({ rotation: { schedule: Duration.hours(3) } })] })).toThrow(
      /providers: standard-webhooks: rotation\.schedule: must be from 4 hours to 1000 days, got 3 hours/,
    );
    expect(() => build({ providers: [WebhookProvider.standardWebhooks({ rotation: { schedule: Duration.days(1001) } })] })).toThrow(
      /rotation\.schedule: must be from 4 hours to 1000 days, got 1001 days/,
    );
  });
});

describe('secrets encrypted with a customer-managed key', () => {
  const SIGNING = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:answerline/signing-AbCdEf';
  const KEY = 'arn:aws:kms:eu-west-1:111111111111:key/0c7f7f6e-3d1a-4b8e-9a55-6f0d2b1c9e42';
  /** Secrets Manager's own endpoint in the stack's region: the only way the key may be used. */
  const VIA_SECRETS_MANAGER = { StringEquals: { 'kms:ViaService': 'secretsmanager.eu-west-1.amazonaws.com' } };
  const stackIn = () => new Stack(new App(), 'Keys', { env: { account: '111111111111', region: 'eu-west-1' } });
  /** The statements on KMS keys of a role. */
  const keyStatements = (template: Template, role: string) =>
    statementsOf(template, role).filter((statement) => JSON.stringify(statement.Action).includes('kms:'));

  test('a signing secret imported with its key (Secret.fromSecretAttributes): the verifier and the rotator may use the key, through Secrets Manager only', () => {
    const stack = stackIn();
    const signingSecret = secretsmanager.Secret.fromSecretAttributes(stack, 'Signing', {
      secretCompleteArn: SIGNING,
      encryptionKey: kms.Key.fromKeyArn(stack, 'SigningKey', KEY),
    });
    new WebhookInbox(stack, 'Inbox', { providers: [WebhookProvider.answerline({ signingSecret, rotation: {} })] });
    const template = templateOf(stack);
    expect(keyStatements(template, 'InboxVerifierRole')).toEqual([{ Action: 'kms:Decrypt', Effect: 'Allow', Resource: KEY, Condition: VIA_SECRETS_MANAGER }]);
    expect(keyStatements(template, 'InboxRotatorRole')).toEqual([
      { Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Effect: 'Allow', Resource: KEY, Condition: VIA_SECRETS_MANAGER },
    ]);
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
  });

  test('API key secrets imported with their keys: the processor (authoritative read) and the reconciler (polling) may use theirs', () => {
    const stack = stackIn();
    const imported = (name: string) =>
      secretsmanager.Secret.fromSecretAttributes(stack, name, {
        secretCompleteArn: `arn:aws:secretsmanager:eu-west-1:111111111111:secret:${name}-AbCdEf`,
        encryptionKey: kms.Key.fromKeyArn(stack, `${name}Key`, KEY.replace('0c7f7f6e', name === 'Read' ? '11111111' : '22222222')),
      });
    new WebhookInbox(stack, 'Inbox', {
      providers: [
        WebhookProvider.answerline({ polling: { apiKeySecret: imported('Poll') } }),
        WebhookProvider.standardWebhooks({
          name: 'openai',
          authoritativeRead: { urlTemplate: 'https://api.openai.com/v1/responses/{id}', idJsonPath: 'data.id', apiKeySecret: imported('Read') },
        }),
      ],
    });
    const template = templateOf(stack);
    expect(keyStatements(template, 'InboxProcessorRole')).toEqual([
      { Action: 'kms:Decrypt', Effect: 'Allow', Resource: KEY.replace('0c7f7f6e', '11111111'), Condition: VIA_SECRETS_MANAGER },
    ]);
    expect(keyStatements(template, 'InboxReconcilerRole')).toEqual([
      { Action: 'kms:Decrypt', Effect: 'Allow', Resource: KEY.replace('0c7f7f6e', '22222222'), Condition: VIA_SECRETS_MANAGER },
    ]);
  });

  test('a secret imported without its key is warned about at synth, on the secret, saying to name a customer-managed key; an acknowledgement silences it', () => {
    const stack = stackIn();
    const signingSecret = secretsmanager.Secret.fromSecretCompleteArn(stack, 'Signing', SIGNING);
    const apiKeySecret = secretsmanager.Secret.fromSecretNameV2(stack, 'PollKey', 'answerline/api-key');
    const acknowledged = secretsmanager.Secret.fromSecretNameV2(stack, 'EchonovaSigning', 'echonova/signing');
    CdkAnnotations.of(acknowledged).acknowledgeWarning('cdk-webhook-inbox:importedSecretWithoutKey', 'encrypted with aws/secretsmanager');
    new WebhookInbox(stack, 'Inbox', {
      providers: [
        WebhookProvider.answerline({ signingSecret, rotation: {}, polling: { apiKeySecret } }),
        WebhookProvider.echonova({ signingSecret: acknowledged }),
        // Defined in the app: its construct says how it is encrypted.
        WebhookProvider.stripe({ signingSecret: new secretsmanager.Secret(stack, 'StripeSigning') }),
      ],
    });
    const annotations = Annotations.fromStack(stack);
    const warnings = annotations.findWarning('*', Match.anyValue()).map((warning) => [warning.id, String(warning.entry.data)]);
    expect(warnings.map(([id]) => id).sort()).toEqual(['/Keys/PollKey', '/Keys/Signing']);
    const [, signing] = warnings.find(([id]) => id === '/Keys/Signing')!;
    expect(signing).toContain('answerline: signingSecret is an imported secret without its encryption key');
    expect(signing).toContain('secretsmanager.Secret.fromSecretAttributes(scope, id, { secretCompleteArn, encryptionKey })');
    expect(signing).toContain('the verifier and the rotator get no kms:Decrypt');
    expect(signing).toContain('[ack: cdk-webhook-inbox:importedSecretWithoutKey]');
    expect(warnings.find(([id]) => id === '/Keys/PollKey')![1]).toContain('answerline: polling.apiKeySecret');
    // Nothing on a key is granted for a secret whose key is unknown.
    expect(keyStatements(templateOf(stack), 'InboxVerifierRole')).toEqual([]);
  });
});

describe('recovery by polling, effects and the authoritative read', () => {
  const apiKey = (stack: Stack, id: string) => secretsmanager.Secret.fromSecretNameV2(stack, id, `${id}/api-key`);

  test('providers with polling reach the reconciler with their horizons; it may read only their API keys', () => {
    const stack = new Stack(new App(), 'Polling');
    new WebhookInbox(stack, 'Inbox', {
      providers: [
        WebhookProvider.answerline({ polling: { apiKeySecret: apiKey(stack, 'answerline') } }),
        WebhookProvider.echonova({
          polling: { apiKeySecret: apiKey(stack, 'echonova'), taskUrlTemplate: 'https://api.echonova.ai/v1/jobs/{jobId}', horizon: Duration.hours(2) },
        }),
        WebhookProvider.stripe(),
      ],
      pollBatchSize: 20,
    });
    const template = templateOf(stack);
    const env = settingsOf(template, 'InboxReconciler');
    const polling = JSON.stringify(env[Env.POLLING]);
    expect(polling).toContain('https://api.answerline.dev/v1/async/task/{taskId}');
    expect(polling).toContain('\\"horizonSeconds\\":17405');
    expect(polling).toContain('\\"horizonSeconds\\":7200');
    expect(polling).not.toContain('stripe');
    expect(env[Env.POLL_BATCH_SIZE]).toBe('20');
    const secretReads = statementsOf(template, 'InboxReconcilerRole').filter((s) => JSON.stringify(s.Action).includes('secretsmanager:GetSecretValue'));
    expect(JSON.stringify(secretReads)).toContain('secret:answerline/api-key');
    expect(JSON.stringify(secretReads)).toContain('secret:echonova/api-key');
    expect(JSON.stringify(statementsOf(template, 'InboxProcessorRole'))).not.toContain('api-key');
  });

  test('polling that cannot work is refused at synth', () => {
    const stack = new Stack(new App(), 'BadPolling');
    expect(
      () =>
        new WebhookInbox(stack, 'Inbox', {
          providers: [
            WebhookProvider.echonova({ polling: { apiKeySecret: apiKey(stack, 'echonova') } }),
            WebhookProvider.answerline({ polling: { apiKeySecret: apiKey(stack, 'answerline'), taskUrlTemplate: 'http://api.example.com/{taskId}' } }),
            WebhookProvider.slack({ polling: { apiKeySecret: apiKey(stack, 'slack') } }),
          ],
        }),
    ).toThrow(
      /echonova: polling: taskUrlTemplate must contain[\s\S]*answerline: polling: taskUrlTemplate must be an https:\/\/ URL[\s\S]*slack: polling: only Answerline, Echonova, a message-batches API, GitHub and Stripe can be polled/,
    );
  });

  test('results are published to a new bus the processor may put events on; onJobResult subscribes to this inbox’s', () => {
    const stack = new Stack(new App(), 'Events');
    const inbox = new WebhookInbox(stack, 'Inbox', { inboxName: 'answers' });
    const target = new sqs.Queue(stack, 'Consumer');
    inbox.onJobResult('Results', { target: new targets.SqsQueue(target) });
    inbox.onWebhookReceived('Events');
    const template = templateOf(stack);
    const bus = resourceNamed(template, 'AWS::Events::EventBus', 'InboxEventBus');
    const put = statementsOf(template, 'InboxProcessorRole').find((s) => s.Action === 'events:PutEvents');
    expect(put.Resource).toEqual({ 'Fn::GetAtt': [bus.id, 'Arn'] });
    const env = settingsOf(template, 'InboxProcessor');
    expect(env[Env.EFFECT_BUS_NAME]).toEqual({ Ref: bus.id });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: bus.id },
      EventPattern: { source: ['cdk-webhook-inbox'], 'detail-type': ['JobResultDecided'], detail: { inbox: ['answers'] } },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [resourceNamed(template, 'AWS::SQS::Queue', 'Consumer').id, 'Arn'] } })],
    });
    template.hasResourceProperties('AWS::Events::Rule', { EventPattern: Match.objectLike({ 'detail-type': ['WebhookReceived'] }) });
  });

  test('the reconciler may put ResourceUnavailable events on the same bus; onResourceUnavailable subscribes to this inbox’s', () => {
    const stack = new Stack(new App(), 'Unavailable');
    const inbox = new WebhookInbox(stack, 'Inbox', { inboxName: 'answers', deadlineWarning: Duration.minutes(20) });
    const decisions = new sqs.Queue(stack, 'Decisions');
    inbox.onResourceUnavailable('Gone', { target: new targets.SqsQueue(decisions) });
    const template = templateOf(stack);
    const bus = resourceNamed(template, 'AWS::Events::EventBus', 'InboxEventBus');
    const put = statementsOf(template, 'InboxReconcilerRole').filter((s) => s.Action === 'events:PutEvents');
    expect(put).toEqual([expect.objectContaining({ Effect: 'Allow', Resource: { 'Fn::GetAtt': [bus.id, 'Arn'] } })]);
    const env = settingsOf(template, 'InboxReconciler');
    expect(env[Env.EFFECT_BUS_NAME]).toEqual({ Ref: bus.id });
    expect(env[Env.DEADLINE_WARNING_SECONDS]).toBe('1200');
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: bus.id },
      EventPattern: { source: ['cdk-webhook-inbox'], 'detail-type': ['ResourceUnavailable'], detail: { inbox: ['answers'] } },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [resourceNamed(template, 'AWS::SQS::Queue', 'Decisions').id, 'Arn'] } })],
    });
  });

  test('deadlineWarning: at least a minute and at least the reconcile schedule’s rate, so that a run falls inside it', () => {
    const build = (props: Partial<WebhookInboxProps>) => () => new WebhookInbox(new Stack(new App(), 'Warning'), 'Inbox', props);
    expect(build({ deadlineWarning: Duration.minutes(4) })).toThrow(
      /deadlineWarning: must be at least the reconcile schedule's rate \(5 minutes\), got 4 minutes/,
    );
    expect(build({ deadlineWarning: Duration.seconds(30), reconcileSchedule: events.Schedule.rate(Duration.minutes(1)) })).toThrow(
      /deadlineWarning: must be a whole number of seconds, at least 1 minute, got 30 seconds/,
    );
    expect(build({ deadlineWarning: Duration.minutes(20), reconcileSchedule: events.Schedule.rate(Duration.minutes(30)) })).toThrow(
      /\(30 minutes\), got 20 minutes/,
    );
    expect(build({ deadlineWarning: Duration.minutes(2), reconcileSchedule: events.Schedule.rate(Duration.minutes(1)) })).not.toThrow();
    const template = templateOf(Stack.of(build({})()));
    const env = settingsOf(template, 'InboxReconciler');
    expect(env[Env.DEADLINE_WARNING_SECONDS]).toBe(String(Defaults.DEADLINE_WARNING_SECONDS));
  });

  test('a message-batches provider is polled with {batchId} in its URL; onBatchChildSettled and onBatchSettled subscribe to their detail types', () => {
    const stack = new Stack(new App(), 'Batches');
    const apiKeySecret = new secretsmanager.Secret(stack, 'BatchesKey');
    const inbox = new WebhookInbox(stack, 'Inbox', {
      inboxName: 'answers',
      providers: [WebhookProvider.messageBatches({ apiKeySecret }, { name: 'batches' })],
    });
    inbox.onBatchChildSettled('Children');
    inbox.onBatchSettled('Summaries');
    const template = templateOf(stack);
    const env = settingsOf(template, 'InboxReconciler');
    expect(JSON.stringify(env[Env.POLLING])).toContain('https://api.anthropic.com/v1/messages/batches/{batchId}');
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['cdk-webhook-inbox'], 'detail-type': ['BatchChildSettled'], detail: { inbox: ['answers'] } },
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['cdk-webhook-inbox'], 'detail-type': ['BatchSettled'], detail: { inbox: ['answers'] } },
    });
  });

  test('the user’s processing function is invoked by the processor; without events there is no bus and no on* rule', () => {
    const stack = new Stack(new App(), 'UserCode');
    const handler = lambda.Function.fromFunctionAttributes(stack, 'UserCode', {
      functionArn: 'arn:aws:lambda:eu-west-1:111111111111:function:process-results',
      sameEnvironment: true,
    });
    const inbox = new WebhookInbox(stack, 'Inbox', { processingFunction: handler, publishEvents: false });
    const template = templateOf(stack);
    template.resourceCountIs('AWS::Events::EventBus', 0);
    const env = settingsOf(template, 'InboxProcessor');
    expect(env[Env.EFFECT_FUNCTION_ARN]).toBe('arn:aws:lambda:eu-west-1:111111111111:function:process-results');
    expect(env[Env.EFFECT_BUS_NAME]).toBeUndefined();
    expect(
      statementsOf(template, 'InboxProcessorRole').some((s) => s.Action === 'lambda:InvokeFunction' && JSON.stringify(s.Resource).includes('process-results')),
    ).toBe(true);
    expect(() => inbox.onJobResult('Nope')).toThrow(/publishes no events/);
  });

  test('with a processing function and publishEvents unset, the bus stays and synth says so; a chosen publishEvents is not remarked', () => {
    const processingFunction = (stack: Stack) =>
      lambda.Function.fromFunctionArn(stack, 'UserCode', 'arn:aws:lambda:eu-west-1:111111111111:function:process-results');
    const unset = new Stack(new App(), 'Unset');
    new WebhookInbox(unset, 'Inbox', { processingFunction: processingFunction(unset) });
    Template.fromStack(unset).resourceCountIs('AWS::Events::EventBus', 1);
    Annotations.fromStack(unset).hasInfo(
      '/Unset/Inbox',
      Match.stringLikeRegexp('^processingFunction is set and each result is also published to the inbox event bus .*set publishEvents: false'),
    );
    for (const publishEvents of [true, false]) {
      const chosen = new Stack(new App(), `Chosen${publishEvents}`);
      new WebhookInbox(chosen, 'Inbox', { processingFunction: processingFunction(chosen), publishEvents });
      expect(Annotations.fromStack(chosen).findInfo('*', Match.stringLikeRegexp('processingFunction is set'))).toEqual([]);
    }
    const noFunction = new Stack(new App(), 'NoFunction');
    new WebhookInbox(noFunction, 'Inbox', {});
    expect(Annotations.fromStack(noFunction).findInfo('*', Match.anyValue())).toEqual([]);
  });

  test('an authoritative read reaches the processor, which may read its API key', () => {
    const stack = new Stack(new App(), 'Read');
    new WebhookInbox(stack, 'Inbox', {
      providers: [
        WebhookProvider.standardWebhooks({
          name: 'openai',
          authoritativeRead: { urlTemplate: 'https://api.openai.com/v1/responses/{id}', idJsonPath: 'data.id', apiKeySecret: apiKey(stack, 'openai') },
        }),
      ],
    });
    const template = templateOf(stack);
    const providers = JSON.stringify(settingsOf(template, 'InboxProcessor')[Env.PROVIDERS]);
    expect(providers).toContain('https://api.openai.com/v1/responses/{id}');
    expect(providers).toContain('data.id');
    expect(JSON.stringify(statementsOf(template, 'InboxProcessorRole'))).toContain('secret:openai/api-key');
  });

  test("grantRecordSubmission lets an app put ledger items in the inbox table, only under the ledger's key prefix and with a submission's attributes", () => {
    const stack = new Stack(new App(), 'Ledger');
    const inbox = new WebhookInbox(stack, 'Inbox');
    const app = new iam.Role(stack, 'App', { assumedBy: new iam.AccountRootPrincipal() });
    inbox.grantRecordSubmission(app);
    const template = templateOf(stack);
    const statements = statementsOf(template, 'App');
    expect(actionsOf(statements)).toEqual(['dynamodb:PutItem']);
    expect(JSON.stringify(statements)).toContain(resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').id);
    // A delivery key is `<provider>#…` and provider names hold no colon: this prefix names submissions only.
    expect(statements[0].Condition['ForAllValues:StringLike']).toEqual({ 'dynamodb:LeadingKeys': ['ledger:*'] });
    // IAM has no condition on the sort key: the attributes keep out every one a delivery row is swept, claimed or read by.
    const allowed: string[] = statements[0].Condition['ForAllValues:StringEquals']['dynamodb:Attributes'];
    expect(allowed).toEqual(expect.arrayContaining(['pk', 'sk', 'provider', 'taskId', 'idempotencyKey', 'state', 'awaitShard', 'awaitDueAt', 'childIds']));
    for (const rowAttribute of [
      'status',
      'pendingShard',
      'pendingSince',
      'receivedAt',
      'body',
      'deflated',
      'bodyRef',
      'digest',
      'meta',
      'attempts',
      'leaseUntil',
      'outcome',
    ]) {
      expect(allowed).not.toContain(rowAttribute);
    }
    // No old item back: it would read attributes outside the list.
    expect(statements[0].Condition.StringEqualsIfExists).toEqual({ 'dynamodb:ReturnValues': 'NONE' });
    expect(Object.keys(statements[0].Condition).sort()).toEqual(['ForAllValues:StringEquals', 'ForAllValues:StringLike', 'StringEqualsIfExists']);
  });
});

describe('what the defaults cost, and the opt-ins', () => {
  const functionsOf = (template: Template) => Object.values(template.findResources('AWS::Lambda::Function')) as any[];

  test('tracing: every function traced, each role allowed to send X-Ray its segments; a function override wins', () => {
    const { template } = build({ tracing: true, processorFunctionProps: { tracing: lambda.Tracing.PASS_THROUGH } });
    const modes = functionsOf(template).map((fn) => fn.Properties.TracingConfig?.Mode);
    expect(modes.sort()).toEqual(['Active', 'Active', 'PassThrough']);
    for (const role of ['InboxVerifierRole', 'InboxProcessorRole', 'InboxReconcilerRole']) {
      expect(actionsOf(statementsOf(template, role))).toEqual(expect.arrayContaining(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']));
    }
  });

  test("the processor's event source gathers messages for 5 seconds by default, as long as processorBatchingWindow says, and refuses more than 5 minutes", () => {
    const windowOf = (template: Template) =>
      Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).map((mapping: any) => mapping.Properties.MaximumBatchingWindowInSeconds);
    expect(windowOf(build().template)).toEqual([5]);
    expect(windowOf(build({ processorBatchingWindow: Duration.seconds(30) }).template)).toEqual([30]);
    expect(() => build({ processorBatchingWindow: Duration.seconds(301) })).toThrow(/processorBatchingWindow \(seconds\): must be/);
  });

  test('metricsPerProvider: the handlers that count are told to emit each metric per provider too; by default they are not', () => {
    const handlers = ['InboxVerifier', 'InboxProcessor', 'InboxReconciler'];
    const plain = build().template;
    for (const handler of handlers) expect(settingsOf(plain, handler)[Env.METRICS_PER_PROVIDER]).toBeUndefined();
    const perProvider = build({ metricsPerProvider: true }).template;
    for (const handler of handlers) expect(settingsOf(perProvider, handler)[Env.METRICS_PER_PROVIDER]).toBe('true');
  });
});

describe('WebhookInbox grants and metrics', () => {
  test('grantReadResults gives read access to the results table only', () => {
    const stack = new Stack(new App(), 'Grants');
    const inbox = new WebhookInbox(stack, 'Inbox');
    const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() });
    inbox.grantReadResults(reader);
    const template = templateOf(stack);
    const statements = statementsOf(template, 'Reader');
    const results = resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxResultsTable').id;
    expect(actionsOf(statements)).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    expect(actionsOf(statements)).not.toContain('dynamodb:PutItem');
    expect(JSON.stringify(statements)).toContain(results);
    expect(JSON.stringify(statements)).not.toContain(resourceNamed(template, 'AWS::DynamoDB::Table', 'InboxInboxTable').id);
  });

  test('metrics use the handlers’ namespace and the Inbox dimension', () => {
    const { inbox, stack, template } = build({ inboxName: 'answers' });
    const metric = inbox.metricSignatureFailures();
    expect(metric.namespace).toBe(METRIC_NAMESPACE);
    expect(metric.metricName).toBe('AuthenticationFailed');
    expect(metric.dimensions).toEqual({ Inbox: 'answers' });
    expect(metric.statistic).toBe('Sum');
    expect(stack.resolve(inbox.metricDeadLettered({ period: Duration.minutes(1) }).period.toSeconds())).toBe(60);
    const env = settingsOf(template, 'InboxVerifier');
    expect(env[Env.INBOX_NAME]).toBe('answers');
  });
});

describe('security checks', () => {
  /** Synthesizes with cdk-nag's AwsSolutions pack; returns the findings report, or undefined when clean. */
  function nagFindings(populate: (stack: Stack) => void): string | undefined {
    const app = new App();
    populate(new Stack(app, 'Nag'));
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    try {
      app.synth();
      return undefined;
    } catch (error) {
      const report = /found in: (\S+)/.exec((error as Error).message)?.[1];
      return report ? readFileSync(report, 'utf8') : (error as Error).message;
    }
  }

  test('cdk-nag AwsSolutions reports no unacknowledged finding', () => {
    expect(
      nagFindings(
        (stack) =>
          new WebhookInbox(stack, 'Inbox', {
            providers: [
              WebhookProvider.answerline(),
              WebhookProvider.echonova(),
              WebhookProvider.standardWebhooks({ rotation: {} }),
              WebhookProvider.github(),
              WebhookProvider.hmac({ name: 'slack', signatureHeader: 'X-Slack-Signature', idJsonPath: 'event_id' }),
            ],
          }),
      ),
    ).toBeUndefined();
  });

  test('the cdk-nag check does catch a finding (control)', () => {
    expect(nagFindings((stack) => new sqs.Queue(stack, 'Unencrypted', { encryption: sqs.QueueEncryption.UNENCRYPTED }))).toMatch(/AwsSolutions-SQS/);
  });
});
