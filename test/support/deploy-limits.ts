/**
 * What AWS refuses at deploy, stated here on its own (never through the construct's own check):
 * every value CloudFormation fills in at deploy time is estimated at the longest AWS can make it,
 * so a template that passes here deploys in any partition, region and account, under any stack
 * name. The facts and their sources: docs/LIMITS.md.
 */

/** The longest value of each pseudo parameter. */
const LONGEST = {
  /** `aws-us-gov` is the longest partition name. */
  partition: 10,
  /** `us-isof-south-1` is the longest region code. */
  region: 15,
  account: 12,
  /** A stack name is at most 128 characters. */
  stackName: 128,
  /** `amazonaws.com.cn` is the longest URL suffix. */
  urlSuffix: 16,
  /** A stack id: `arn:<partition>:cloudformation:<region>:<account>:stack/<name>/<uuid>`. */
  stackId: 'arn::cloudformation:::stack//'.length + 10 + 15 + 12 + 128 + 36,
};

/** The longest names CloudFormation generates for a resource that names none, by type (each service's own limit). */
const LONGEST_GENERATED_NAME: Record<string, number> = {
  'AWS::DynamoDB::Table': 255,
  'AWS::SQS::Queue': 80,
  'AWS::S3::Bucket': 63,
  'AWS::Lambda::Function': 64,
  'AWS::IAM::Role': 64,
  'AWS::Logs::LogGroup': 512,
  'AWS::Events::Rule': 64,
  'AWS::Events::EventBus': 256,
  'AWS::SNS::Topic': 256,
  'AWS::CloudWatch::Alarm': 255,
  'AWS::CloudWatch::CompositeAlarm': 255,
};

/** CloudFormation names a secret it creates `<logical id>-<12 random characters>`; Secrets Manager adds `-<6 random characters>` to its ARN. */
const GENERATED_SECRET_SUFFIX = 12;
const SECRET_ARN_SUFFIX = 6;

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface Template {
  readonly Resources: Record<string, TemplateResource>;
  readonly Outputs?: Record<string, unknown>;
  readonly Parameters?: Record<string, unknown>;
  readonly Conditions?: Record<string, unknown>;
  readonly Mappings?: Record<string, unknown>;
}

const x = (length: number) => 'x'.repeat(length);
const arn = (service: string, resource: string) => `arn:${x(LONGEST.partition)}:${service}:${x(LONGEST.region)}:${'0'.repeat(LONGEST.account)}:${resource}`;

/**
 * A CloudFormation value as it reads at its longest once deployed: literals as they are, each
 * reference and pseudo parameter the longest AWS can make it. Unknown intrinsics throw, so that
 * nothing goes unmeasured.
 */
export function longestValue(template: Template, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) || value === null || typeof value !== 'object') throw new Error(`not a string value: ${JSON.stringify(value)}`);
  const [[fn, args], ...rest] = Object.entries(value as Record<string, unknown>);
  if (rest.length > 0) throw new Error(`not an intrinsic: ${JSON.stringify(value)}`);
  switch (fn) {
    case 'Ref':
      return longestRef(template, String(args));
    case 'Fn::GetAtt': {
      const [logicalId, attribute] = Array.isArray(args) ? (args as string[]) : String(args).split('.');
      return longestAttribute(template, logicalId, attribute);
    }
    case 'Fn::Join': {
      const [separator, parts] = args as [string, unknown[]];
      return parts.map((part) => longestValue(template, part)).join(separator);
    }
    case 'Fn::Select': {
      const [index, list] = args as [unknown, unknown];
      const items = Array.isArray(list) ? list.map((item) => longestValue(template, item)) : longestList(template, list);
      const at = Number(longestValue(template, index));
      if (!(at >= 0 && at < items.length)) throw new Error(`Fn::Select index ${at} out of range in ${JSON.stringify(value)}`);
      return items[at];
    }
    case 'Fn::Sub': {
      const [text, variables = {}] = (typeof args === 'string' ? [args] : args) as [string, Record<string, unknown>?];
      return text.replace(/\$\{([^}!]+)\}/g, (_, name: string) =>
        name in variables
          ? longestValue(template, variables[name])
          : name.includes('.')
            ? longestValue(template, { 'Fn::GetAtt': name.split('.') })
            : longestRef(template, name),
      );
    }
    default:
      throw new Error(`no estimate for ${fn}`);
  }
}

function longestList(template: Template, value: unknown): string[] {
  const split = (value as Record<string, unknown>)['Fn::Split'];
  if (!Array.isArray(split)) throw new Error(`no list estimate for ${JSON.stringify(value)}`);
  const [delimiter, source] = split as [string, unknown];
  return longestValue(template, source).split(delimiter);
}

