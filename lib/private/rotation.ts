import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Defaults, Limits, RotatedSecretConfig, RotatedSecretFormat } from '../contract';
import type { WebhookProviderConfig } from '../provider';
import { rotatorEnvironment } from './handler-environment';
import { grantInvokeFunction, grantSecretKey } from './grants';
import { createHandlerFunction } from './handler-function';
import { pascalCase } from './names';
import { signingSecretOf } from './resources';

/** The rotation of an inbox's signing secrets. */
export interface Rotation {
  readonly rotator: lambda.IFunction;
  /** Where Secrets Manager's reports of a failed rotation of these secrets wait for an operator. */
  readonly failureQueue: sqs.IQueue;
}

/**
 * Rotation for every provider that asks for it: one function, a schedule per secret, a statement
 * per secret with the four actions of the rotation steps on that secret only, and an invoke
 * permission per secret for Secrets Manager rotating that secret in this account only. Secrets
 * Manager reports a failed rotation as an event on the default bus; a rule keeps those of these
 * secrets in the failure queue, which the rotation-failure alarm watches.
 * @returns undefined when no provider has `rotation`
 */
export function createRotation(
  scope: Construct,
  inboxName: string,
  providers: readonly WebhookProviderConfig[],
  secrets: ReadonlyMap<string, secretsmanager.ISecret>,
  logRetention: logs.RetentionDays,
  tracing: boolean,
): Rotation | undefined {
  const rotated = providers.filter((provider) => provider.rotation);
  if (rotated.length === 0) return undefined;
  const rotatedSecrets: RotatedSecretConfig[] = rotated.map((provider) => ({
    secretId: signingSecretOf(scope, secrets, provider.name).secretArn,
    providerName: provider.name,
    // At synth, rotation is refused for any other format (providerProblems).
    format: provider.secretFormat as RotatedSecretFormat,
    ...(provider.rotation!.registerFunction ? { registerFunctionArn: provider.rotation!.registerFunction.functionArn } : {}),
  }));
  const rotator = createHandlerFunction(scope, 'Rotator', {
    handler: 'rotator',
    description: 'Webhook inbox rotator: rotates signing secrets in four steps',
    memorySize: Defaults.ROTATOR_MEMORY_MB,
    timeout: Duration.seconds(Defaults.ROTATOR_TIMEOUT_SECONDS),
    logRetention,
    tracing,
    settings: rotatorEnvironment(inboxName, rotatedSecrets),
    secrets: rotated.map((provider) => signingSecretOf(scope, secrets, provider.name)),
  });
  const rotatedArns: string[] = [];
  for (const provider of rotated) {
    const rotation = provider.rotation!;
    const secret = signingSecretOf(scope, secrets, provider.name);
    // Secrets Manager names a secret by its full ARN; an imported one may be known without its random suffix.
    const secretArn = secret.secretFullArn ?? `${secret.secretArn}-??????`;
    rotatedArns.push(secretArn);
    rotator.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue', 'secretsmanager:UpdateSecretVersionStage'],
        resources: [secretArn],
      }),
    );
    // Reading a version takes kms:Decrypt, writing one kms:GenerateDataKey, each through Secrets Manager only.
    grantSecretKey(secret, rotator.role, ['kms:Decrypt', 'kms:GenerateDataKey']);
    if (rotation.registerFunction) grantInvokeFunction(rotation.registerFunction, rotator.role);
    const id = `${pascalCase(provider.name)}SigningSecretRotation`;
    // Secrets Manager may invoke the rotator for this secret of this account only (the confused-deputy guard).
    const permissionId = `${id}Invoke`;
    rotator.function.addPermission(permissionId, {
      principal: new iam.ServicePrincipal('secretsmanager.amazonaws.com'),
      action: 'lambda:InvokeFunction',
      sourceAccount: Stack.of(scope).account,
      sourceArn: secretArn,
    });
    // The schedule keeps the construct path (so the logical id) aws-cdk-lib's RotationSchedule gave it:
    // replaced, it would turn rotation off and on again. Its L1 takes no invoke permission of its own.
    const schedule = new secretsmanager.CfnRotationSchedule(new Construct(scope, id), 'Resource', {
      secretId: secret.secretArn,
      rotationLambdaArn: rotator.function.functionArn,
      rotationRules: { scheduleExpression: events.Schedule.rate(rotation.schedule ?? Duration.days(Defaults.ROTATION_DAYS)).expressionString },
      // Off, a deploy only tests the rotation function (its testSecret step on a copy of the current
      // value): a secret the operator stored after the first deploy is not replaced by the next one.
      rotateImmediatelyOnUpdate: rotation.rotateOnDeploy ?? false,
    });
    schedule.node.addDependency(rotator.function.node.findChild(permissionId));
    secret.denyAccountRootDelete();
  }
  return { rotator: rotator.function, failureQueue: createFailureQueue(scope, rotatedArns) };
}

/**
 * Secrets one rotation-failure rule names: six ARNs at their longest as CloudFormation names the
 * secrets an inbox rotates (about 200 characters each with the longest partition, region and
 * stack name) stay inside a pattern's 2,048 characters beside the rest of the pattern;
 * test/lib/deploy-limits.test.ts measures the maximal app's.
 */
const SECRETS_PER_FAILURE_RULE = 6;

/**
 * The queue Secrets Manager's reports of a failed rotation (or a failed test of the rotation
 * function at deploy) of the inbox's secrets go to: CloudTrail service events on the default bus,
 * `RotationFailed` and `TestRotationFailed`, naming the secret by its full ARN in
 * `additionalEventData.SecretId` (docs/RUNBOOK.md#rotation-failures). The messages stay until an
 * operator removes them, so its depth is an alarm that stays raised until someone has looked.
 */
function createFailureQueue(scope: Construct, secretArns: readonly string[]): sqs.IQueue {
  const queue = new sqs.Queue(scope, 'RotationFailures', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(Limits.SQS_RETENTION_DAYS),
  });
  Validations.of(queue).acknowledge({
    id: 'AwsSolutions::AwsSolutions-SQS3',
    reason: 'The queue holds reports of failed rotations for an operator to read; nothing consumes it, so nothing could fail to and need a dead-letter queue.',
  });
  // An ARN known with its random suffix is matched exactly, one known without it by its prefix.
  const secretIds = secretArns.map((arn) => (arn.endsWith('-??????') ? { prefix: arn.slice(0, -'??????'.length) } : arn));
  // An event pattern holds at most 2,048 characters (docs/LIMITS.md): the secrets are shared out
  // over as many rules as they need, the first keeping the name it always had.
  for (let first = 0; first < secretIds.length; first += SECRETS_PER_FAILURE_RULE) {
    const index = first / SECRETS_PER_FAILURE_RULE;
    new events.Rule(scope, index === 0 ? 'RotationFailed' : `RotationFailed${index + 1}`, {
      description: 'Webhook inbox: Secrets Manager failed to rotate a signing secret of the inbox',
      eventPattern: {
        source: ['aws.secretsmanager'],
        detailType: ['AWS Service Event via CloudTrail'],
        detail: {
          eventSource: ['secretsmanager.amazonaws.com'],
          eventName: ['RotationFailed', 'TestRotationFailed'],
          additionalEventData: { SecretId: secretIds.slice(first, first + SECRETS_PER_FAILURE_RULE) },
        },
      },
      targets: [new targets.SqsQueue(queue)],
    });
  }
  return queue;
}
