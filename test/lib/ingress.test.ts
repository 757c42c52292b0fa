/**
 * The ingress, stated as rules on the template: the HTTP API stays the default; a REST API ingress
 * serves the same routes with the same throttling and access logs, passes every body base64-encoded
 * (binary media type `*` / `*`), invokes the verifier only from its own stage's methods, can carry an
 * AWS WAF web ACL; either ingress takes a custom domain, and the endpoint output then names it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Duration, Size, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import { AwsSolutionsChecks } from 'cdk-nag';
import { RestApiAccessLogging, WebhookInbox, WebhookInboxProps, WebhookIngress, WebhookProvider } from '../../lib';
import { Env } from '../../lib/contract';
import { handlerSettings } from '../support/handler-settings';

const WEB_ACL_ARN = 'arn:aws:wafv2:eu-west-1:111111111111:regional/webacl/webhooks/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';

function build(props: WebhookInboxProps = {}, populate?: (stack: Stack) => WebhookInboxProps): { stack: Stack; inbox: WebhookInbox; template: Template } {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const inbox = new WebhookInbox(stack, 'Inbox', { ...props, ...populate?.(stack) });
  return { stack, inbox, template: Template.fromStack(stack) };
}

function domainOf(stack: Stack, withZone: boolean) {
  const certificate = acm.Certificate.fromCertificateArn(stack, 'Certificate', 'arn:aws:acm:eu-west-1:111111111111:certificate/abc');
  const hostedZone = withZone ? route53.HostedZone.fromHostedZoneAttributes(stack, 'Zone', { hostedZoneId: 'Z123', zoneName: 'example.com' }) : undefined;
  return { domainName: 'hooks.example.com', certificate, hostedZone };
}

function logicalId(template: Template, type: string): string {
  const ids = Object.keys(template.findResources(type));
  expect(ids).toHaveLength(1);
  return ids[0];
}

function outputsByDescription(template: Template): Record<string, unknown> {
  return Object.fromEntries(Object.values(template.findOutputs('*')).map((output: any) => [output.Description, output.Value]));
}

/** What the verifier reads: its environment and its configuration file. */
function verifierSettings(stack: Stack): Record<string, unknown> {
  return handlerSettings(stack, 'InboxVerifier');
}

