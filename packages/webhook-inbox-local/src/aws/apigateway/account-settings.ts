/**
 * API Gateway's account settings, as far as a deploy depends on them: whether the account's
 * CloudWatch role is set in the region. API Gateway refuses a REST API stage that writes logs to
 * CloudWatch Logs (an access log to a log group, execution logs, data traces) until it is, and a new
 * account has none: CloudFormation then fails the stage and rolls the stack back. HTTP APIs need no
 * such setting. The role is set by an `AWS::ApiGateway::Account` resource of a stack deployed
 * before, or of the same stack when the stage depends on it, or it was set in the account already.
 */
import { constructPath, SynthesizedStack, TemplateResource } from '../cloudformation/assembly';
import { TemplateError } from '../cloudformation/template-error';

/** API Gateway's answer to a stage that asks for logs while the account's CloudWatch role is not set. */
export const CLOUDWATCH_ROLE_NOT_SET = 'CloudWatch Logs role ARN must be set in account settings to enable logging';

/**
 * Refuses the first REST API stage of `stacks` (deployed in this order) that would log to CloudWatch
 * Logs while the account's CloudWatch role is not set before it.
 * @param roleSetInAccount whether the account had the role before any of these stacks
 */
export function checkRestApiStageLogging(stacks: readonly SynthesizedStack[], roleSetInAccount: boolean): void {
  let roleSet = roleSetInAccount;
  for (const stack of stacks) {
    const resources = stack.template.Resources;
    const accountSettings = Object.keys(resources).filter(
      (id) => resources[id].Type === 'AWS::ApiGateway::Account' && resources[id].Properties?.CloudWatchRoleArn !== undefined,
    );
    for (const [logicalId, stage] of Object.entries(resources)) {
      if (stage.Type !== 'AWS::ApiGateway::Stage' || !logsToCloudWatch(stage)) continue;
      if (roleSet || accountSettings.some((account) => dependsOn(resources, logicalId, account))) continue;
      throw new TemplateError(
        `failed to create: ${CLOUDWATCH_ROLE_NOT_SET} (Service: ApiGateway, Status Code: 400). If the account has the role ` +
          '(aws apigateway get-account), give it to the twin (--api-gateway-cloudwatch-role ARN); otherwise a stack must set it first ' +
          '(an inbox with accessLogging CREATE_ACCOUNT_ROLE), or the stage must write no log',
        {
          stackName: stack.stackName,
          logicalId,
          type: stage.Type,
          ...(stage.Metadata?.['aws:cdk:path'] !== undefined ? { constructPath: constructPath(stack, logicalId, stage) } : {}),
        },
      );
    }
    roleSet ||= accountSettings.length > 0;
  }
}

/** Whether a stage writes logs into CloudWatch Logs: access logs anywhere but a Firehose stream, or execution logs or data traces of a method. */
function logsToCloudWatch(stage: TemplateResource): boolean {
  const properties = stage.Properties ?? {};
  const accessLog = properties.AccessLogSetting as { DestinationArn?: unknown } | undefined;
  const toFirehose = JSON.stringify(accessLog?.DestinationArn ?? '').includes(':firehose:');
  const methodSettings = (properties.MethodSettings as { LoggingLevel?: unknown; DataTraceEnabled?: unknown }[] | undefined) ?? [];
  const executionLogs = methodSettings.some(
    (setting) => setting.LoggingLevel === 'INFO' || setting.LoggingLevel === 'ERROR' || String(setting.DataTraceEnabled) === 'true',
  );
  return (accessLog?.DestinationArn !== undefined && !toFirehose) || executionLogs;
}

/** Whether `from` is created after `to`: it depends on it, directly or through its own dependencies. */
function dependsOn(resources: Readonly<Record<string, TemplateResource>>, from: string, to: string, seen = new Set<string>()): boolean {
  if (seen.has(from)) return false;
  seen.add(from);
  const direct = [resources[from]?.DependsOn ?? []].flat();
  return direct.includes(to) || direct.some((next) => dependsOn(resources, next, to, seen));
}
