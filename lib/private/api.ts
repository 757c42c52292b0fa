import { Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as targets from 'aws-cdk-lib/aws-route53-targets';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct, IConstruct } from 'constructs';
import { GET_CHECKED_ADAPTERS, HOOKS_PATH, POLLED_ONLY_ADAPTERS, REST_API_STAGE_NAME } from '../contract';
import { WebhookIngress, WebhookIngressDomain, WebhookIngressType } from '../ingress';
import type { WebhookProviderConfig } from '../provider';

/** The front door an inbox was given: one of the two APIs, and the base URL providers post to. */
export interface Endpoint {
  readonly httpApi?: apigwv2.HttpApi;
  readonly httpStage?: apigwv2.HttpStage;
  readonly restApi?: apigw.RestApi;
  /** The base URL providers post to: the custom domain's when one is set, the API's own otherwise. */
  readonly url: string;
  /** The host name a custom domain's DNS record points at, when there is a custom domain. */
  readonly domainTarget?: string;
}

/** The path a provider posts to: `/hooks/<name>`. */
export function hookPath(providerName: string): string {
  return `${HOOKS_PATH}/${providerName}`;
}

/** What a provider posts with: POST, and GET for a provider that checks the endpoint with one; a polled-only provider sends nothing. */
function routesOf(providers: readonly WebhookProviderConfig[]): { name: string; methods: string[] }[] {
  return providers
    .filter((provider) => !POLLED_ONLY_ADAPTERS.includes(provider.adapter))
    .map((provider) => ({ name: provider.name, methods: GET_CHECKED_ADAPTERS.includes(provider.adapter) ? ['POST', 'GET'] : ['POST'] }));
}

const AUTHORIZER_REASON =
  'Providers authenticate each delivery with an HMAC signature over the raw body, verified by the verifier ' +
  'before anything is stored; they cannot present IAM or JWT credentials, and an authorizer never sees the body.';

/** An authorizer cannot apply to a signed webhook route: acknowledged on the route (or method) alone. */
function acknowledgeNoAuthorizer(route: IConstruct, ids: readonly string[]): void {
  for (const id of ids) Validations.of(route).acknowledge({ id: `AwsSolutions::${id}`, reason: AUTHORIZER_REASON });
}

/**
 * The front door: the ingress's API with a throttled, access-logged stage and one
 * `POST /hooks/<name>` route per provider (and `GET` for a provider that checks the endpoint
 * with one), each integrated with the verifier; then the custom domain, when one is set.
 */
export function createEndpoint(
  scope: Construct,
  ingress: WebhookIngress,
  verifier: lambda.IFunction,
  providers: readonly WebhookProviderConfig[],
  throttle: apigwv2.ThrottleSettings,
  logRetention: logs.RetentionDays,
): Endpoint {
  const accessLogs = new logs.LogGroup(scope, 'AccessLogs', { retention: logRetention });
  return ingress.type === WebhookIngressType.REST_API
    ? createRestEndpoint(scope, ingress, verifier, providers, throttle, accessLogs)
    : createHttpEndpoint(scope, ingress, verifier, providers, throttle, accessLogs);
}

function createHttpEndpoint(
  scope: Construct,
  ingress: WebhookIngress,
  verifier: lambda.IFunction,
  providers: readonly WebhookProviderConfig[],
  throttle: apigwv2.ThrottleSettings,
  accessLogs: logs.LogGroup,
): Endpoint {
  const api = new apigwv2.HttpApi(scope, 'Api', {
    description: 'Webhook inbox endpoint',
    createDefaultStage: false,
  });
  const stage = new apigwv2.HttpStage(scope, 'DefaultStage', {
    httpApi: api,
    stageName: '$default',
    autoDeploy: true,
    throttle,
    accessLogSettings: {
      destination: new apigwv2.LogGroupLogDestination(accessLogs),
    },
  });
  // One invoke permission for this API: one per route would exceed the function's 20 KB resource
  // policy at about 35 providers (docs/LIMITS.md); every route of this API is the verifier's.
  const integration = new HttpLambdaIntegration('Verifier', verifier, { scopePermissionToRoute: false });
  for (const { name, methods } of routesOf(providers)) {
    const httpMethods = methods.map((method) => method as apigwv2.HttpMethod);
    for (const route of api.addRoutes({ path: hookPath(name), methods: httpMethods, integration })) {
      acknowledgeNoAuthorizer(route, ['AwsSolutions-APIG4']);
    }
  }
  if (!ingress.domain) return { httpApi: api, httpStage: stage, url: api.apiEndpoint };
  const domainName = new apigwv2.DomainName(scope, 'DomainName', {
    domainName: ingress.domain.domainName,
    certificate: ingress.domain.certificate,
  });
  new apigwv2.ApiMapping(scope, 'ApiMapping', { api, domainName, stage });
  const target = new targets.ApiGatewayv2DomainProperties(domainName.regionalDomainName, domainName.regionalHostedZoneId);
  createDomainRecord(scope, ingress.domain, target);
  return { httpApi: api, httpStage: stage, url: `https://${ingress.domain.domainName}`, domainTarget: domainName.regionalDomainName };
}

