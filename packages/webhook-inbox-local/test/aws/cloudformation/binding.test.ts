/**
 * What a template's logical ids stand for locally: physical names as CloudFormation gives them
 * (the template's own name, else `<stack>-<logicalId>` fitted to the service's rules) and the
 * `Ref` and `Fn::GetAtt` values AWS gives each resource type.
 */
import type { StackTemplate, TemplateResource } from '../../../src/aws/cloudformation/assembly';
import { StackBinding } from '../../../src/aws/cloudformation/binding';
import { resolveIntrinsics } from '../../../src/aws/cloudformation/intrinsics';
import { TemplateError } from '../../../src/aws/cloudformation/template-error';

const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const STACK = 'Orders';

function bindingOf(resources: Record<string, TemplateResource>, stackName = STACK, extra: Partial<StackTemplate> = {}): StackBinding {
  return new StackBinding(stackName, { Resources: resources, ...extra }, ACCOUNT, REGION);
}

/** What `value` resolves to in the stack. */
function resolve(binding: StackBinding, value: unknown): unknown {
  return resolveIntrinsics(value, binding.binding());
}

/** What a `Fn::GetAtt` of the logical id's attribute resolves to. */
function attribute(binding: StackBinding, logicalId: string, name: string): unknown {
  return resolve(binding, { 'Fn::GetAtt': [logicalId, name] });
}

/** `run` throws a TemplateError that says exactly `message`. */
function expectTemplateError(run: () => unknown, message: string): void {
  expect(run).toThrow(TemplateError);
  expect(run).toThrow(new Error(message));
}

/** The longest name each service takes, and the property a template names it with. */
const LIMITS = [
  { type: 'AWS::DynamoDB::Table', property: 'TableName', maxLength: 255 },
  { type: 'AWS::SQS::Queue', property: 'QueueName', maxLength: 80 },
  { type: 'AWS::S3::Bucket', property: 'BucketName', maxLength: 63 },
  { type: 'AWS::Lambda::Function', property: 'FunctionName', maxLength: 64 },
  { type: 'AWS::IAM::Role', property: 'RoleName', maxLength: 64 },
  { type: 'AWS::Events::Rule', property: 'Name', maxLength: 64 },
] as const;

