/**
 * The templates deploy: the example app (bin/app.ts, synthesized as the CDK CLI runs it) and a
 * maximal app (every preset at once and more, 40 providers in one inbox, long construct ids, a REST
 * API with AWS WAF and a custom domain, rotation, polling, message batches, resources brought by
 * the user, the user's own variables, a second inbox of 40 providers behind an HTTP API) are checked against what AWS
 * refuses at deploy, each value CloudFormation fills in counted at its longest. Each limit is
 * stated here on its own (the facts: docs/LIMITS.md); one synth per app, shared by every check.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { WebhookInbox, WebhookIngress, WebhookProvider } from '../../lib';
import { environmentBytes, longestValue, Template } from '../support/deploy-limits';
import { exampleAssembly } from '../support/example-app';

/** What AWS refuses, each as its documentation states it (docs/LIMITS.md). */
const LIMITS = {
  lambdaEnvironmentBytes: 4096,
  templateBytes: 1_048_576,
  resources: 500,
  outputs: 200,
  parameters: 200,
  roleInlinePolicyCharacters: 10_240,
  lambdaResourcePolicyBytes: 20_480,
  alarmName: 255,
  alarmDescription: 1024,
  compositeAlarmRule: 10_240,
  compositeAlarmChildren: 100,
  dashboardBodyBytes: 1_048_576,
  eventPatternCharacters: 2048,
};

/** The longest name each service accepts, by the property that names the resource. */
const NAME_LIMITS: Record<string, { readonly property: string; readonly min: number; readonly max: number }> = {
  'AWS::Lambda::Function': { property: 'FunctionName', min: 1, max: 64 },
  'AWS::SQS::Queue': { property: 'QueueName', min: 1, max: 80 },
  'AWS::DynamoDB::Table': { property: 'TableName', min: 3, max: 255 },
  'AWS::Logs::LogGroup': { property: 'LogGroupName', min: 1, max: 512 },
  'AWS::Events::Rule': { property: 'Name', min: 1, max: 64 },
  'AWS::Events::EventBus': { property: 'Name', min: 1, max: 256 },
  'AWS::IAM::Role': { property: 'RoleName', min: 1, max: 64 },
  'AWS::ApiGateway::RestApi': { property: 'Name', min: 1, max: 1024 },
  'AWS::ApiGatewayV2::Api': { property: 'Name', min: 1, max: 128 },
  'AWS::SecretsManager::Secret': { property: 'Name', min: 1, max: 512 },
  'AWS::CloudWatch::Dashboard': { property: 'DashboardName', min: 1, max: 255 },
};

/** The characters a Secrets Manager secret's name may hold. */
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]+$/;

const scratch = mkdtempSync(join(tmpdir(), 'webhook-inbox-deploy-limits-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Every template of an assembly's files (by name), by stack. */
function templatesOf(files: Readonly<Record<string, string>>): Array<{ stack: string; text: string; template: Template }> {
  return Object.entries(files)
    .filter(([file]) => file.endsWith('.template.json'))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, text]) => ({ stack: file.replace(/\.template\.json$/, ''), text, template: JSON.parse(text) as Template }));
}

/** Every template of an assembly folder, by stack. */
const templatesIn = (outdir: string) =>
  templatesOf(
    Object.fromEntries(
      readdirSync(outdir)
        .filter((file) => file.endsWith('.template.json'))
        .map((file) => [file, readFileSync(join(outdir, file), 'utf8')]),
    ),
  );

