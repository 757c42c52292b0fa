/**
 * Runs a stack's Lambda functions locally: each from its asset in the assembly (or its inline
 * code), with its handler, timeout, memory, reserved concurrency and its environment resolved to
 * the local resources, calling AWS with its own role's credentials through the IAM gateway.
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { Writable } from 'node:stream';
import { CrashAfter, LambdaHost } from '../lambda/host';
import { Env, handlerVariables } from '../../../../../lib/contract';
import { refTarget } from './intrinsics';
import { TemplateError, TemplatePlace } from './template-error';
import { LOCAL_AWS } from '../local-aws';
import { assetPathOf, constructPath, SynthesizedStack, TemplateResource } from './assembly';
import type { StackBinding } from './binding';
import type { LocalServices } from '../services';

/** Lambda's defaults for what a template leaves out. */
const LAMBDA_DEFAULT_TIMEOUT_SECONDS = 3;
const LAMBDA_DEFAULT_MEMORY_MB = 128;

/**
 * Lambda's Node.js runtimes put the AWS SDK v3 on every function's NODE_PATH (under
 * /var/runtime/node_modules), so inline code and bundles that leave `@aws-sdk/*` out (NodejsFunction's
 * default) require it from there; locally, the node_modules the twin's own SDK clients come from.
 */
const RUNTIME_NODE_PATH = (() => {
  const entry = require.resolve('@aws-sdk/client-dynamodb');
  return entry.slice(0, entry.lastIndexOf(`${sep}@aws-sdk${sep}`));
})();

/** A fault to inject into one invocation of a function. */
export interface InvocationFault {
  readonly crashAfter?: CrashAfter;
}

/**
 * Wraps every invocation of a function, for fault injection: it may inject a fault through
 * `invoke`, answer without invoking at all (the function unreachable), or observe the outcome.
 */
export type Interceptor<E = unknown, R = unknown> = (event: E, invoke: (fault?: InvocationFault) => Promise<R>) => Promise<R>;

/** How one invocation ended. */
export interface InvocationOutcome {
  readonly durationMs: number;
  /** The function failed: it threw, crashed or timed out. */
  readonly failed: boolean;
}

export interface LocalFunction {
  readonly logicalId: string;
  /** Its construct path without the stack (`Answers/Verifier`), or its logical id. */
  readonly path: string;
  readonly name: string;
  readonly arn: string;
  readonly host: LambdaHost;
  /** The logical id of its execution role, when the template defines it. */
  readonly roleLogicalId?: string;
  readonly timeoutSeconds: number;
  /** Its resolved environment variables, as the template sets them. */
  readonly environment: Readonly<Record<string, string>>;
  /** What its handler reads: its environment, with the variables of its handler configuration file when it has one. */
  readonly variables: Readonly<Record<string, string | undefined>>;
  /** Invokes it as its triggers do (through the interceptor, if one is set). */
  invoke<R = unknown>(event: unknown): Promise<R>;
  /** Sets (or clears) the interceptor of every later invocation. */
  intercept(interceptor: Interceptor | undefined): void;
}

export interface FunctionOptions {
  /** Where each function's log file is written. */
  readonly logDir: string;
  /** Where inline code is written out. */
  readonly codeDir: string;
  /** The credentials each role's functions call AWS with (by role logical id). */
  readonly credentials: ReadonlyMap<string, { accessKeyId: string; secretAccessKey: string }>;
  /** At most this many execution environments per function without reserved concurrency. */
  readonly defaultConcurrency: number;
  /** Every line a function logs (the twin reads its metrics from them). */
  readonly onLogLine?: (fn: LocalFunction, line: string) => void;
  /** Every invocation's outcome, as Lambda's own metrics count it. */
  readonly onInvocation?: (fn: LocalFunction, outcome: InvocationOutcome) => void;
  readonly warn: (line: string) => void;
}

export function startFunctions(stack: SynthesizedStack, binding: StackBinding, services: LocalServices, options: FunctionOptions): Map<string, LocalFunction> {
  const functions = new Map<string, LocalFunction>();
  for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const fn = startFunction(stack, logicalId, resource, binding, services, options);
    if (!fn) continue;
    functions.set(logicalId, fn);
    services.lambda.deploy(fn.name, (payload) => fn.invoke(payload));
    services.lambda.deploy(fn.arn, (payload) => fn.invoke(payload));
    services.onStop(() => fn.host.stop());
  }
  return functions;
}