describe('physical names', () => {
  test('a resource the template does not name is named <stack>-<logicalId>; a secret, as CloudFormation names one, <logicalId>-<12 characters>', () => {
    const template = {
      Ledger: { Type: 'AWS::DynamoDB::Table' },
      Jobs: { Type: 'AWS::SQS::Queue' },
      Handler: { Type: 'AWS::Lambda::Function' },
      HandlerRole: { Type: 'AWS::IAM::Role' },
      Bus: { Type: 'AWS::Events::EventBus' },
      Nightly: { Type: 'AWS::Events::Rule' },
      SigningSecret: { Type: 'AWS::SecretsManager::Secret' },
      Logs: { Type: 'AWS::Logs::LogGroup' },
    };
    const binding = bindingOf(template);
    for (const logicalId of ['Ledger', 'Jobs', 'Handler', 'HandlerRole', 'Bus', 'Nightly', 'Logs']) {
      expect(binding.nameOf(logicalId)).toBe(`Orders-${logicalId}`);
    }
    expect(binding.nameOf('SigningSecret')).toMatch(/^SigningSecret-[A-Za-z0-9]{12}$/);
    // The same on every run: a twin started again over its saved data finds its secrets.
    expect(bindingOf(template).nameOf('SigningSecret')).toBe(binding.nameOf('SigningSecret'));
  });

  test("the template's own name is kept, one built from pseudo parameters too", () => {
    const binding = bindingOf({
      Ledger: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'orders-ledger' } },
      Jobs: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'orders-jobs' } },
      Assets: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'orders-assets' } },
      Handler: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'orders-handler' } },
      Results: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: { 'Fn::Sub': '${AWS::StackName}-results-${AWS::AccountId}' } } },
    });
    expect(binding.nameOf('Ledger')).toBe('orders-ledger');
    expect(binding.nameOf('Jobs')).toBe('orders-jobs');
    expect(binding.nameOf('Assets')).toBe('orders-assets');
    expect(binding.nameOf('Handler')).toBe('orders-handler');
    expect(binding.nameOf('Results')).toBe('Orders-results-123456789012');
  });

  test('a generated bucket name is lower case, with only letters, digits, dots and hyphens', () => {
    // A template file's name becomes the stack name, and may hold what a bucket name cannot.
    const binding = bindingOf({ AssetsBucket: { Type: 'AWS::S3::Bucket' } }, 'Orders_v2.Template');
    expect(binding.nameOf('AssetsBucket')).toBe('orders-v2.template-assetsbucket');
  });

  test('a FIFO queue ends .fifo', () => {
    const binding = bindingOf({
      Jobs: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } },
      Named: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true, QueueName: 'orders-named.fifo' } },
    });
    expect(binding.nameOf('Jobs')).toBe('Orders-Jobs.fifo');
    expect(binding.nameOf('Named')).toBe('orders-named.fifo');
  });

  describe.each(LIMITS)('$type: a generated name over $maxLength characters', ({ type, maxLength }) => {
    const longStack = `Webhook${'Inbox'.repeat(Math.ceil(maxLength / 5))}`;
    // Two logical ids that differ only past the limit.
    const binding = bindingOf({ ResourceA1B2C3D4: { Type: type }, ResourceE5F6A7B8: { Type: type } }, longStack);
    const names = [binding.nameOf('ResourceA1B2C3D4'), binding.nameOf('ResourceE5F6A7B8')];

    test('is shortened to the limit, keeping its start', () => {
      for (const name of names) {
        expect(name.length).toBe(maxLength);
        expect(name.toLowerCase().startsWith(longStack.slice(0, 20).toLowerCase())).toBe(true);
      }
    });

    test('stays unique', () => {
      expect(names[0]).not.toBe(names[1]);
    });
  });

  test('a FIFO queue whose name only just fits keeps .fifo, its limit and its uniqueness', () => {
    const maxLength = 80;
    // `<stack>-<logicalId>` fits in 80 but `.fifo` does not fit after it: five characters must go.
    const stack = 'S'.repeat(maxLength - 2 - 'QueueA1'.length);
    const fifo = { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } };
    const binding = bindingOf({ QueueA1: fifo, QueueA2: fifo }, stack);
    const names = [binding.nameOf('QueueA1'), binding.nameOf('QueueA2')];
    for (const name of names) {
      expect(name.endsWith('.fifo')).toBe(true);
      expect(name.length).toBeLessThanOrEqual(maxLength);
    }
    expect(names[0]).not.toBe(names[1]);
  });

  test('a FIFO queue over the limit keeps .fifo and stays unique', () => {
    const fifo = { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } };
    const binding = bindingOf({ QueueA1: fifo, QueueA2: fifo }, 'S'.repeat(120));
    const names = [binding.nameOf('QueueA1'), binding.nameOf('QueueA2')];
    for (const name of names) {
      expect(name).toMatch(/^S+-[0-9a-f]+\.fifo$/);
      expect(name.length).toBe(80);
    }
    expect(names[0]).not.toBe(names[1]);
  });
});

