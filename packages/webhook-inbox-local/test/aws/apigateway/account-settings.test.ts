/**
 * A REST API stage that writes logs to CloudWatch Logs deploys only once the account's API Gateway
 * CloudWatch role is set in the region; a new account has none, and API Gateway refuses the stage
 * ("CloudWatch Logs role ARN must be set in account settings to enable logging"). The twin refuses
 * such a template as that deploy would fail, before anything starts; it runs a stage that writes no
 * log, one whose stack sets the role first, or any when told the account has the role. Checked on
 * inboxes synthesized with each access logging choice, and on a plain aws-cdk-lib REST API with
 * execution logs.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { RestApiAccessLogging, WebhookInbox, WebhookIngress } from '../../../../../lib';
import { checkRestApiStageLogging, CLOUDWATCH_ROLE_NOT_SET } from '../../../src/aws/apigateway/account-settings';
import { TemplateError } from '../../../src/aws/cloudformation/template-error';
import type { SynthesizedStack } from '../../../src/aws/cloudformation/assembly';

/** The synthesized template of a stack holding a REST API inbox with `accessLogging`. */
function inboxStack(name: string, accessLogging?: RestApiAccessLogging): SynthesizedStack {
  const stack = new Stack(new App(), name);
  new WebhookInbox(stack, 'Inbox', { ingress: WebhookIngress.restApi({ accessLogging }) });
  return synthesized(stack);
}

function synthesized(stack: Stack): SynthesizedStack {
  return { stackName: stack.stackName, template: Template.fromStack(stack).toJSON() as SynthesizedStack['template'], assetRoot: '' };
}

/** What the check answers: the refusal's message, or '' when it lets the stacks run. */
function refusal(stacks: SynthesizedStack[], roleSetInAccount = false): string {
  try {
    checkRestApiStageLogging(stacks, roleSetInAccount);
    return '';
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return (error as Error).message;
  }
}

describe('the twin refuses a REST API stage that logs without the account’s CloudWatch role, as API Gateway does', () => {
  test('an inbox that relies on the account’s role is refused in a new account, with API Gateway’s message naming the stage', () => {
    const stack = inboxStack('Relying', RestApiAccessLogging.EXISTING_ACCOUNT_ROLE);
    const stageId = Object.keys(stack.template.Resources).find((id) => stack.template.Resources[id].Type === 'AWS::ApiGateway::Stage')!;
    const message = refusal([stack]);
    expect(message).toContain(`stack Relying, resource ${stageId} (AWS::ApiGateway::Stage): failed to create: ${CLOUDWATCH_ROLE_NOT_SET}`);
    expect(message).toMatch(/--api-gateway-cloudwatch-role ARN/);
    // Told the account has the role, it runs.
    expect(refusal([stack], true)).toBe('');
  });

  test('the default inbox (no access log) and one that sets the role itself, its stage depending on the setting, run in a new account', () => {
    expect(refusal([inboxStack('Plain')])).toBe('');
    expect(refusal([inboxStack('Creating', RestApiAccessLogging.CREATE_ACCOUNT_ROLE)])).toBe('');
  });

  test('a stack deployed after one that set the role may log; one deployed before it may not', () => {
    const creating = inboxStack('Creating', RestApiAccessLogging.CREATE_ACCOUNT_ROLE);
    const relying = inboxStack('Relying', RestApiAccessLogging.EXISTING_ACCOUNT_ROLE);
    expect(refusal([creating, relying])).toBe('');
    expect(refusal([relying, creating])).toMatch(/^stack Relying, /);
  });

  test('execution logs (a method logging level) need the role too; a setting the stage does not depend on may come after it', () => {
    const stack = new Stack(new App(), 'Execution');
    const api = new apigw.RestApi(stack, 'Api', { cloudWatchRole: false, deployOptions: { loggingLevel: apigw.MethodLoggingLevel.ERROR } });
    api.root.addMethod('GET', new apigw.MockIntegration());
    // The account setting exists in the template, but nothing orders it before the stage.
    new apigw.CfnAccount(stack, 'Account', { cloudWatchRoleArn: 'arn:aws:iam::123456789012:role/apigateway-logs' });
    expect(refusal([synthesized(stack)])).toMatch(
      /^stack Execution, resource ApiDeploymentStageprod\w+ \(AWS::ApiGateway::Stage\): failed to create: CloudWatch Logs role ARN/,
    );
  });
});