describe('the REST API ingress', () => {
  const { stack, inbox, template } = build({
    providers: [WebhookProvider.answerline(), WebhookProvider.meta()],
    ingress: WebhookIngress.restApi({ webAclArn: WEB_ACL_ARN }),
  });
  const restApiId = () => logicalId(template, 'AWS::ApiGateway::RestApi');
  const stageId = () => logicalId(template, 'AWS::ApiGateway::Stage');

  test('replaces the HTTP API: a regional REST API that passes every content type as binary', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 0);
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 0);
    template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      BinaryMediaTypes: ['*/*'],
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    // No account-wide CloudWatch role: an inbox must not own the region's API Gateway account settings.
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
  });

  test('serves POST /hooks/<name> per provider (and GET for Meta), each a Lambda proxy integration of the verifier without authorizer', () => {
    const resources = template.findResources('AWS::ApiGateway::Resource');
    expect(
      Object.values(resources)
        .map((resource: any) => resource.Properties.PathPart)
        .sort(),
    ).toEqual(['answerline', 'hooks', 'meta']);
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method')).map((method: any) => method.Properties);
    const pathOf = (resourceRef: any) => (resources[resourceRef.Ref] as any).Properties.PathPart;
    expect(methods.map((method) => `${method.HttpMethod} ${pathOf(method.ResourceId)}`).sort()).toEqual(['GET meta', 'POST answerline', 'POST meta']);
    const verifierId = Object.keys(template.findResources('AWS::Lambda::Function')).find((id) => id.startsWith('InboxVerifier'))!;
    for (const method of methods) {
      expect(method.AuthorizationType).toBe('NONE');
      expect(method.Integration.Type).toBe('AWS_PROXY');
      expect(method.Integration.IntegrationHttpMethod).toBe('POST');
      expect(JSON.stringify(method.Integration.Uri)).toContain(verifierId);
    }
  });

  test('throttles every method of its prod stage as the HTTP API throttles its $default stage', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      MethodSettings: [Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 })],
    });
    const overridden = build({ ingress: WebhookIngress.restApi(), throttle: { rateLimit: 5, burstLimit: 7 } }).template;
    overridden.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 7 })],
    });
  });

  test('lets API Gateway invoke the verifier only from this API’s prod stage, under /hooks/, in one permission; no test-invoke permission', () => {
    // One statement whatever the number of providers: a function's resource policy is limited to 20 KB.
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission'))
      .map((permission: any) => permission.Properties)
      .filter((permission) => permission.Principal === 'apigateway.amazonaws.com');
    expect(permissions).toHaveLength(1);
    const [permission] = permissions;
    expect(permission.Action).toBe('lambda:InvokeFunction');
    expect(permission.FunctionName).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^InboxVerifier/), 'Arn'] });
    const parts = permission.SourceArn['Fn::Join'][1];
    // arn:<partition>:execute-api:<region>:<account>:<this API's id>/<its stage>/<any method>/hooks/<any provider>
    expect(parts.slice(-4)).toEqual([{ Ref: restApiId() }, '/', { Ref: stageId() }, '/*/hooks/*']);
    expect(parts.filter((part: unknown) => typeof part === 'string').join('|')).toContain(':execute-api:eu-west-1:111111111111:');
  });

  test('associates the web ACL with its stage (by reference, so once the stage exists)', () => {
    const associations = template.findResources('AWS::WAFv2::WebACLAssociation');
    expect(Object.keys(associations)).toHaveLength(1);
    const association: any = Object.values(associations)[0];
    expect(association.Properties.WebACLArn).toBe(WEB_ACL_ARN);
    // arn:<partition>:apigateway:<region>::/restapis/<api id>/stages/<stage name>
    expect(association.Properties.ResourceArn['Fn::Join'][1].slice(-4)).toEqual([
      ':apigateway:eu-west-1::/restapis/',
      { Ref: restApiId() },
      '/stages/',
      { Ref: stageId() },
    ]);
    template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'prod' });
  });

  test('outputs the stage URL under the key and description the HTTP API’s URL had; api and stage throw naming restApi', () => {
    const outputs = template.findOutputs('*');
    const endpoint = Object.entries(outputs).find(([key]) => key.startsWith('InboxEndpointUrl'))!;
    expect(endpoint[1].Description).toBe('Webhook inbox endpoint base URL');
    const joined = JSON.stringify(endpoint[1].Value);
    expect(joined).toContain(`{"Ref":"${restApiId()}"}`);
    expect(joined).toMatch(/execute-api\.eu-west-1\.".*\/prod"/);
    expect(JSON.stringify(outputsByDescription(template)['Webhook URL for answerline'])).toMatch(/\/prod\/hooks\/answerline"/);
    expect(Object.keys(outputs).some((key) => key.startsWith('InboxDomainTarget'))).toBe(false);
    expect(inbox.restApi).toBeDefined();
    expect(stack.resolve(inbox.restApi!.restApiId)).toEqual({ Ref: restApiId() });
    expect(() => inbox.api).toThrow(/ingress is a REST API.*use restApi/);
    expect(() => inbox.stage).toThrow(/restApi\.deploymentStage/);
  });

  test('its metrics and dashboard read the REST API’s own stage (AWS/ApiGateway by ApiName and Stage), under its name', () => {
    const metric = inbox.metricVerifierServerErrors();
    expect(metric.namespace).toBe('AWS/ApiGateway');
    expect(metric.metricName).toBe('5XXError');
    const apiName = template.findResources('AWS::ApiGateway::RestApi')[restApiId()].Properties.Name;
    expect(stack.resolve(metric.dimensions)).toEqual({ ApiName: apiName, Stage: { Ref: stageId() } });
    const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    const body = (dashboard.Properties.DashboardBody['Fn::Join'][1] as unknown[])
      .map((part) => (typeof part === 'string' ? part : JSON.stringify(part)))
      .join('');
    expect(body).toContain(`"ApiName","${apiName}","Stage"`);
    expect(body).not.toContain('ApiId');
    expect(body).toContain('Endpoint (REST API)');
    expect(body).not.toContain('HTTP API');
  });

  test('the default body limit keeps every base64-encoded body within Lambda’s payload limit; a larger maxBodySize is refused at synth', () => {
    // The rule: 4 characters per 3 bytes, plus the 64 KiB the event's other fields take, within 6 MiB.
    const fits = (bytes: number) => Math.ceil(bytes / 3) * 4 + 64 * 1024 <= 6 * 1024 * 1024;
    const limit = Number(verifierSettings(stack)[Env.MAX_BODY_BYTES]);
    expect(limit).toBe(4_500_000);
    expect(fits(limit)).toBe(true);
    const largest = 4_669_440;
    expect(fits(largest)).toBe(true);
    expect(fits(largest + 3)).toBe(false);
    expect(verifierSettings(build({ ingress: WebhookIngress.restApi(), maxBodySize: Size.bytes(largest) }).stack)[Env.MAX_BODY_BYTES]).toBe(String(largest));
    expect(() => build({ ingress: WebhookIngress.restApi(), maxBodySize: Size.bytes(largest + 1) })).toThrow(
      /maxBodySize \(bytes, REST API ingress\): must be a whole number from 1 to 4669440, got 4669441/,
    );
    // The HTTP API keeps its own limit and default.
    expect(verifierSettings(build().stack)[Env.MAX_BODY_BYTES]).toBe('6000000');
    expect(() => build({ maxBodySize: Size.bytes(largest + 1) })).not.toThrow();
  });
});

