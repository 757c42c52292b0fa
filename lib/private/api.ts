import { Names, Validations } from 'aws-cdk-lib';
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
import { RestApiAccessLogging, WebhookIngress, WebhookIngressDomain, WebhookIngressType } from '../ingress';
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
  const accessLogs = () => new logs.LogGroup(scope, 'AccessLogs', { retention: logRetention });
  return ingress.type === WebhookIngressType.REST_API
    ? createRestEndpoint(scope, ingress, verifier, providers, throttle, accessLogs)
    : createHttpEndpoint(scope, ingress, verifier, providers, throttle, accessLogs());
}

/**
 * The API's name: unique to the inbox in its account and region (it holds the stack's name and a
 * hash of the construct path), so that the `AWS/ApiGateway` metrics of a REST API, which name it
 * by `ApiName`, are this inbox's alone. API Gateway takes a name of up to 128 characters.
 */
function endpointApiName(scope: Construct): string {
  return Names.uniqueResourceName(scope, { maxLength: API_NAME_LENGTH });
}

const API_NAME_LENGTH = 128;

function createHttpEndpoint(
  scope: Construct,
  ingress: WebhookIngress,
  verifier: lambda.IFunction,
  providers: readonly WebhookProviderConfig[],
  throttle: apigwv2.ThrottleSettings,
  accessLogs: logs.LogGroup,
): Endpoint {
  const api = new apigwv2.HttpApi(scope, 'Api', {
    apiName: endpointApiName(scope),
    description: 'Webhook inbox endpoint',
    createDefaultStage: false,
  });
  const stage = new apigwv2.HttpStage(scope, 'DefaultStage', {
    httpApi: api,
    stageName: '$default',
    autoDeploy: true,
    throttle,
    // An HTTP API logs with no account-wide setting.
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
  accessLogs: () => logs.LogGroup,
): Endpoint {
  // A REST API stage logs only once the account's API Gateway CloudWatch role is set in the region.
  const logging = ingress.restApiAccessLogging ?? RestApiAccessLogging.NONE;
  const api = new apigw.RestApi(scope, 'RestApi', {
    restApiName: endpointApiName(scope),
    description: 'Webhook inbox endpoint',
    endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
    // Every body is then passed to the verifier base64-encoded, so its bytes arrive exactly as sent.
    binaryMediaTypes: ['*/*'],
    // The role and the account setting (retained), the stage depending on it; only when asked: the setting is account-wide.
    cloudWatchRole: logging === RestApiAccessLogging.CREATE_ACCOUNT_ROLE,
    deployOptions: {
      stageName: REST_API_STAGE_NAME,
      throttlingRateLimit: throttle.rateLimit,
      throttlingBurstLimit: throttle.burstLimit,
      ...(logging === RestApiAccessLogging.NONE
        ? {}
        : { accessLogDestination: new apigw.LogGroupLogDestination(accessLogs()), accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields() }),
    },
  });
  acknowledgeRestApiFindings(api, logging);
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

/** What cdk-nag finds on a REST API that cannot apply to a signed webhook endpoint, or that the account's settings decide. */
function acknowledgeRestApiFindings(api: apigw.RestApi, logging: RestApiAccessLogging): void {
  const findings: { on: IConstruct; id: string; reason: string }[] = [
    {
      on: api,
      id: 'AwsSolutions-APIG2',
      reason:
        'The body is checked by the verifier after its signature over the raw bytes, and its shape is the provider’s: ' +
        'a request model would parse an unauthenticated body and refuse deliveries a provider may legitimately send.',
    },
    {
      on: api.deploymentStage,
      id: 'AwsSolutions-APIG6',
      reason:
        'Execution logs need the account-wide API Gateway CloudWatch role and log request details the inbox keeps out of its logs; ' +
        'the verifier writes a delivery record of every request it receives.',
    },
  ];
  if (logging === RestApiAccessLogging.NONE) {
    findings.push({
      on: api.deploymentStage,
      id: 'AwsSolutions-APIG1',
      reason:
        'A REST API stage writes access logs only once the account’s API Gateway CloudWatch role is set in the region; without it the ' +
        'stage fails to deploy, so access logs are opt-in (ingress accessLogging). The verifier writes a delivery record of every request it receives.',
    });
  }
  if (logging === RestApiAccessLogging.CREATE_ACCOUNT_ROLE) {
    findings.push({
      on: api.node.findChild('CloudWatchRole'),
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'The account’s API Gateway CloudWatch role writes the logs of every REST API in the region, into log groups API Gateway names: ' +
        'AWS’s service-role policy is the one the API Gateway guide prescribes for it, and a narrower one would stop the other APIs’ logs.',
    });
  }
  for (const { on, id, reason } of findings) Validations.of(on).acknowledge({ id: `AwsSolutions::${id}`, reason });
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
