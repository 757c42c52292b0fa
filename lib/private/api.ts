import { Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { GET_CHECKED_ADAPTERS, HOOKS_PATH, POLLED_ONLY_ADAPTERS } from '../contract';
import type { WebhookProviderConfig } from '../provider';

/** The HTTP API and its `$default` stage. */
export interface Endpoint {
  readonly api: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
}

/** The path a provider posts to: `/hooks/<name>`. */
export function hookPath(providerName: string): string {
  return `${HOOKS_PATH}/${providerName}`;
}

/**
 * The front door: an HTTP API with a throttled, access-logged `$default` stage and one
 * `POST /hooks/<name>` route per provider (and `GET` for a provider that checks the endpoint
 * with one), each integrated with the verifier. A polled-only provider sends nothing: no route.
 */
export function createEndpoint(
  scope: Construct,
  verifier: lambda.IFunction,
  providers: readonly WebhookProviderConfig[],
  throttle: apigwv2.ThrottleSettings,
  logRetention: logs.RetentionDays,
): Endpoint {
  const accessLogs = new logs.LogGroup(scope, 'AccessLogs', { retention: logRetention });
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
  const integration = new HttpLambdaIntegration('Verifier', verifier);
  for (const provider of providers.filter((each) => !POLLED_ONLY_ADAPTERS.includes(each.adapter))) {
    const methods = GET_CHECKED_ADAPTERS.includes(provider.adapter) ? [apigwv2.HttpMethod.POST, apigwv2.HttpMethod.GET] : [apigwv2.HttpMethod.POST];
    for (const route of api.addRoutes({ path: hookPath(provider.name), methods, integration })) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions::AwsSolutions-APIG4',
        reason:
          'Providers authenticate each delivery with an HMAC signature over the raw body, verified by the verifier ' +
          'before anything is stored; they cannot present IAM or JWT credentials, and an authorizer never sees the body.',
      });
    }
  }
  return { api, stage };
}