describe('REST API access logs, which need the account’s API Gateway CloudWatch role', () => {
  /**
   * The rule API Gateway applies: a REST API stage that logs to CloudWatch Logs (an access log to a
   * log group, or execution logs at INFO or ERROR, or data traces) is refused unless the account's
   * CloudWatch role is set in the region. Set by the template, the setting must exist before the stage.
   */
  function stagesLoggingWithoutTheRole(template: Template): string[] {
    const resources = template.toJSON().Resources as Record<string, any>;
    const accountSettings = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::ApiGateway::Account' && resource.Properties?.CloudWatchRoleArn)
      .map(([id]) => id);
    return Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::ApiGateway::Stage')
      .filter(([, { Properties: stage }]) => {
        const accessLog = JSON.stringify(stage.AccessLogSetting?.DestinationArn ?? '');
        const logsToCloudWatch = stage.AccessLogSetting !== undefined && !accessLog.includes(':firehose:');
        const executionLogs = (stage.MethodSettings ?? []).some(
          (setting: any) => ['INFO', 'ERROR'].includes(setting.LoggingLevel) || setting.DataTraceEnabled === true,
        );
        return logsToCloudWatch || executionLogs;
      })
      .filter(([, stage]) => !accountSettings.some((account) => [stage.DependsOn ?? []].flat().includes(account)))
      .map(([id]) => id);
  }

  test('by default the stage writes none, and nothing account-wide is created: it deploys in an account that never set the role', () => {
    const { template } = build({ ingress: WebhookIngress.restApi() });
    expect(stagesLoggingWithoutTheRole(template)).toEqual([]);
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
    template.resourceCountIs('AWS::Logs::LogGroup', 3); // the three functions' only: no access log group
    const [stage] = Object.values(template.findResources('AWS::ApiGateway::Stage'));
    expect(stage.Properties.AccessLogSetting).toBeUndefined();
  });

  test('CREATE_ACCOUNT_ROLE: JSON access logs, and the account setting with a role API Gateway assumes, created before the stage and kept', () => {
    const { template } = build({ ingress: WebhookIngress.restApi({ accessLogging: RestApiAccessLogging.CREATE_ACCOUNT_ROLE }) });
    expect(stagesLoggingWithoutTheRole(template)).toEqual([]);
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
    const accounts = template.findResources('AWS::ApiGateway::Account');
    expect(Object.keys(accounts)).toHaveLength(1);
    const [account] = Object.values(accounts);
    // Deleting the stack must not unset the role other APIs of the region log with.
    expect(account.DeletionPolicy).toBe('Retain');
    const roleId = account.Properties.CloudWatchRoleArn['Fn::GetAtt'][0];
    const role = template.findResources('AWS::IAM::Role')[roleId];
    expect(role.DeletionPolicy).toBe('Retain');
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } }),
    ]);
  });

  test('EXISTING_ACCOUNT_ROLE: JSON access logs, relying on the role the account already has (the documented prerequisite)', () => {
    const { template } = build({ ingress: WebhookIngress.restApi({ accessLogging: RestApiAccessLogging.EXISTING_ACCOUNT_ROLE }) });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
    expect(stagesLoggingWithoutTheRole(template)).toHaveLength(1);
  });

  test('the HTTP API always writes access logs: it needs no account setting', () => {
    const { template } = build();
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { AccessLogSettings: { DestinationArn: Match.anyValue() } });
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
  });
});

