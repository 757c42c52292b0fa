import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { Defaults, RotatedSecretConfig, RotatedSecretFormat } from '../contract';
import type { WebhookProviderConfig } from '../provider';
import { rotatorEnvironment } from './handler-environment';
import { grantInvokeFunction, grantSecretKey } from './grants';
import { createHandlerFunction } from './handler-function';
import { pascalCase } from './names';
import { signingSecretOf } from './resources';

/**
 * Rotation for every provider that asks for it: one function, a schedule per secret, and a
 * statement per secret with the four actions of the rotation steps on that secret only.
 * @returns the rotator, or undefined when no provider has `rotation`
 */
export function createRotation(
  scope: Construct,
  inboxName: string,
  providers: readonly WebhookProviderConfig[],
  secrets: ReadonlyMap<string, secretsmanager.ISecret>,
  logRetention: logs.RetentionDays,
): lambda.IFunction | undefined {
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
    settings: rotatorEnvironment(inboxName, rotatedSecrets),
    secrets: rotated.map((provider) => signingSecretOf(scope, secrets, provider.name)),
  });
  for (const provider of rotated) {
    const secret = signingSecretOf(scope, secrets, provider.name);
    rotator.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue', 'secretsmanager:UpdateSecretVersionStage'],
        resources: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
      }),
    );
    // Reading a version takes kms:Decrypt, writing one kms:GenerateDataKey, each through Secrets Manager only.
    grantSecretKey(secret, rotator.role, ['kms:Decrypt', 'kms:GenerateDataKey']);
    if (provider.rotation!.registerFunction) grantInvokeFunction(provider.rotation!.registerFunction, rotator.role);
    new secretsmanager.RotationSchedule(scope, `${pascalCase(provider.name)}SigningSecretRotation`, {
      secret,
      rotationLambda: rotator.function,
      automaticallyAfter: provider.rotation!.schedule ?? Duration.days(Defaults.ROTATION_DAYS),
    });
  }
  return rotator.function;
}