function createRestEndpoint(
  scope: Construct,
  ingress: WebhookIngress,
  verifier: lambda.IFunction,
  providers: readonly WebhookProviderConfig[],
  throttle: apigwv2.ThrottleSettings,
  accessLogs: logs.LogGroup,
): Endpoint {
  const api = new apigw.RestApi(scope, 'RestApi', {
    description: 'Webhook inbox endpoint',
    endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
    // Every body is then passed to the verifier base64-encoded, so its bytes arrive exactly as sent.
    binaryMediaTypes: ['*/*'],
    // Execution logs need an account-wide role (AWS::ApiGateway::Account), which is not an inbox's to own.
    cloudWatchRole: false,
    deployOptions: {
      stageName: REST_API_STAGE_NAME,
      throttlingRateLimit: throttle.rateLimit,
      throttlingBurstLimit: throttle.burstLimit,
      accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
      accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields(),
    },
  });
  Validations.of(api).acknowledge({
    id: 'AwsSolutions::AwsSolutions-APIG2',
    reason:
      'The body is checked by the verifier after its signature over the raw bytes, and its shape is the provider’s: ' +
      'a request model would parse an unauthenticated body and refuse deliveries a provider may legitimately send.',
  });
  Validations.of(api.deploymentStage).acknowledge({
    id: 'AwsSolutions::AwsSolutions-APIG6',
    reason:
      'The stage writes an access log line for every request, and the verifier one delivery record per request; ' +
      'execution logs need the account-wide API Gateway CloudWatch role, which is not an inbox’s to create.',
  });
  // One integration (a Lambda proxy integration, as LambdaIntegration makes one) and one invoke
  // permission, from this API's stage under /hooks/: one per method, as LambdaIntegration adds,
  // would exceed the function's 20 KB resource policy at about 40 providers (docs/LIMITS.md).
  const integration = new apigw.AwsIntegration({ proxy: true, service: 'lambda', path: `2015-03-31/functions/${verifier.functionArn}/invocations` });
  const hooks = api.root.addResource(HOOKS_PATH.slice(1));
  for (const { name, methods } of routesOf(providers)) {
    const resource = hooks.addResource(name);
    for (const method of methods) {
      acknowledgeNoAuthorizer(resource.addMethod(method, integration, { authorizationType: apigw.AuthorizationType.NONE }), [
        'AwsSolutions-APIG4',
        'AwsSolutions-COG4',
      ]);
    }
  }
  verifier.addPermission('RestApiInvoke', {
    principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
    sourceArn: api.arnForExecuteApi('*', `${HOOKS_PATH}/*`, api.deploymentStage.stageName),
  });
  if (ingress.webAclArn !== undefined) {
    new wafv2.CfnWebACLAssociation(scope, 'WebAclAssociation', { resourceArn: api.deploymentStage.stageArn, webAclArn: ingress.webAclArn });
  }
  const stageUrl = `https://${api.restApiId}.execute-api.${api.stack.region}.${api.stack.urlSuffix}/${REST_API_STAGE_NAME}`;
  if (!ingress.domain) return { restApi: api, url: stageUrl };
  const domainName = new apigw.DomainName(scope, 'DomainName', {
    domainName: ingress.domain.domainName,
    certificate: ingress.domain.certificate,
    endpointType: apigw.EndpointType.REGIONAL,
    securityPolicy: apigw.SecurityPolicy.TLS_1_2,
  });
  new apigw.BasePathMapping(scope, 'BasePathMapping', { domainName, restApi: api, stage: api.deploymentStage });
  createDomainRecord(scope, ingress.domain, new targets.ApiGatewayDomain(domainName));
  return { restApi: api, url: `https://${ingress.domain.domainName}`, domainTarget: domainName.domainNameAliasDomainName };
}

/** The alias record of a custom domain, when a hosted zone is given. */
function createDomainRecord(scope: Construct, domain: WebhookIngressDomain, target: route53.IAliasRecordTarget): void {
  if (!domain.hostedZone) return;
  new route53.ARecord(scope, 'DomainRecord', {
    zone: domain.hostedZone,
    recordName: domain.domainName,
    target: route53.RecordTarget.fromAlias(target),
  });
}
