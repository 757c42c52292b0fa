/**
 * `polling` on `github()` and `stripe()`: what the reconciler is told, what it may read, the
 * alarm when a recovery stalls, and every option that cannot work refused at synth by its name.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { GitHubHook, WebhookInbox, WebhookProvider } from '../../lib';
import { Env } from '../../lib/contract';
import { handlerSettings } from '../support/handler-settings';

const credentials = (stack: Stack, id: string) => secretsmanager.Secret.fromSecretNameV2(stack, id, `${id}/credentials`);

function synth(providers: (stack: Stack) => WebhookProvider[]): { stack: Stack; template: Template } {
  const stack = new Stack(new App(), 'Recovery', { env: { account: '111111111111', region: 'eu-west-1' } });
  new WebhookInbox(stack, 'Inbox', { providers: providers(stack) });
  return { stack, template: Template.fromStack(stack) };
}

/** The statements of the reconciler role's policies that read secrets, as text. */
function secretReads(template: Template): string {
  const role = Object.keys(template.findResources('AWS::IAM::Role')).find((id) => id.startsWith('InboxReconcilerRole'))!;
  return JSON.stringify(
    Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy: any) => policy.Properties.Roles.some((r: any) => r.Ref === role))
      .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement)
      .filter((statement: any) => JSON.stringify(statement.Action).includes('secretsmanager:GetSecretValue')),
  );
}

test('GitHub and Stripe recovery reach the reconciler with their defaults; it reads their credentials and GitHub’s signing secret only', () => {
  const { stack, template } = synth((scope) => [
    WebhookProvider.github({ polling: { apiKeySecret: credentials(scope, 'github'), githubHook: GitHubHook.repository('octo-org/octo-repo', 42) } }),
    WebhookProvider.stripe({ polling: { apiKeySecret: credentials(scope, 'stripe'), eventTypes: ['invoice.paid'] } }),
  ]);
  const env = handlerSettings(stack, 'InboxReconciler');
  // The secrets' ARNs are tokens: the setting is a join around them.
  const recovery = JSON.stringify(env[Env.RECOVERY]).replace(/\\"/g, '"');
  expect(recovery).toContain('"provider":"github","kind":"github","baseUrl":"https://api.github.com","credentialsSecretId":"arn:');
  expect(recovery).toContain('"hook":{"kind":"repository","owner":"octo-org/octo-repo","hookId":42},"overlapSeconds":300,"settleSeconds":0');
  expect(recovery).toContain('"provider":"stripe","kind":"stripe","baseUrl":"https://api.stripe.com"');
  expect(recovery).toContain('"eventTypes":["invoice.paid"],"overlapSeconds":300,"settleSeconds":900,"initialLookbackSeconds":3600,"timeoutMs":10000');
  expect(recovery.match(/signingSecretId/g)).toHaveLength(1);
  // Neither is a ledger poller.
  expect(env[Env.POLLING]).toBe('[]');
  const reads = secretReads(template);
  expect(reads).toContain('secret:github/credentials');
  expect(reads).toContain('secret:stripe/credentials');
  const signingSecrets = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
  expect(signingSecrets.filter((id) => reads.includes(id)).map((id) => id.replace(/[0-9A-F]{8}$/, ''))).toEqual(['InboxGithubSigningSecret']);
});

test('a recovered provider adds the RecoveryStalled alarm at the shortest stalledAfter; none without one', () => {
  const { template } = synth((scope) => [
    WebhookProvider.github({ polling: { apiKeySecret: credentials(scope, 'github'), githubHook: GitHubHook.app(), stalledAfter: Duration.minutes(30) } }),
    WebhookProvider.stripe({ polling: { apiKeySecret: credentials(scope, 'stripe') } }),
  ]);
  template.hasResourceProperties('AWS::CloudWatch::Alarm', {
    MetricName: 'RecoveryStalledSeconds',
    Statistic: 'Maximum',
    Threshold: 1800,
    AlarmDescription: Match.stringLikeRegexp('docs/RUNBOOK.md#recovery-stalled'),
  });
  // Not a ledger: no submission alarms.
  expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).not.toContain('OverdueSubmissions');
  const plain = synth(() => [WebhookProvider.github()]).template;
  expect(JSON.stringify(plain.findResources('AWS::CloudWatch::Alarm'))).not.toContain('RecoveryStalledSeconds');
});

test('options that cannot work are refused at synth, each by its name', () => {
  expect(() =>
    synth((scope) => [
      WebhookProvider.github({ polling: { apiKeySecret: credentials(scope, 'a') } }),
      WebhookProvider.github({
        name: 'ghes',
        polling: { apiKeySecret: credentials(scope, 'b'), githubHook: GitHubHook.repository('not a repo', 0), baseUrl: 'http://github.example.com/api/v3' },
      }),
      WebhookProvider.stripe({ polling: { apiKeySecret: credentials(scope, 'c'), horizon: Duration.hours(1), stalledAfter: Duration.seconds(10) } }),
      WebhookProvider.answerline({ polling: { apiKeySecret: credentials(scope, 'd'), githubHook: GitHubHook.app() } }),
    ]),
  ).toThrow(
    new RegExp(
      [
        'github: polling.githubHook is required',
        'ghes: polling.baseUrl must be an https:// URL \\(plain http only on a loopback address\\)',
        'ghes: polling.githubHook: a repository is written owner/name',
        'ghes: polling.githubHook: hookId must be a positive whole number',
        'stripe: polling.horizon: stripe is recovered from its own event log',
        'stripe: polling.stalledAfter: must be at least 1 minute',
        'answerline: polling.githubHook: only GitHub and Stripe are recovered from their own event log',
      ].join('[\\s\\S]*'),
    ),
  );
});

test('a loopback http:// base URL is accepted (the twin’s fakes), as is GitHub Enterprise Server over https', () => {
  expect(() =>
    synth((scope) => [
      WebhookProvider.github({
        polling: { apiKeySecret: credentials(scope, 'a'), githubHook: GitHubHook.organization('octo-org', 7), baseUrl: 'http://127.0.0.1:8080' },
      }),
      WebhookProvider.stripe({ polling: { apiKeySecret: credentials(scope, 'b'), baseUrl: 'https://stripe.internal.example' } }),
    ]),
  ).not.toThrow();
});
