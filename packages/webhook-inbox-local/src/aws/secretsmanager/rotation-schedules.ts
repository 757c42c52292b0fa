/**
 * A stack's rotation schedules (`AWS::SecretsManager::RotationSchedule`), run as CloudFormation
 * creates them: RotateSecret with the schedule's function, which rotates the secret at once when
 * `RotateImmediatelyOnUpdate` is true (its default) and otherwise only tests the function (its
 * testSecret step on a copy of the current value). Secrets Manager first checks that the
 * function's resource policy lets it invoke the function for this secret from this account, and
 * refuses RotateSecret otherwise: so does the local run, before anything is rotated. Later runs
 * of a schedule (days apart) are not simulated; `rotate-secret` against the stand-in starts one.
 */
import { RotateSecretCommand } from '@aws-sdk/client-secrets-manager';
import type { SynthesizedStack } from '../cloudformation/assembly';
import type { StackBinding } from '../cloudformation/binding';
import type { LocalFunction } from '../cloudformation/functions';
import { TemplateError } from '../cloudformation/template-error';
import type { LocalServices } from '../services';

const SCHEDULE_TYPE = 'AWS::SecretsManager::RotationSchedule';
const SECRETS_MANAGER = 'secretsmanager.amazonaws.com';

/** Secrets Manager's answer to RotateSecret when the function's resource policy does not let it invoke the function. */
export const CANNOT_INVOKE =
  'AccessDeniedException: Secrets Manager cannot invoke the specified Lambda function. Ensure that the policy attached to the function grants access to the principal secretsmanager.amazonaws.com.';

/** Turns on the rotation of each schedule's secret with its local function; waits for nothing the rotations do. */
export async function startRotationSchedules(
  stack: SynthesizedStack,
  binding: StackBinding,
  services: LocalServices,
  functions: ReadonlyMap<string, LocalFunction>,
  warn: (line: string) => void,
): Promise<void> {
  const byArn = new Map([...functions.values()].map((fn) => [fn.arn, fn]));
  for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
    if (resource.Type !== SCHEDULE_TYPE) continue;
    const properties = binding.resolveProperties(logicalId);
    const fn = byArn.get(String(properties.RotationLambdaARN ?? ''));
    if (!fn) {
      warn(`${stack.stackName}: ${logicalId}: only a rotation function of the stack runs locally (hosted rotation does not); its secret is not rotated`);
      continue;
    }
    const secretArn = String(properties.SecretId);
    if (!invokeAllowed(stack, binding, fn, secretArn)) {
      throw new TemplateError(
        `failed to create: ${CANNOT_INVOKE} Give ${fn.path} an AWS::Lambda::Permission for ${SECRETS_MANAGER}, ` +
          'its SourceArn matching the secret and its SourceAccount this account',
        binding.place(logicalId),
      );
    }
    services.secrets.attachRotationFunction(fn.arn, (event) => fn.invoke(event));
    await services.clients.secrets.send(
      new RotateSecretCommand({
        SecretId: secretArn,
        RotationLambdaARN: fn.arn,
        RotateImmediately: String(properties.RotateImmediatelyOnUpdate ?? true) !== 'false',
      }),
    );
  }
}

/** Whether a permission of the template lets Secrets Manager invoke `fn` for `secretArn` from the stack's account. */
function invokeAllowed(stack: SynthesizedStack, binding: StackBinding, fn: LocalFunction, secretArn: string): boolean {
  const account = binding.pseudo['AWS::AccountId'];
  return Object.entries(stack.template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Permission')
    .map(([logicalId]) => binding.resolveProperties(logicalId))
    .some(
      (permission) =>
        [fn.arn, fn.name].includes(String(permission.FunctionName)) &&
        permission.Principal === SECRETS_MANAGER &&
        ['lambda:InvokeFunction', 'lambda:*'].includes(String(permission.Action)) &&
        (permission.SourceAccount === undefined || String(permission.SourceAccount) === account) &&
        (permission.SourceArn === undefined || arnLike(secretArn, String(permission.SourceArn))),
    );
}

/** IAM's ArnLike: `*` any run of characters, `?` any one. */
function arnLike(arn: string, pattern: string): boolean {
  const expression = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${expression}$`).test(arn);
}
