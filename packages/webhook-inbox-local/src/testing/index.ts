/**
 * The twin's testing entry point: what the repository's own tests, fuzzers and bench use of the
 * local AWS (stand-ins, emulated resources, the IAM gateway, the fault proxy) and of the
 * simulated providers, so that they depend on this list and never on where a file sits in the
 * twin. The root package maps it as `#twin/testing` (package.json `imports`); what loads
 * aws-cdk-lib apart, so that the handler tests load it only when they synthesize: the twin itself
 * as `#twin/testing/twin` (twin.ts), the synthesis of an inbox's template as
 * `#twin/testing/inbox-template` (inbox-template.ts); the emulators, an ES module, as
 * `#twin/emulators`. Product code (lib/, lambda/, cli/, client/) never imports them
 * (eslint.config.mjs).
 */

// The local AWS: its account and region, the resources an inbox needs, the stand-ins.
export { LOCAL_ACCOUNT, LOCAL_AWS, LOCAL_REGION, OPERATOR_ACCESS_KEY } from '../aws/local-aws';
export { closeServer, listenOnLoopback, readBody } from '../aws/loopback';
export { createBodyBucket, createQueues, createTables, type InboxResourceNames, type QueueSettings, resourceNames } from '../aws/provision';
export { httpApiEvent, startApiGateway } from '../aws/apigateway/http-api';
export { LambdaHost } from '../aws/lambda/host';
export { LambdaInvokeStandIn } from '../aws/lambda/invoke-stand-in';
export { drain, pollOnce, type PollReport, type SqsHandler } from '../aws/lambda/sqs-event-source';
export { SecretsManagerStandIn } from '../aws/secretsmanager/stand-in';
export { EventBridgeStandIn, type RecordedEvent } from '../aws/eventbridge/stand-in';
export {
  createLocalSnsAuthority,
  type LocalSnsAuthority,
  type LocalSnsHost,
  signSnsFields,
  SIGNING_CERTIFICATE_PATH,
  type SnsMessageFields,
  snsHeaders,
  snsMessage,
  startLocalSnsHost,
} from '../aws/sns/stand-in';
export { templateSecretValue } from '../aws/cloudformation/secret-values';

// IAM as AWS enforces it, from a synthesized inbox's template.
export { type Denial, IamGateway, type LocalCredentials, type SecretDirectory } from '../aws/iam/gateway';
export { inboxBinding, type LocalInboxResources, registerInboxRoles } from '../aws/iam/inbox-roles';
export type { InboxRole, InboxTemplateSpec, SynthesizedInbox } from '../twin/inbox-template';

// What AWS does and the emulators never do.
export { type AwsCall, endpointTarget, FaultProxy } from '../faults/proxy';

// The providers' side: how they sign, and their APIs the inbox polls.
export { echonovaHeaders, standardWebhooksHeaders, unixSeconds } from '../providers/signing';
export { FakeAnswerlineApi, type NewFakeTask } from '../providers/answerline/fake-api';
export { FakeGitHub, type FakeGitHubDelivery } from '../providers/github/fake-api';
export { FakeStripe, type FakeStripeEvent } from '../providers/stripe/fake-api';
export { FakeEchonovaApi } from '../providers/echonova/fake-api';
export { FakeMessageBatchesApi } from '../providers/message-batches/fake-api';

// How the twin synthesizes an app, as the CDK CLI does.
export { ASSEMBLY_METADATA_CONTEXT, synthesizeProject } from '../twin/synth';
