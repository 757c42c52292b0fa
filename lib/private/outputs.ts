import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { OPS_CONFIG_OUTPUT_DESCRIPTION, OpsConfig, PendingIndex, POLLED_ONLY_ADAPTERS } from '../contract';
import type { IWebhookInbox } from '../inbox-interface';
import type { WebhookProviderConfig } from '../provider';
import { hookPath } from './api';
import { pascalCase } from './names';

/**
 * The stack outputs of an inbox: its endpoint (the custom domain's URL when one is set, and
 * then the domain's DNS target), the ops configuration the CLI reads (one JSON
 * document, found by its description), and each provider's URL and signing secret (a polled-only
 * provider has neither; SNS has no secret).
 */
export function createOutputs(
  inbox: IWebhookInbox,
  providers: readonly WebhookProviderConfig[],
  secrets: ReadonlyMap<string, secretsmanager.ISecret>,
  domainTarget: string | undefined,
  resultRetention: Duration,
  pendingShards: number,
  archiveBucket?: s3.IBucket,
): void {
  new CfnOutput(inbox, 'EndpointUrl', { value: inbox.endpointUrl, description: 'Webhook inbox endpoint base URL' });
  // Where a custom domain's DNS record points (its CNAME or alias target), whether or not the inbox created the record.
  if (domainTarget !== undefined) new CfnOutput(inbox, 'DomainTarget', { value: domainTarget, description: 'Webhook inbox custom domain DNS target' });
  const opsConfig: OpsConfig = {
    inboxName: inbox.inboxName,
    inboxTable: inbox.inboxTable.tableName,
    resultsTable: inbox.resultsTable.tableName,
    workQueueUrl: inbox.workQueue.queueUrl,
    deadLetterQueueUrl: inbox.deadLetterQueue?.queueUrl,
    reconcilerFunctionName: inbox.reconcilerFunction.functionName,
    bodyBucket: inbox.bodyBucket?.bucketName,
    ...(archiveBucket ? { archiveBucket: archiveBucket.bucketName } : {}),
    providers: providers.map((provider) => provider.name),
    adapters: Object.fromEntries(providers.map((provider) => [provider.name, provider.adapter])),
    resultRetentionSeconds: resultRetention.toSeconds(),
    ...(pendingShards !== PendingIndex.SHARD_COUNT ? { pendingShards } : {}),
  };
  new CfnOutput(inbox, 'OpsConfig', {
    value: Stack.of(inbox).toJsonString(opsConfig),
    description: `${OPS_CONFIG_OUTPUT_DESCRIPTION} (${inbox.node.path})`,
  });
  for (const provider of providers) {
    if (POLLED_ONLY_ADAPTERS.includes(provider.adapter)) continue;
    const suffix = pascalCase(provider.name);
    new CfnOutput(inbox, `${suffix}Url`, { value: `${inbox.endpointUrl}${hookPath(provider.name)}`, description: `Webhook URL for ${provider.name}` });
    // A provider whose requests name their certificate (SNS) has no secret.
    const secret = secrets.get(provider.name);
    if (secret) new CfnOutput(inbox, `${suffix}SigningSecretArn`, { value: secret.secretArn, description: `Signing secret of ${provider.name}` });
  }
}
