/**
 * The property of a resource type's CloudFormation template that names it, and the longest name
 * its service accepts: what CloudFormation generates for a resource that names none fits in it.
 * The construct counts such a name at that length (docs/LIMITS.md); the local twin names resources
 * within it.
 */
export const RESOURCE_NAMES: Readonly<Record<string, { readonly property: string; readonly maxLength: number; readonly lowerCase?: boolean }>> = {
  'AWS::DynamoDB::Table': { property: 'TableName', maxLength: 255 },
  'AWS::SQS::Queue': { property: 'QueueName', maxLength: 80 },
  'AWS::S3::Bucket': { property: 'BucketName', maxLength: 63, lowerCase: true },
  'AWS::SecretsManager::Secret': { property: 'Name', maxLength: 512 },
  'AWS::Events::EventBus': { property: 'Name', maxLength: 256 },
  'AWS::Events::Rule': { property: 'Name', maxLength: 64 },
  'AWS::IAM::Role': { property: 'RoleName', maxLength: 64 },
  'AWS::Lambda::Function': { property: 'FunctionName', maxLength: 64 },
  'AWS::Logs::LogGroup': { property: 'LogGroupName', maxLength: 512 },
  'AWS::CloudWatch::Alarm': { property: 'AlarmName', maxLength: 255 },
  'AWS::CloudWatch::CompositeAlarm': { property: 'AlarmName', maxLength: 255 },
  'AWS::CloudWatch::Dashboard': { property: 'DashboardName', maxLength: 255 },
  'AWS::SNS::Topic': { property: 'TopicName', maxLength: 256 },
};