function startFunction(
  stack: SynthesizedStack,
  logicalId: string,
  resource: TemplateResource,
  binding: StackBinding,
  services: LocalServices,
  options: FunctionOptions,
): LocalFunction | undefined {
  const properties = resource.Properties ?? {};
  const path = constructPath(stack, logicalId, resource);
  const runtime = String(properties.Runtime ?? '');
  if (!runtime.startsWith('nodejs')) {
    options.warn(`${path}: runtime ${runtime || '(container image)'} does not run locally; its invocations fail`);
    return undefined;
  }
  const handler = String(properties.Handler ?? 'index.handler');
  const dot = handler.lastIndexOf('.');
  const codeDir = codeFolder(stack, logicalId, resource, binding, options);
  const modulePath = join(codeDir, handler.slice(0, dot));
  const bundlePath = ['.js', '.mjs', '.cjs'].map((extension) => `${modulePath}${extension}`).find((candidate) => existsSync(candidate));
  if (!bundlePath) throw new TemplateError(`names no module in ${codeDir}`, binding.place(logicalId, 'Handler'));
  const roleLogicalId = refTarget(properties.Role);
  const credentials = (roleLogicalId && options.credentials.get(roleLogicalId)) || undefined;
  if (!credentials && services.iam) options.warn(`${path}: its role is not in the template; its AWS calls are not judged`);
  const environment = Object.fromEntries(
    Object.keys((properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}).map((name) => [
      name,
      binding.resolvePropertyText(logicalId, `Environment.Variables.${name}`),
    ]),
  );
  refuseOversizedEnvironment(binding.place(logicalId, 'Environment.Variables'), environment);
  const name = binding.nameOf(logicalId);
  const timeoutSeconds = Number(properties.Timeout ?? LAMBDA_DEFAULT_TIMEOUT_SECONDS);
  const memoryMb = Number(properties.MemorySize ?? LAMBDA_DEFAULT_MEMORY_MB);
  const reserved = properties.ReservedConcurrentExecutions === undefined ? undefined : Number(properties.ReservedConcurrentExecutions);
  const own = credentials ?? LOCAL_AWS.credentials;
  const endpoints = services.functionEndpoints;
  mkdirSync(options.logDir, { recursive: true });
  const file = createWriteStream(join(options.logDir, `${stack.stackName}-${path.replace(/[^\w.-]+/g, '-')}.log`), { flags: 'a' });
  services.onStop(() => new Promise((resolve) => file.end(resolve)));
  const host = new LambdaHost({
    functionName: name,
    bundlePath,
    handlerExport: handler.slice(dot + 1),
    memoryMb,
    timeoutMs: timeoutSeconds * 1000,
    concurrency: reserved ?? options.defaultConcurrency,
    logs: options.onLogLine ? lineTap(file, (line) => options.onLogLine!(fn, line)) : file,
    environment: {
      // What Lambda gives every function, with the local endpoints and its role's credentials.
      AWS_REGION: binding.region,
      AWS_DEFAULT_REGION: binding.region,
      AWS_ACCESS_KEY_ID: own.accessKeyId,
      AWS_SECRET_ACCESS_KEY: own.secretAccessKey,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      LAMBDA_TASK_ROOT: codeDir,
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secretsManager,
      AWS_ENDPOINT_URL_EVENTBRIDGE: endpoints.eventBridge,
      AWS_ENDPOINT_URL_LAMBDA: endpoints.lambda,
      // SNS is the stand-in's HTTPS host, trusted by its CA (Node reads the file when each environment's process starts).
      AWS_ENDPOINT_URL_SNS: endpoints.sns,
      NODE_EXTRA_CA_CERTS: services.sns.caFile,
      NODE_NO_WARNINGS: '1',
      NODE_PATH: RUNTIME_NODE_PATH,
      ...environment,
    },
  });
  let interceptor: Interceptor | undefined;
  const fn: LocalFunction = {
    logicalId,
    path,
    name,
    arn: binding.get(logicalId).attributes!.Arn,
    host,
    roleLogicalId,
    timeoutSeconds,
    environment,
    variables: environment[Env.CONFIG_FILE] ? handlerVariables(environment, readFileSync(join(codeDir, environment[Env.CONFIG_FILE]), 'utf8')) : environment,
    invoke: <R>(event: unknown) => {
      const direct = async (fault?: InvocationFault) => {
        const started = Date.now();
        let failed = true;
        try {
          const result = await host.invoke<R>(event, fault);
          failed = false;
          return result;
        } finally {
          options.onInvocation?.(fn, { durationMs: Date.now() - started, failed });
        }
      };
      return (interceptor ? interceptor(event, direct as (fault?: InvocationFault) => Promise<unknown>) : direct()) as Promise<R>;
    },
    intercept: (next) => {
      interceptor = next;
    },
  };
  return fn;
}

/** Lambda's limit on a function's environment: the JSON text of all its variables, in bytes. */
const ENVIRONMENT_LIMIT_BYTES = 4096;

/** Lambda refuses a function whose variables exceed 4 KB in all (measured as the JSON text of them), with this message. */
function refuseOversizedEnvironment(place: TemplatePlace, environment: Readonly<Record<string, string>>): void {
  const measured = JSON.stringify(environment);
  if (Buffer.byteLength(measured, 'utf8') <= ENVIRONMENT_LIMIT_BYTES) return;
  throw new TemplateError(
    `Lambda was unable to configure your environment variables because the environment variables you have provided exceeded the 4KB limit. String measured: ${measured}`,
    place,
  );
}

/** The folder a function's code is in: its asset, or its inline code written out. */
function codeFolder(stack: SynthesizedStack, logicalId: string, resource: TemplateResource, binding: StackBinding, options: FunctionOptions): string {
  const properties = resource.Properties ?? {};
  const asset = assetPathOf(stack, resource, 'Code');
  if (asset) return asset;
  const inline = (properties.Code as { ZipFile?: unknown } | undefined)?.ZipFile;
  if (typeof inline === 'string') {
    const folder = join(options.codeDir, stack.stackName, logicalId);
    mkdirSync(folder, { recursive: true });
    const handler = String(properties.Handler ?? 'index.handler');
    writeFileSync(join(folder, `${handler.slice(0, handler.lastIndexOf('.'))}.js`), inline);
    return folder;
  }
  throw new TemplateError(
    'neither an asset of the assembly nor inline code (an S3 object or an image cannot be run locally)',
    binding.place(logicalId, 'Code'),
  );
}

/** Writes through to `sink` and hands each complete line to `onLine`. */
function lineTap(sink: NodeJS.WritableStream, onLine: (line: string) => void): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      sink.write(chunk);
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(line);
      done();
    },
  });
}