describe('each API has a name of its own, so that its metrics and alarms are its own', () => {
  /** Two inboxes in one stack and one in another, each stack in the same account and region. */
  function threeInboxes(ingress: () => WebhookIngress) {
    const app = new App();
    const env = { account: '111111111111', region: 'eu-west-1' };
    const payments = new Stack(app, 'Payments', { env });
    const reports = new Stack(app, 'Reports', { env });
    const inboxes = [new WebhookInbox(payments, 'Inbox', { ingress: ingress() }), new WebhookInbox(payments, 'Other', { ingress: ingress() })];
    inboxes.push(new WebhookInbox(reports, 'Inbox', { ingress: ingress() }));
    return inboxes.map((inbox) => ({ inbox, stack: Stack.of(inbox), template: Template.fromStack(Stack.of(inbox)) }));
  }
  const names = (template: Template, type: string) => Object.values(template.findResources(type)).map((resource) => resource.Properties.Name as string);

  test('REST APIs: unique names, each holding its stack’s; each 5xx alarm watches its own API and stage only', () => {
    const inboxes = threeInboxes(() => WebhookIngress.restApi());
    const all = [...new Set(inboxes.flatMap(({ template }) => names(template, 'AWS::ApiGateway::RestApi')))];
    expect(all).toHaveLength(3);
    for (const name of all) expect(name.length).toBeLessThanOrEqual(128);
    for (const { inbox, stack, template } of inboxes) {
      const apiName = stack.resolve(inbox.restApi!.restApiName);
      expect(apiName).toContain(stack.stackName);
      const alarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
        (candidate) => candidate.Properties.MetricName === '5XXError' && JSON.stringify(candidate).includes(inbox.node.id),
      );
      expect(alarm).toBeDefined();
      expect(alarm!.Properties.Dimensions).toEqual([
        { Name: 'ApiName', Value: apiName },
        { Name: 'Stage', Value: stack.resolve(inbox.restApi!.deploymentStage.stageName) },
      ]);
    }
  });

  test('HTTP APIs: unique names too (their metrics go by id)', () => {
    const all = new Set(threeInboxes(() => WebhookIngress.httpApi()).flatMap(({ template }) => names(template, 'AWS::ApiGatewayV2::Api')));
    expect(all.size).toBe(3);
  });
});