/** The maximal app: what an app can put in one stack, with long construct ids. */
function maximalApp(outdir: string): void {
  const app = new App({ outdir });
  const stack = new Stack(app, 'PaymentsPlatformWebhookIngestionProductionStackForEveryProviderWeServe', {
    env: { account: '111111111111', region: 'eu-west-1' },
  });
  const apiKey = (id: string) => new secretsmanager.Secret(stack, `${id}ApiKeyOfTheProviderForPollingItsTasksAndReadingResources`);
  const imported = (id: string, name: string) => secretsmanager.Secret.fromSecretNameV2(stack, id, name);
  const withRotation = { rotation: { schedule: Duration.days(30) } };
  const presets: WebhookProvider[] = [
    WebhookProvider.answerline({ ...withRotation, polling: { apiKeySecret: apiKey('Answerline') } }),
    WebhookProvider.echonova({ polling: { apiKeySecret: apiKey('Echonova'), taskUrlTemplate: 'https://api.echonova.example.com/v1/jobs/{jobId}' } }),
    WebhookProvider.standardWebhooks({
      name: 'openai',
      ...withRotation,
      authoritativeRead: { urlTemplate: 'https://api.openai.com/v1/responses/{id}', idJsonPath: 'data.id', apiKeySecret: apiKey('OpenAi') },
    }),
    WebhookProvider.stripe({ signingSecret: imported('StripeSecret', 'payments/stripe/webhook-signing-secret') }),
    WebhookProvider.github({ allowedSources: ['192.30.252.0/22', '185.199.108.0/22', '140.82.112.0/20', '143.55.64.0/20'] }),
    WebhookProvider.meta(),
    WebhookProvider.slack(),
    WebhookProvider.zoom(),
    WebhookProvider.shopify({ tenantJsonPath: 'shop.id' }),
    WebhookProvider.paddle(),
    WebhookProvider.pagerduty(),
    WebhookProvider.linear(),
    WebhookProvider.discord(),
    WebhookProvider.square({ notificationUrl: 'https://hooks.payments.example.com/hooks/square' }),
    WebhookProvider.twilio({ webhookUrl: 'https://hooks.payments.example.com/hooks/twilio?tenant=eu' }),
    WebhookProvider.sns({ topicArns: ['arn:aws:sns:eu-west-1:111111111111:orders', 'arn:aws:sns:eu-west-1:111111111111:refunds'] }),
    WebhookProvider.hmac({
      signatureHeader: 'X-Signature',
      idHeader: 'X-Delivery-Id',
      timestampHeader: 'X-Timestamp',
      signedContent: '{id}.{timestamp}.{body}',
    }),
    WebhookProvider.messageBatches({ apiKeySecret: imported('AnthropicKey', 'payments/anthropic/api-key') }),
  ];
  // 22 more senders of the presets' kinds, each under its own name: 40 providers in one inbox.
  const more = Array.from({ length: 22 }, (_, index) => {
    const name = `tenant-${String(index + 1).padStart(2, '0')}-standard-webhooks-sender`;
    return index % 2 === 0 ? WebhookProvider.standardWebhooks({ name, ...withRotation }) : WebhookProvider.stripe({ name });
  });
  // The user's own variables, as an app sets them: 1 KB for each function.
  const own = { environment: { APP_SETTINGS: JSON.stringify({ region: 'eu', features: 'x'.repeat(980) }) } };
  const payments = new WebhookInbox(stack, 'ProviderResultsWebhookInboxForTheCheckoutBillingAndFulfilmentPlatform', {
    providers: [...presets, ...more],
    ingress: WebhookIngress.restApi({
      webAclArn: 'arn:aws:wafv2:eu-west-1:111111111111:regional/webacl/payments-webhooks/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111',
      domain: {
        domainName: 'hooks.payments.example.com',
        certificate: acm.Certificate.fromCertificateArn(stack, 'Certificate', 'arn:aws:acm:eu-west-1:111111111111:certificate/abc'),
        hostedZone: route53.HostedZone.fromHostedZoneAttributes(stack, 'Zone', { hostedZoneId: 'Z123', zoneName: 'payments.example.com' }),
      },
    }),
    inboxTable: dynamodb.Table.fromTableName(stack, 'BroughtInboxTable', 'payments-webhook-inbox'),
    acknowledgeImportedInboxTable: true,
    resultsTable: dynamodb.Table.fromTableName(stack, 'BroughtResultsTable', 'payments-webhook-results'),
    acknowledgeImportedResultsTable: true,
    workQueue: sqs.Queue.fromQueueArn(stack, 'BroughtWorkQueue', 'arn:aws:sqs:eu-west-1:111111111111:payments-webhook-work'),
    deadLetterQueue: sqs.Queue.fromQueueArn(stack, 'BroughtDeadLetterQueue', 'arn:aws:sqs:eu-west-1:111111111111:payments-webhook-dead'),
    acknowledgeImportedWorkQueue: true,
    bodyBucket: s3.Bucket.fromBucketName(stack, 'BroughtBodyBucket', 'payments-webhook-bodies'),
    eventBus: events.EventBus.fromEventBusName(stack, 'BroughtBus', 'payments-webhook-results'),
    processingFunction: lambda.Function.fromFunctionArn(stack, 'BroughtProcessing', 'arn:aws:lambda:eu-west-1:111111111111:function:payments-fulfilment'),
    processorBatchSize: 10,
    processorMaxConcurrency: 20,
    verifierFunctionProps: own,
    processorFunctionProps: own,
    reconcilerFunctionProps: own,
  });
  // The events an app subscribes to, each rule with its own pattern.
  for (const subscribe of ['onJobResult', 'onWebhookReceived', 'onResourceUnavailable', 'onBatchChildSettled', 'onBatchSettled'] as const) {
    payments[subscribe](`${subscribe}ForTheFulfilmentServiceOfTheCheckoutPlatform`, {
      eventPattern: { detail: { provider: presets.map((_, index) => `provider-${index}`) } },
    });
  }
  // A second inbox beside it, 40 providers with the construct's own resources behind an HTTP API.
  const sellerPresets = [WebhookProvider.answerline, WebhookProvider.echonova, WebhookProvider.stripe, WebhookProvider.github, WebhookProvider.slack];
  new WebhookInbox(stack, 'MarketplaceSellerNotificationsWebhookInboxWithFortySellersAtTheirDefaults', {
    providers: Array.from({ length: 40 }, (_, index) =>
      sellerPresets[index % sellerPresets.length]({ name: `marketplace-seller-${String(index).padStart(2, '0')}` }),
    ),
    processingFunction: new lambda.Function(stack, 'SellerNotificationProcessingFunction', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => {};'),
    }),
  });
  app.synth();
}

