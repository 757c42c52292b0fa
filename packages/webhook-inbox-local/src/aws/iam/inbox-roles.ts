/**
 * Binds a synthesized inbox template to the local resources that stand for its tables, queues,
 * bucket, bus and secrets, and registers each of its roles with the IAM gateway: the credentials
 * returned are what each function (and the app recording submissions) calls AWS with locally.
 */
import type { InboxRole, SynthesizedInbox } from '../../twin/inbox-template';
import type { IamGateway, LocalCredentials } from './gateway';
import { BoundResource, pseudoParameters, TemplateBinding } from '../cloudformation/intrinsics';
import { identityPoliciesOf, resourcePoliciesOf } from './template-policies';

/** The local resources of one inbox. */
export interface LocalInboxResources {
  readonly inboxTable: string;
  readonly resultsTable: string;
  readonly workQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly bodyBucket?: string;
  readonly eventBusName?: string;
  /** Each provider's signing secret ARN, by provider name. */
  readonly signingSecretArns: Readonly<Record<string, string>>;
  /** The API key secrets' ARNs, by the secret id the template spec named. */
  readonly apiKeySecretArns?: Readonly<Record<string, string>>;
  readonly processingFunctionArn?: string;
  readonly registerFunctionArn?: string;
}

export function inboxBinding(synthesized: SynthesizedInbox, local: LocalInboxResources, account: string, region: string): TemplateBinding {
  const ids = synthesized.logicalIds;
  const table = (name: string): BoundResource => ({ ref: name, attributes: { Arn: `arn:aws:dynamodb:${region}:${account}:table/${name}` } });
  const queue = (url: string): BoundResource => {
    const name = url.split('/').pop()!;
    return { ref: url, attributes: { Arn: `arn:aws:sqs:${region}:${account}:${name}`, QueueName: name, QueueUrl: url } };
  };
  const resources: Record<string, BoundResource> = {
    [ids.inboxTable]: table(local.inboxTable),
    [ids.resultsTable]: table(local.resultsTable),
    [ids.workQueue]: queue(local.workQueueUrl),
    [ids.deadLetterQueue]: queue(local.deadLetterQueueUrl),
  };
  if (ids.bodyBucket && local.bodyBucket) resources[ids.bodyBucket] = { ref: local.bodyBucket, attributes: { Arn: `arn:aws:s3:::${local.bodyBucket}` } };
  if (ids.eventBus && local.eventBusName) {
    resources[ids.eventBus] = {
      ref: local.eventBusName,
      attributes: { Arn: `arn:aws:events:${region}:${account}:event-bus/${local.eventBusName}`, Name: local.eventBusName },
    };
  }
  for (const [provider, logicalId] of Object.entries(ids.signingSecrets)) {
    const arn = local.signingSecretArns[provider];
    if (arn) resources[logicalId] = { ref: arn };
  }
  for (const [secretId, logicalId] of Object.entries(ids.apiKeySecrets)) {
    const arn = local.apiKeySecretArns?.[secretId];
    if (arn) resources[logicalId] = { ref: arn };
  }
  const fn = (arn: string): BoundResource => ({ ref: arn.split(':').pop()!, attributes: { Arn: arn } });
  if (ids.processingFunction && local.processingFunctionArn) resources[ids.processingFunction] = fn(local.processingFunctionArn);
  if (ids.registerFunction && local.registerFunctionArn) resources[ids.registerFunction] = fn(local.registerFunctionArn);
  for (const logicalId of Object.values(ids.roles)) {
    if (logicalId) resources[logicalId] = { ref: logicalId, attributes: { Arn: roleArn(account, logicalId) } };
  }
  return {
    resources,
    pseudo: pseudoParameters(account, region),
    // Log groups, alarms, the API: nothing local calls them, so no local request can match them.
    fallback: (logicalId, attribute) => `arn:aws:cloudformation:${region}:${account}:stack/unbound/${logicalId}${attribute ? `.${attribute}` : ''}`,
  };
}

/** Registers the inbox's roles with the gateway; the credentials of each. */
export function registerInboxRoles(
  gateway: IamGateway,
  synthesized: SynthesizedInbox,
  binding: TemplateBinding,
  account: string,
): Partial<Record<InboxRole, LocalCredentials>> {
  const resourcePolicies = resourcePoliciesOf(synthesized.template, binding);
  const credentials: Partial<Record<InboxRole, LocalCredentials>> = {};
  for (const [role, logicalId] of Object.entries(synthesized.logicalIds.roles) as [InboxRole, string | undefined][]) {
    if (!logicalId) continue;
    credentials[role] = gateway.register({
      name: role,
      roleArn: roleArn(account, logicalId),
      policies: identityPoliciesOf(synthesized.template, logicalId, binding),
      resourcePolicies,
    });
  }
  return credentials;
}

function roleArn(account: string, logicalId: string): string {
  return `arn:aws:iam::${account}:role/${logicalId}`;
}