describe('names built from other resources', () => {
  test("a log group named after a function's Ref, declared before the function, has the function's name in its own", () => {
    // What `@aws-cdk/aws-lambda:useCdkManagedLogGroup` synthesizes for every function.
    const binding = bindingOf({
      HandlerLogGroup: { Type: 'AWS::Logs::LogGroup', Properties: { LogGroupName: { 'Fn::Join': ['', ['/aws/lambda/', { Ref: 'Handler' }]] } } },
      Handler: { Type: 'AWS::Lambda::Function' },
    });
    expect(binding.nameOf('HandlerLogGroup')).toBe('/aws/lambda/Orders-Handler');
    expect(attribute(binding, 'HandlerLogGroup', 'Arn')).toBe('arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/Orders-Handler:*');
  });

  test('names wait on names in a chain, whatever the order of the template, and Fn::GetAtt and Fn::Sub count as references', () => {
    const binding = bindingOf({
      Alarm: { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmName: { 'Fn::Sub': '${Table}-throttled' } } },
      Table: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: { 'Fn::Join': ['-', [{ 'Fn::GetAtt': ['Bus', 'Name'] }, 'ledger']] } } },
      Bus: { Type: 'AWS::Events::EventBus', Properties: { Name: { 'Fn::Sub': '${AWS::StackName}-bus' } } },
    });
    expect(binding.nameOf('Bus')).toBe('Orders-bus');
    expect(binding.nameOf('Table')).toBe('Orders-bus-ledger');
    expect(binding.nameOf('Alarm')).toBe('Orders-bus-ledger-throttled');
  });

  test('names that wait on each other are an error naming the stack, the resource, the property and the cycle', () => {
    expectTemplateError(
      () =>
        bindingOf({
          First: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::Sub': '${Second}-first' } } },
          Second: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: { 'Fn::GetAtt': ['First', 'QueueName'] } } },
        }),
      'stack Orders, resource Second (AWS::DynamoDB::Table), property TableName: names built from each other: First → Second → First',
    );
  });

  test("a name built from what only exists once a resource is created (a queue's URL) is an error naming both", () => {
    expectTemplateError(
      () =>
        bindingOf({
          Logs: { Type: 'AWS::Logs::LogGroup', Properties: { LogGroupName: { 'Fn::Join': ['', ['/queues/', { Ref: 'Jobs' }]] } } },
          Jobs: { Type: 'AWS::SQS::Queue' },
        }),
      "stack Orders, resource Logs (AWS::Logs::LogGroup), property LogGroupName: it is named after Jobs's Ref, which the twin only knows once it has created Jobs",
    );
  });

  test('a name that cannot be resolved is an error naming the stack, the resource with its construct path, and the property', () => {
    expectTemplateError(
      () =>
        bindingOf({
          Logs: {
            Type: 'AWS::Logs::LogGroup',
            Properties: { LogGroupName: { 'Fn::ImportValue': 'shared-log-prefix' } },
            Metadata: { 'aws:cdk:path': 'Orders/Api/Logs/Resource' },
          },
        }),
      'stack Orders, resource Logs (Api/Logs, AWS::Logs::LogGroup), property LogGroupName: Fn::ImportValue is not supported locally',
    );
  });
});

describe('resolving properties', () => {
  const binding = bindingOf({
    Handler: {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Environment: { Variables: { TABLE: { Ref: 'Ledger' }, SHARED: { 'Fn::ImportValue': 'shared-table' } } },
        Layers: [{ Ref: 'Ledger' }, { 'Fn::GetAtt': ['Ledger', 'Missing'] }],
        Description: { 'Fn::Split': [',', 'orders,ledger'] },
      },
    },
    Ledger: { Type: 'AWS::DynamoDB::Table' },
  });

  test('a property resolves to the local values', () => {
    expect(binding.resolveProperty('Handler', 'Environment.Variables.TABLE')).toBe('Orders-Ledger');
    expect(binding.resolvePropertyText('Handler', 'Layers.0')).toBe('Orders-Ledger');
  });

  test('what cannot be resolved names the property by its path, from the whole properties as from one of them', () => {
    expectTemplateError(
      () => binding.resolveProperties('Handler'),
      'stack Orders, resource Handler (AWS::Lambda::Function), property Environment.Variables.SHARED: Fn::ImportValue is not supported locally',
    );
    expectTemplateError(
      () => binding.resolveProperty('Handler', 'Environment.Variables'),
      'stack Orders, resource Handler (AWS::Lambda::Function), property Environment.Variables.SHARED: Fn::ImportValue is not supported locally',
    );
    expectTemplateError(
      () => binding.resolveProperty('Handler', 'Layers'),
      'stack Orders, resource Handler (AWS::Lambda::Function), property Layers.1: nothing local stands for Ledger.Missing (Fn::GetAtt): the twin gives a resource of type AWS::DynamoDB::Table no Missing',
    );
  });

  test('a property that must be text and is not says so', () => {
    expectTemplateError(
      () => binding.resolvePropertyText('Handler', 'Description'),
      'stack Orders, resource Handler (AWS::Lambda::Function), property Description: expected text, got ["orders","ledger"]',
    );
  });
});