const APPS = {
  'the example app': () => templatesOf(exampleAssembly('newest')),
  'the maximal app': () => {
    const outdir = join(scratch, 'maximal');
    maximalApp(outdir);
    return templatesIn(outdir);
  },
};

/** A template's values as they read at their longest: every intrinsic replaced by its estimate. */
function longest(template: Template, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => longest(template, item));
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::'))) return longestValue(template, value);
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, longest(template, inner)]));
  }
  return value;
}

const resourcesOf = (template: Template, type: string) => Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);

describe.each(Object.keys(APPS) as Array<keyof typeof APPS>)('%s deploys', (app) => {
  let stacks: ReturnType<(typeof APPS)[typeof app]>;
  beforeAll(() => {
    stacks = APPS[app]();
  }, 300_000);

  test('every function’s environment, at its longest, within Lambda’s 4 KB', () => {
    for (const { template } of stacks) {
      for (const [logicalId] of resourcesOf(template, 'AWS::Lambda::Function')) {
        const bytes = environmentBytes(template, logicalId);
        expect({ logicalId, bytes, within: bytes <= LIMITS.lambdaEnvironmentBytes }).toEqual({ logicalId, bytes, within: true });
      }
    }
  });

  test('each template within CloudFormation’s size and counts: 1 MB uploaded, 500 resources, 200 outputs, 200 parameters', () => {
    for (const { text, template } of stacks) {
      expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(LIMITS.templateBytes);
      expect(Object.keys(template.Resources).length).toBeLessThanOrEqual(LIMITS.resources);
      expect(Object.keys(template.Outputs ?? {}).length).toBeLessThanOrEqual(LIMITS.outputs);
      expect(Object.keys(template.Parameters ?? {}).length).toBeLessThanOrEqual(LIMITS.parameters);
    }
  });

  test('each role’s inline policies within IAM’s 10,240 characters, whitespace not counted', () => {
    for (const { template } of stacks) {
      for (const [roleId, role] of resourcesOf(template, 'AWS::IAM::Role')) {
        const attached = resourcesOf(template, 'AWS::IAM::Policy')
          .filter(([, policy]) => (policy.Properties!.Roles as unknown[]).some((entry) => JSON.stringify(entry) === JSON.stringify({ Ref: roleId })))
          .map(([, policy]) => policy.Properties!.PolicyDocument);
        const inline = ((role.Properties?.Policies as Array<{ PolicyDocument: unknown }> | undefined) ?? []).map((policy) => policy.PolicyDocument);
        const characters = [...attached, ...inline].reduce<number>(
          (sum, document) => sum + JSON.stringify(longest(template, document)).replace(/\s/g, '').length,
          0,
        );
        expect({ roleId, characters, within: characters <= LIMITS.roleInlinePolicyCharacters }).toEqual({ roleId, characters, within: true });
      }
    }
  });

  test('each function’s resource policy within Lambda’s 20 KB', () => {
    for (const { template } of stacks) {
      const policies = new Map<string, number>();
      for (const [, permission] of resourcesOf(template, 'AWS::Lambda::Permission')) {
        const properties = longest(template, permission.Properties) as Record<string, unknown>;
        const statement = {
          Sid: 'x'.repeat(100),
          Effect: 'Allow',
          Principal: { Service: properties.Principal },
          Action: properties.Action,
          Resource: properties.FunctionName,
          ...(properties.SourceArn ? { Condition: { ArnLike: { 'AWS:SourceArn': properties.SourceArn } } } : {}),
        };
        const name = JSON.stringify(properties.FunctionName);
        policies.set(name, (policies.get(name) ?? 0) + JSON.stringify(statement).length);
      }
      for (const [name, bytes] of policies) expect({ name, bytes, within: bytes <= LIMITS.lambdaResourcePolicyBytes }).toEqual({ name, bytes, within: true });
    }
  });

  test('alarms: names within 255, descriptions within 1,024, composite rules within 10,240 characters and 100 alarms', () => {
    for (const { template } of stacks) {
      for (const [, alarm] of [...resourcesOf(template, 'AWS::CloudWatch::Alarm'), ...resourcesOf(template, 'AWS::CloudWatch::CompositeAlarm')]) {
        const properties = longest(template, alarm.Properties) as Record<string, string | undefined>;
        expect((properties.AlarmName ?? '').length).toBeLessThanOrEqual(LIMITS.alarmName);
        expect((properties.AlarmDescription ?? '').length).toBeLessThanOrEqual(LIMITS.alarmDescription);
        if (alarm.Type === 'AWS::CloudWatch::CompositeAlarm') {
          expect(properties.AlarmRule!.length).toBeLessThanOrEqual(LIMITS.compositeAlarmRule);
          expect(properties.AlarmRule!.match(/\b(ALARM|OK|INSUFFICIENT_DATA)\(/g)!.length).toBeLessThanOrEqual(LIMITS.compositeAlarmChildren);
        }
      }
    }
  });

  test('dashboards within CloudWatch’s 1 MB body', () => {
    for (const { template } of stacks) {
      for (const [, dashboard] of resourcesOf(template, 'AWS::CloudWatch::Dashboard')) {
        expect(Buffer.byteLength(longestValue(template, dashboard.Properties!.DashboardBody), 'utf8')).toBeLessThanOrEqual(LIMITS.dashboardBodyBytes);
      }
    }
  });

  test('names within each service’s limits; secret names of the characters Secrets Manager accepts', () => {
    for (const { template } of stacks) {
      for (const [type, { property, min, max }] of Object.entries(NAME_LIMITS)) {
        for (const [logicalId, resource] of resourcesOf(template, type)) {
          const own = resource.Properties?.[property];
          // A name CloudFormation generates fits by construction; a secret's is `<logical id>-<12 characters>`.
          const name = own !== undefined ? longestValue(template, own) : type === 'AWS::SecretsManager::Secret' ? `${logicalId}-${'x'.repeat(12)}` : undefined;
          if (name === undefined) continue;
          expect({ logicalId, length: name.length >= min && name.length <= max }).toEqual({ logicalId, length: true });
          if (type === 'AWS::SecretsManager::Secret') expect(name).toMatch(SECRET_NAME);
        }
      }
    }
  });

  test('each queue a function reads keeps a message hidden at least as long as the function may run', () => {
    for (const { template } of stacks) {
      for (const [, mapping] of resourcesOf(template, 'AWS::Lambda::EventSourceMapping')) {
        const queueId = ((mapping.Properties!.EventSourceArn as Record<string, string[]>)['Fn::GetAtt'] ?? [])[0];
        const functionId = (mapping.Properties!.FunctionName as Record<string, string>).Ref;
        if (!template.Resources[queueId] || !template.Resources[functionId]) continue;
        // SQS's default visibility timeout is 30 s; Lambda's default timeout 3 s.
        const visibility = Number(template.Resources[queueId].Properties?.VisibilityTimeout ?? 30);
        expect(visibility).toBeGreaterThanOrEqual(Number(template.Resources[functionId].Properties?.Timeout ?? 3));
      }
    }
  });

  test('event patterns within EventBridge’s 2,048 characters', () => {
    for (const { template } of stacks) {
      for (const [, rule] of resourcesOf(template, 'AWS::Events::Rule')) {
        const pattern = rule.Properties?.EventPattern;
        if (pattern !== undefined) expect(JSON.stringify(longest(template, pattern)).length).toBeLessThanOrEqual(LIMITS.eventPatternCharacters);
      }
    }
  });
});
