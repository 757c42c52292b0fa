import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { HANDLER_FILE, HANDLER_NODE_MAJOR } from '../contract';
import { environmentSizeProblems } from './environment-size';
import { packHandlerConfig, stageHandlerCode } from './handler-config-file';

/** The runtime the handler bundles are built for (`scripts/bundle.ts` targets the same major). */
export const HANDLER_RUNTIME = new lambda.Runtime(`nodejs${HANDLER_NODE_MAJOR}.x`, lambda.RuntimeFamily.NODEJS, {
  supportsInlineCode: true,
});

/** Where `npm run bundle` writes the handler bundles that ship in the package. */
const ASSETS_DIR = join(__dirname, '..', '..', 'assets');

export interface HandlerFunctionProps {
  /** The folder under `lambda/` (and `assets/`) of the handler. */
  readonly handler: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  /** The handler's settings, by environment variable: in its configuration file, or its environment when CloudFormation fills them in. */
  readonly settings: Record<string, string>;
  /** The secrets the settings name (by ARN): those of the stack take 19 characters of the environment each, not a whole ARN. */
  readonly secrets: readonly secretsmanager.ISecret[];
  readonly logRetention: logs.RetentionDays;
  /** Active X-Ray tracing (the overrides' `tracing` wins). */
  readonly tracing: boolean;
  /** The user's overrides; construct-required settings (code, runtime, environment) win over them. */
  readonly overrides?: lambda.FunctionOptions;
  /** The prop the overrides come from, named when the environment is too large. */
  readonly overridesProp?: string;
}

export interface HandlerFunction {
  readonly function: lambda.Function;
  readonly role: iam.IRole;
}

/**
 * A pre-bundled handler with its own role and log group. The role starts empty (no managed
 * policies): each handler is granted exactly the actions it uses by the inbox.
 */
export function createHandlerFunction(scope: Construct, id: string, props: HandlerFunctionProps): HandlerFunction {
  const assetPath = join(ASSETS_DIR, props.handler);
  if (!existsSync(join(assetPath, HANDLER_FILE))) {
    throw new Error(`the ${props.handler} bundle is missing at ${assetPath}: run \`npm run bundle\` first`);
  }
  const packed = packHandlerConfig(scope, props.settings, props.secrets);
  const overrides = props.overrides ?? {};
  const tracing = overrides.tracing ?? (props.tracing ? lambda.Tracing.ACTIVE : undefined);
  let role = overrides.role;
  if (!role) {
    role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description} (execution role)`,
    });
  }
  if (!overrides.role && tracing !== undefined && tracing !== lambda.Tracing.DISABLED) {
    Validations.of(role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the X-Ray statement of active tracing uses Resource "*": xray:PutTraceSegments and ' +
        'xray:PutTelemetryRecords support no resource-level permissions. Every data-plane statement names its resource.',
    });
  }
  const logGroup =
    overrides.logGroup ??
    new logs.LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
    });
  const fn = new lambda.Function(scope, id, {
    description: props.description,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    ...overrides,
    tracing,
    role,
    logGroup,
    runtime: HANDLER_RUNTIME,
    code: lambda.Code.fromAsset(stageHandlerCode(assetPath, props.handler, packed.file)),
    handler: 'index.handler',
    // Construct-required settings win: the user's variable of a name the file sets is left out (the file's would win at cold start).
    environment: { ...withoutNames(overrides.environment, Object.keys(packed.file.variables)), ...packed.environment },
  });
  // Lambda refuses a deploy whose environment exceeds 4 KB: refused at synth instead, the user's variables counted.
  fn.node.addValidation({ validate: () => environmentSizeProblems(fn, props.overridesProp) });
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupRef.logGroupArn],
    }),
  );
  return { function: fn, role };
}

function withoutNames(environment: Record<string, string> | undefined, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(environment ?? {}).filter(([name]) => !names.includes(name)));
}
