import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type { IWebhookInbox } from '../inbox-interface';

/** The API that receives an inbox's deliveries, as its metrics see it: the REST API when it has one, the HTTP API otherwise. */
export function endpointApi(
  inbox: IWebhookInbox,
): Pick<apigwv2.HttpApi, 'metricLatency' | 'metricIntegrationLatency' | 'metricClientError' | 'metricServerError'> {
  return inbox.restApi ?? inbox.api;
}
