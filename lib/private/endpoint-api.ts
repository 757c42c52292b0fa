import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type { IWebhookInbox } from '../inbox-interface';

/**
 * The API that receives an inbox's deliveries, as its metrics see it: the REST API's stage when it
 * has one (`AWS/ApiGateway` by `ApiName` and `Stage`: a REST API's metrics carry no id), the HTTP
 * API otherwise (by `ApiId`).
 */
export function endpointApi(
  inbox: IWebhookInbox,
): Pick<apigwv2.HttpApi, 'metricLatency' | 'metricIntegrationLatency' | 'metricClientError' | 'metricServerError'> {
  return inbox.restApi?.deploymentStage ?? inbox.api;
}

/** Which kind of API that is, as the dashboard names it. */
export function endpointApiKind(inbox: IWebhookInbox): string {
  return inbox.restApi ? 'REST API' : 'HTTP API';
}
