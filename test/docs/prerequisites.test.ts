/**
 * What docs/DEPLOY.md's prerequisites tell an operator to check before the first deploy agrees with
 * what the synthesized template asks of the account: the CDK bootstrap version its
 * `CheckBootstrapVersion` rule accepts, and the processor's default maximum concurrency, which
 * must leave the verifier room in a new account (10 concurrent executions). Each check names the
 * command that reads it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { WebhookInbox } from '../../lib';

const deploy = readFileSync(join(__dirname, '..', '..', 'docs', 'DEPLOY.md'), 'utf8');
/** The Prerequisites section, up to the next section of its level. */
const prerequisites = /^## Prerequisites\n([\s\S]*?)^## /m.exec(deploy)?.[1] ?? '';
const template = Template.fromStack(
  (() => {
    const stack = new Stack(new App(), 'Answers');
    new WebhookInbox(stack, 'Inbox');
    return stack;
  })(),
).toJSON();

/** The one number `pattern` captures in the section. */
function stated(pattern: RegExp): number {
  const match = pattern.exec(prerequisites);
  if (!match) throw new Error(`docs/DEPLOY.md#prerequisites states nothing matching ${pattern}`);
  return Number(match[1]);
}

test('the bootstrap version it asks for is the least the template’s rule accepts', () => {
  const assertion = template.Rules.CheckBootstrapVersion.Assertions[0].Assert['Fn::Not'][0]['Fn::Contains'][0] as string[];
  const least = stated(/version (\d+) or newer/);
  expect(assertion.map(Number)).toEqual(Array.from({ length: least - 1 }, (_, index) => index + 1));
  expect(prerequisites).toContain('aws ssm get-parameter --name /cdk-bootstrap/hnb659fds/version');
});

test('the processor concurrency it states is the template’s, and leaves the verifier at least half of a new account’s', () => {
  const [mapping] = Object.values(template.Resources as Record<string, any>).filter((resource) => resource.Type === 'AWS::Lambda::EventSourceMapping');
  const processor = stated(/`processorMaxConcurrency` \((\d+) by default\)/);
  const newAccount = stated(/starts with a quota of (\d+) concurrent executions/);
  expect(processor).toBe(mapping.Properties.ScalingConfig.MaximumConcurrency);
  expect(newAccount - processor).toBeGreaterThanOrEqual(newAccount / 2);
  expect(prerequisites).toContain('aws lambda get-account-settings');
});

test('it names the API Gateway account setting a REST API’s logs need, the command that reads it, and API Gateway’s refusal', () => {
  expect(prerequisites).toContain('aws apigateway get-account');
  expect(prerequisites).toContain('CloudWatch Logs role ARN must be set in account settings to enable logging');
});