describe('Ref and Fn::GetAtt', () => {
  const binding = bindingOf({
    Ledger: { Type: 'AWS::DynamoDB::Table' },
    Jobs: { Type: 'AWS::SQS::Queue' },
    Assets: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'orders-assets' } },
    Bus: { Type: 'AWS::Events::EventBus', Properties: { Name: 'orders-bus' } },
    Nightly: { Type: 'AWS::Events::Rule', Properties: { ScheduleExpression: 'rate(1 day)' } },
    OnResult: { Type: 'AWS::Events::Rule', Properties: { EventBusName: { Ref: 'Bus' }, EventPattern: { source: ['orders'] } } },
    OnResultByArn: {
      Type: 'AWS::Events::Rule',
      Properties: { EventBusName: { 'Fn::GetAtt': ['Bus', 'Arn'] }, EventPattern: { source: ['orders'] } },
    },
    OnDefault: { Type: 'AWS::Events::Rule', Properties: { EventBusName: 'default', EventPattern: { source: ['orders'] } } },
    HandlerRole: { Type: 'AWS::IAM::Role' },
    Handler: { Type: 'AWS::Lambda::Function' },
    Logs: { Type: 'AWS::Logs::LogGroup', Properties: { LogGroupName: '/aws/lambda/orders' } },
    Stuck: { Type: 'AWS::CloudWatch::Alarm' },
    Alerts: { Type: 'AWS::SNS::Topic' },
  });

  test('each type’s ARN as AWS writes it', () => {
    expect(attribute(binding, 'Ledger', 'Arn')).toBe('arn:aws:dynamodb:eu-west-1:123456789012:table/Orders-Ledger');
    expect(attribute(binding, 'Jobs', 'Arn')).toBe('arn:aws:sqs:eu-west-1:123456789012:Orders-Jobs');
    expect(attribute(binding, 'Assets', 'Arn')).toBe('arn:aws:s3:::orders-assets');
    expect(attribute(binding, 'Bus', 'Arn')).toBe('arn:aws:events:eu-west-1:123456789012:event-bus/orders-bus');
    expect(attribute(binding, 'Nightly', 'Arn')).toBe('arn:aws:events:eu-west-1:123456789012:rule/Orders-Nightly');
    // A rule on a bus other than the default one is named under its bus.
    expect(attribute(binding, 'OnResult', 'Arn')).toBe('arn:aws:events:eu-west-1:123456789012:rule/orders-bus/Orders-OnResult');
    expect(attribute(binding, 'OnResultByArn', 'Arn')).toBe('arn:aws:events:eu-west-1:123456789012:rule/orders-bus/Orders-OnResultByArn');
    expect(attribute(binding, 'OnDefault', 'Arn')).toBe('arn:aws:events:eu-west-1:123456789012:rule/Orders-OnDefault');
    expect(attribute(binding, 'HandlerRole', 'Arn')).toBe('arn:aws:iam::123456789012:role/Orders-HandlerRole');
    expect(attribute(binding, 'Handler', 'Arn')).toBe('arn:aws:lambda:eu-west-1:123456789012:function:Orders-Handler');
    expect(attribute(binding, 'Logs', 'Arn')).toBe('arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/orders:*');
    expect(attribute(binding, 'Stuck', 'Arn')).toBe('arn:aws:cloudwatch:eu-west-1:123456789012:alarm:Orders-Stuck');
    expect(attribute(binding, 'Alerts', 'TopicArn')).toBe('arn:aws:sns:eu-west-1:123456789012:Orders-Alerts');
  });

  test('Ref is the name, except a topic’s, which is its ARN', () => {
    expect(resolve(binding, { Ref: 'Ledger' })).toBe('Orders-Ledger');
    expect(resolve(binding, { Ref: 'Handler' })).toBe('Orders-Handler');
    expect(resolve(binding, { Ref: 'Bus' })).toBe('orders-bus');
    expect(resolve(binding, { Ref: 'Alerts' })).toBe('arn:aws:sns:eu-west-1:123456789012:Orders-Alerts');
  });

  test('the other attributes AWS gives', () => {
    expect(attribute(binding, 'Jobs', 'QueueName')).toBe('Orders-Jobs');
    expect(attribute(binding, 'Assets', 'DomainName')).toBe('orders-assets.s3.amazonaws.com');
    expect(attribute(binding, 'Assets', 'RegionalDomainName')).toBe('orders-assets.s3.eu-west-1.amazonaws.com');
    expect(attribute(binding, 'Bus', 'Name')).toBe('orders-bus');
    expect(attribute(binding, 'Alerts', 'TopicName')).toBe('Orders-Alerts');
    // An IAM role id: AROA and 17 more upper-case letters or digits.
    expect(attribute(binding, 'HandlerRole', 'RoleId')).toMatch(/^AROA[A-Z0-9]{17}$/);
    expect(String(attribute(binding, 'Ledger', 'StreamArn')).startsWith('arn:aws:dynamodb:eu-west-1:123456789012:table/Orders-Ledger/stream/')).toBe(true);
  });

  test('a KMS key is a key id (a UUID) and its ARN, alike on every run; Ref is the id', () => {
    const keys = bindingOf({ SecretsKey: { Type: 'AWS::KMS::Key' }, OtherKey: { Type: 'AWS::KMS::Key' } });
    const keyId = resolve(keys, { Ref: 'SecretsKey' });
    expect(keyId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(attribute(keys, 'SecretsKey', 'Arn')).toBe(`arn:aws:kms:eu-west-1:123456789012:key/${keyId}`);
    expect(attribute(keys, 'SecretsKey', 'KeyId')).toBe(keyId);
    expect(resolve(keys, { Ref: 'OtherKey' })).not.toBe(keyId);
    expect(resolve(bindingOf({ SecretsKey: { Type: 'AWS::KMS::Key' } }), { Ref: 'SecretsKey' })).toBe(keyId);
  });

  test('pseudo parameters are the stack’s', () => {
    expect(resolve(binding, { 'Fn::Sub': '${AWS::Partition}:${AWS::Region}:${AWS::AccountId}:${AWS::StackName}' })).toBe('aws:eu-west-1:123456789012:Orders');
  });

  test('an unknown logical id is an error naming it', () => {
    expect(() => binding.get('Missing')).toThrow(/Missing/);
    expect(() => resolve(binding, { Ref: 'Missing' })).toThrow(/Missing/);
    expect(() => attribute(binding, 'Missing', 'Arn')).toThrow(/Missing/);
  });
});

describe('parameters', () => {
  const binding = bindingOf({ Jobs: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::Sub': '${Prefix}-jobs' } } } }, STACK, {
    Parameters: {
      Prefix: { Type: 'String', Default: 'staging' },
      BootstrapVersion: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/cdk-bootstrap/hnb659fds/version' },
      Required: { Type: 'String' },
    },
  });

  test('take their defaults, in names too', () => {
    expect(binding.nameOf('Jobs')).toBe('staging-jobs');
    expect(resolve(binding, { Ref: 'Prefix' })).toBe('staging');
    expect(resolve(binding, { Ref: 'BootstrapVersion' })).toBe('/cdk-bootstrap/hnb659fds/version');
    expect(resolve(binding, { 'Fn::Sub': '${Prefix}-${AWS::Region}' })).toBe('staging-eu-west-1');
  });

  test('one without a default is an error naming it', () => {
    expect(() => resolve(binding, { Ref: 'Required' })).toThrow(/Required/);
  });
});