function longestRef(template: Template, name: string): string {
  switch (name) {
    case 'AWS::Partition':
      return x(LONGEST.partition);
    case 'AWS::Region':
      return x(LONGEST.region);
    case 'AWS::AccountId':
      return '0'.repeat(LONGEST.account);
    case 'AWS::StackName':
      return x(LONGEST.stackName);
    case 'AWS::StackId':
      return x(LONGEST.stackId);
    case 'AWS::URLSuffix':
      return x(LONGEST.urlSuffix);
  }
  const resource = template.Resources[name];
  if (!resource) {
    if (template.Parameters?.[name]) throw new Error(`parameter ${name}: no estimate of a parameter's value`);
    throw new Error(`Ref to ${name}, which the template does not define`);
  }
  switch (resource.Type) {
    case 'AWS::SecretsManager::Secret':
      return secretArn(template, name);
    case 'AWS::SQS::Queue':
      return `https://sqs.${x(LONGEST.region)}.${x(LONGEST.urlSuffix)}/${'0'.repeat(LONGEST.account)}/${resourceName(template, name, 'QueueName')}`;
    case 'AWS::DynamoDB::Table':
      return resourceName(template, name, 'TableName');
    case 'AWS::S3::Bucket':
      return resourceName(template, name, 'BucketName');
    case 'AWS::Lambda::Function':
      return resourceName(template, name, 'FunctionName');
    case 'AWS::Events::EventBus':
      return resourceName(template, name, 'Name');
    case 'AWS::SNS::Topic':
      return arn('sns', resourceName(template, name, 'TopicName'));
    case 'AWS::ApiGateway::RestApi':
    case 'AWS::ApiGatewayV2::Api':
      return x(10);
    case 'AWS::ApiGateway::Stage':
      return longestValue(template, resource.Properties?.StageName);
    case 'AWS::ApiGateway::DomainName':
    case 'AWS::ApiGatewayV2::DomainName':
      return longestValue(template, resource.Properties?.DomainName);
    default:
      throw new Error(`no estimate of Ref to a ${resource.Type} (${name})`);
  }
}

function longestAttribute(template: Template, logicalId: string, attribute: string): string {
  const resource = template.Resources[logicalId];
  if (!resource) throw new Error(`Fn::GetAtt of ${logicalId}, which the template does not define`);
  switch (`${resource.Type}.${attribute}`) {
    case 'AWS::Lambda::Function.Arn':
      return arn('lambda', `function:${resourceName(template, logicalId, 'FunctionName')}`);
    case 'AWS::SQS::Queue.Arn':
      return arn('sqs', resourceName(template, logicalId, 'QueueName'));
    case 'AWS::SQS::Queue.QueueName':
      return resourceName(template, logicalId, 'QueueName');
    case 'AWS::DynamoDB::Table.Arn':
      return arn('dynamodb', `table/${resourceName(template, logicalId, 'TableName')}`);
    case 'AWS::S3::Bucket.Arn':
      return `arn:${x(LONGEST.partition)}:s3:::${resourceName(template, logicalId, 'BucketName')}`;
    case 'AWS::Events::EventBus.Arn':
      return arn('events', `event-bus/${resourceName(template, logicalId, 'Name')}`);
    case 'AWS::Events::EventBus.Name':
      return resourceName(template, logicalId, 'Name');
    case 'AWS::SecretsManager::Secret.Id':
      return secretArn(template, logicalId);
    case 'AWS::Logs::LogGroup.Arn':
      return arn('logs', `log-group:${resourceName(template, logicalId, 'LogGroupName')}:*`);
    case 'AWS::Events::Rule.Arn':
      return arn('events', `rule/${x(LONGEST_GENERATED_NAME['AWS::Events::EventBus'])}/${resourceName(template, logicalId, 'Name')}`);
    case 'AWS::CloudWatch::Alarm.Arn':
    case 'AWS::CloudWatch::CompositeAlarm.Arn':
      return arn('cloudwatch', `alarm:${resourceName(template, logicalId, 'AlarmName')}`);
    case 'AWS::IAM::Role.Arn':
      return `arn:${x(LONGEST.partition)}:iam::${'0'.repeat(LONGEST.account)}:role/${resourceName(template, logicalId, 'RoleName')}`;
    default:
      throw new Error(`no estimate of Fn::GetAtt ${logicalId}.${attribute} (${resource.Type})`);
  }
}

/** The resource's own name when the template gives one, else the longest CloudFormation generates. */
function resourceName(template: Template, logicalId: string, property: string): string {
  const resource = template.Resources[logicalId];
  const own = resource.Properties?.[property];
  if (own !== undefined) return longestValue(template, own);
  const longest = LONGEST_GENERATED_NAME[resource.Type];
  if (longest === undefined) throw new Error(`no longest generated name for ${resource.Type}`);
  return x(longest);
}

function secretArn(template: Template, logicalId: string): string {
  const own = template.Resources[logicalId].Properties?.Name;
  const name = own !== undefined ? longestValue(template, own) : `${logicalId}-${x(GENERATED_SECRET_SUFFIX)}`;
  return arn('secretsmanager', `secret:${name}-${x(SECRET_ARN_SUFFIX)}`);
}

/**
 * A function's environment as Lambda measures it against its 4 KB limit: the JSON text of the
 * whole map of variables, in bytes, each value at its longest.
 */
export function environmentBytes(template: Template, logicalId: string): number {
  const variables = (template.Resources[logicalId].Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
  const measured = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, longestValue(template, value)]));
  return Buffer.byteLength(JSON.stringify(measured), 'utf8');
}