describe('ingress props that cannot work are refused at synth, naming the field', () => {
  test('a web ACL that is no regional WAF web ACL ARN (a CloudFront one, a WAF Classic one, garbage)', () => {
    for (const arn of [
      'arn:aws:wafv2:us-east-1:111111111111:global/webacl/webhooks/a1b2c3d4',
      'arn:aws:waf-regional:eu-west-1:111111111111:webacl/a1b2c3d4',
      'webhooks',
    ]) {
      expect(() => build({ ingress: WebhookIngress.restApi({ webAclArn: arn }) })).toThrow(
        new RegExp(`ingress\\.webAclArn: must be the ARN of a REGIONAL AWS WAF web ACL.*got "${arn}"`),
      );
    }
  });

  test('a REST API with nothing to serve (only polled providers)', () => {
    expect(() =>
      build({
        providers: [WebhookProvider.messageBatches({ apiKeySecret: undefined as never })],
        ingress: WebhookIngress.restApi(),
      }),
    ).toThrow(/ingress: a REST API needs a provider that posts/);
  });

  test('a verifier timeout longer than the API waits for it (29 s behind a REST API, 30 s behind an HTTP API); up to that, accepted', () => {
    // API Gateway gives up on its Lambda integration then and answers 504, while the verifier may still be storing the delivery.
    const withTimeout = (seconds: number, ingress?: WebhookIngress) => () => build({ ingress, verifierFunctionProps: { timeout: Duration.seconds(seconds) } });
    expect(withTimeout(30, WebhookIngress.restApi())).toThrow(
      /verifierFunctionProps\.timeout: must be at most 29 seconds, the integration timeout of a REST API: API Gateway answers 504.*got 30 seconds/,
    );
    expect(withTimeout(29, WebhookIngress.restApi())).not.toThrow();
    expect(withTimeout(31)).toThrow(/verifierFunctionProps\.timeout: must be at most 30 seconds, the integration timeout of an HTTP API.*got 31 seconds/);
    expect(withTimeout(30)).not.toThrow();
  });
});

describe('a custom domain', () => {
  test('HTTP API: a domain name mapped to the $default stage, an alias record in the zone, and the outputs name the domain', () => {
    const { template } = build({}, (stack) => ({ ingress: WebhookIngress.httpApi({ domain: domainOf(stack, true) }) }));
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'hooks.example.com',
      DomainNameConfigurations: [Match.objectLike({ CertificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/abc', EndpointType: 'REGIONAL' })],
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', {
      ApiId: { Ref: logicalId(template, 'AWS::ApiGatewayV2::Api') },
      DomainName: { Ref: logicalId(template, 'AWS::ApiGatewayV2::DomainName') },
      Stage: '$default',
    });
    expect(Object.values(template.findResources('AWS::ApiGatewayV2::ApiMapping'))[0].DependsOn).toEqual([logicalId(template, 'AWS::ApiGatewayV2::Stage')]);
    template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: 'hooks.example.com.',
      Type: 'A',
      HostedZoneId: 'Z123',
      AliasTarget: {
        DNSName: { 'Fn::GetAtt': [logicalId(template, 'AWS::ApiGatewayV2::DomainName'), 'RegionalDomainName'] },
        HostedZoneId: { 'Fn::GetAtt': [logicalId(template, 'AWS::ApiGatewayV2::DomainName'), 'RegionalHostedZoneId'] },
      },
    });
    const outputs = outputsByDescription(template);
    expect(outputs['Webhook inbox endpoint base URL']).toBe('https://hooks.example.com');
    expect(outputs['Webhook URL for answerline']).toBe('https://hooks.example.com/hooks/answerline');
    expect(outputs['Webhook inbox custom domain DNS target']).toEqual({
      'Fn::GetAtt': [logicalId(template, 'AWS::ApiGatewayV2::DomainName'), 'RegionalDomainName'],
    });
  });

  test('REST API: a regional TLS 1.2 domain name mapped to the prod stage at its root; without a zone, no record and the DNS target is an output', () => {
    const { inbox, template } = build({}, (stack) => ({ ingress: WebhookIngress.restApi({ domain: domainOf(stack, false), webAclArn: WEB_ACL_ARN }) }));
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'hooks.example.com',
      RegionalCertificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/abc',
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    const mappings = Object.values(template.findResources('AWS::ApiGateway::BasePathMapping')).map((mapping: any) => mapping.Properties);
    expect(mappings).toHaveLength(1);
    expect(mappings[0].BasePath).toBeUndefined();
    expect(mappings[0].RestApiId).toEqual({ Ref: logicalId(template, 'AWS::ApiGateway::RestApi') });
    expect(mappings[0].Stage).toEqual({ Ref: logicalId(template, 'AWS::ApiGateway::Stage') });
    template.resourceCountIs('AWS::Route53::RecordSet', 0);
    const outputs = outputsByDescription(template);
    expect(outputs['Webhook inbox endpoint base URL']).toBe('https://hooks.example.com');
    expect(inbox.urlFor('answerline')).toBe('https://hooks.example.com/hooks/answerline');
    expect(outputs['Webhook inbox custom domain DNS target']).toEqual({
      'Fn::GetAtt': [logicalId(template, 'AWS::ApiGateway::DomainName'), 'RegionalDomainName'],
    });
  });

  test('REST API with a hosted zone: an alias record to the domain’s regional name', () => {
    const { template } = build({}, (stack) => ({ ingress: WebhookIngress.restApi({ domain: domainOf(stack, true), webAclArn: WEB_ACL_ARN }) }));
    template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: 'hooks.example.com.',
      Type: 'A',
      AliasTarget: { DNSName: { 'Fn::GetAtt': [logicalId(template, 'AWS::ApiGateway::DomainName'), 'RegionalDomainName'] } },
    });
  });
});

test('the default ingress is the HTTP API, with no REST API, no web ACL and no domain; restApi is undefined', () => {
  const { inbox, template } = build();
  template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
  template.resourceCountIs('AWS::ApiGateway::RestApi', 0);
  template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
  expect(inbox.restApi).toBeUndefined();
  expect(inbox.api).toBeDefined();
  const explicit = build({ ingress: WebhookIngress.httpApi() }).template.toJSON();
  expect(JSON.stringify(explicit).replace(/[0-9a-f]{64}/g, '<hash>')).toBe(JSON.stringify(template.toJSON()).replace(/[0-9a-f]{64}/g, '<hash>'));
});

describe('cdk-nag over a REST API ingress', () => {
  /** Every rule cdk-nag's AwsSolutions pack reports unacknowledged, errors and warnings alike, from its validation report. */
  function nagRules(props: WebhookInboxProps): string[] {
    const app = new App();
    new WebhookInbox(new Stack(app, 'Nag'), 'Inbox', props);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    try {
      app.synth();
    } catch {
      // An error finding fails the synth; the report names it as it names warnings.
    }
    const report = join(app.outdir, 'validation-report.json');
    if (!existsSync(report)) return [];
    const parsed = JSON.parse(readFileSync(report, 'utf8')) as { pluginReports: { violations: { ruleName: string }[] }[] };
    return parsed.pluginReports.flatMap((plugin) => plugin.violations.map((violation) => violation.ruleName));
  }

  test('with a web ACL: no unacknowledged finding, error or warning', () => {
    expect(
      nagRules({ providers: [WebhookProvider.answerline(), WebhookProvider.meta()], ingress: WebhookIngress.restApi({ webAclArn: WEB_ACL_ARN }) }),
    ).toEqual([]);
  });

  test('with access logs, the account role created or relied on: no unacknowledged finding either', () => {
    for (const accessLogging of [RestApiAccessLogging.CREATE_ACCOUNT_ROLE, RestApiAccessLogging.EXISTING_ACCOUNT_ROLE]) {
      expect(nagRules({ ingress: WebhookIngress.restApi({ webAclArn: WEB_ACL_ARN, accessLogging }) })).toEqual([]);
    }
  });

  test('without one: the WAF warning (APIG3) is left for the app to decide, and it is the only finding', () => {
    expect(nagRules({ ingress: WebhookIngress.restApi() }).map((rule) => rule.replace(/^.*(AwsSolutions-[A-Z]+\d+).*$/, '$1'))).toEqual(['AwsSolutions-APIG3']);
  });
});
