/**
 * Runs one synthesized stack on the local services: its data resources created from their
 * properties, its roles registered with the IAM gateway from their policies, its functions run
 * from their assets with their environments resolved, its triggers (APIs, queues, rules) wired as
 * the template wires them, and its secrets' rotation schedules turned on. Nothing here knows the
 * inbox: what runs is the template.
 */
import { join } from 'node:path';
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import {
  CERTIFICATE_SIGNED_ADAPTERS,
  Env,
  OPS_CONFIG_OUTPUT_DESCRIPTION,
  OpsConfig,
  POLLED_ONLY_ADAPTERS,
  ProviderRuntimeConfig,
} from '../../../../../lib/contract';
import type { ApiAccessRecord } from '../apigateway/front-door';
import type { LocalCredentials } from '../iam/gateway';
import { identityPoliciesOf, resourcePoliciesOf } from '../iam/template-policies';
import { constructPath, SynthesizedStack } from './assembly';
import { StackBinding } from './binding';
import { refTarget } from './intrinsics';
import { TemplateError } from './template-error';
import { InvocationOutcome, LocalFunction, startFunctions } from './functions';
import { CreatedResources, createDataResources, LocalQueue } from './resources';
import { signingSecretFor, templateSecretValue } from './secret-values';
import { startRotationSchedules } from '../secretsmanager/rotation-schedules';
import type { LocalServices } from '../services';
import { apiRoutes, LocalApi, LocalEventSource, RuleDelivery, ScheduleClock, startApis, startTriggers, TriggerOptions } from './triggers';

/** AWS managed policies that only grant what nothing local calls (CloudWatch Logs): not worth a warning. */
const LOGS_ONLY_POLICIES = /:iam::aws:policy\/service-role\/(AWSLambdaBasicExecutionRole|AmazonAPIGatewayPushToCloudWatchLogs)$/;

export interface RunStackOptions {
  readonly account: string;
  readonly region: string;
  /** Port of the stack's first HTTP API; 0 picks a free one. */
  readonly port?: number;
  readonly fallback?: TriggerOptions['fallback'];
  /** Where logs and inline code go. */
  readonly stateDir: string;
  /** Execution environments per function without reserved concurrency. */
  readonly defaultConcurrency: number;
  readonly clock: ScheduleClock;
  /** Signing secret values by provider name (the others are generated). */
  readonly signingSecrets?: Readonly<Record<string, string>>;
  readonly warn: (line: string) => void;
  readonly onApiResponse?: (api: LocalApi, record: ApiAccessRecord) => void;
  readonly onRuleDelivery?: (delivery: RuleDelivery) => void;
  readonly onScheduled?: (rule: string) => void;
  readonly onLogLine?: (fn: LocalFunction, line: string) => void;
  readonly onInvocation?: (fn: LocalFunction, outcome: InvocationOutcome) => void;
}

/** A provider of an inbox, as the local run serves it. */
export interface LocalProvider {
  readonly name: string;
  readonly adapter: string;
  /** Its webhook URL (the inbox's route for it). */
  readonly url: string;
  /**
   * The URL the provider signs instead, where it signs one (Square's notification URL, Twilio's
   * webhook URL), as the template configures it: the twin's own URL is plain HTTP on a local port.
   */
  readonly signedUrl?: string;
  /** Its signing secret's ARN; absent for a provider whose requests name their certificate (SNS). */
  readonly secretArn?: string;
  /** What its simulated sender signs with: the secret's value, or (SNS) the local SNS stand-in's signing key (PKCS#8 PEM). */
  readonly secret: string;
  /** The topics it serves (SNS). */
  readonly topicArns?: readonly string[];
}

/** An inbox of the stack, found by its ops configuration output. */
export interface LocalInbox {
  readonly stackName: string;
  /** The ops configuration the stack outputs, resolved to the local resources. */
  readonly opsConfig: OpsConfig;
  readonly providers: readonly LocalProvider[];
  readonly functions: {
    readonly verifier?: LocalFunction;
    readonly processor?: LocalFunction;
    readonly reconciler?: LocalFunction;
    readonly rotator?: LocalFunction;
  };
  readonly workQueue: LocalQueue;
  readonly deadLetterQueue?: LocalQueue;
  /** The bus its processor puts effect events on. */
  readonly eventBus?: string;
  /** The scheduled rule whose target is the reconciler. */
  readonly reconcileRule?: string;
}

export interface RunningStack {
  readonly stack: SynthesizedStack;
  readonly binding: StackBinding;
  readonly resources: CreatedResources;
  readonly functions: ReadonlyMap<string, LocalFunction>;
  readonly apis: readonly LocalApi[];
  readonly eventSources: ReadonlyMap<string, LocalEventSource>;
  /** Each role's local credentials, by its logical id. */
  readonly credentials: ReadonlyMap<string, LocalCredentials>;
  /** The stack's outputs, resolved. */
  readonly outputs: Readonly<Record<string, string>>;
  readonly inboxes: readonly LocalInbox[];
  fireSchedule(ruleLogicalId: string): Promise<void>;
}

export async function runStack(stack: SynthesizedStack, services: LocalServices, options: RunStackOptions): Promise<RunningStack> {
  const binding = new StackBinding(stack.stackName, stack.template, options.account, options.region);
  const resources = await createDataResources(stack, binding, services);
  const apis = await startApis(stack, binding, options);
  services.onStop(() => apis.stop());
  const credentials = registerRoles(stack, binding, services, options.warn);
  const functions = startFunctions(stack, binding, services, {
    logDir: join(options.stateDir, 'logs'),
    codeDir: join(options.stateDir, 'code'),
    credentials,
    defaultConcurrency: options.defaultConcurrency,
    onLogLine: options.onLogLine,
    onInvocation: options.onInvocation,
    warn: options.warn,
  });
  const routes = apiRoutes(stack, binding, functions, options.warn);
  for (const [apiLogicalId, list] of routes) apis.routeTables.get(apiLogicalId)?.push(...list.map(({ route }) => route));
  const triggers = startTriggers(stack, binding, services, functions, resources.queues, credentials, options);
  const outputs = Object.fromEntries(Object.keys(stack.template.Outputs ?? {}).map((key) => [key, binding.resolveOutput(key)]));
  const inboxes = await inboxesOf(stack, services, functions, resources, outputs, routes, apis.apis, options.signingSecrets ?? {}, options.warn);
  await fillOtherSecrets(binding, services, resources, inboxes);
  // Once every secret holds its value, as CloudFormation creates a schedule after its secret.
  await startRotationSchedules(stack, binding, services, functions, options.warn);
  return {
    stack,
    binding,
    resources,
    functions,
    apis: apis.apis,
    eventSources: triggers.eventSources,
    credentials,
    outputs,
    inboxes,
    fireSchedule: triggers.fireSchedule,
  };
}

/** Registers every role of the template with the IAM gateway; the credentials of each. */
function registerRoles(stack: SynthesizedStack, binding: StackBinding, services: LocalServices, warn: (line: string) => void): Map<string, LocalCredentials> {
  const credentials = new Map<string, LocalCredentials>();
  const gateway = services.iam?.gateway;
  if (!gateway) return credentials;
  const resourcePolicies = binding.placed(() => resourcePoliciesOf(stack.template, binding.binding()));
  for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Role') continue;
    const path = constructPath(stack, logicalId, resource);
    const policies = binding.placed(() =>
      identityPoliciesOf(stack.template, logicalId, binding.binding(), (arn) => {
        if (!LOGS_ONLY_POLICIES.test(arn)) warn(`${path}: managed policy ${arn} is not in the template; locally it grants nothing`);
      }),
    );
    credentials.set(
      logicalId,
      gateway.register({ name: `${stack.stackName}/${path}`, roleArn: binding.get(logicalId).attributes!.Arn, policies, resourcePolicies }),
    );
  }
  return credentials;
}

async function inboxesOf(
  stack: SynthesizedStack,
  services: LocalServices,
  functions: ReadonlyMap<string, LocalFunction>,
  resources: CreatedResources,
  outputs: Readonly<Record<string, string>>,
  routes: ReturnType<typeof apiRoutes>,
  apis: readonly LocalApi[],
  signingSecrets: Readonly<Record<string, string>>,
  warn: (line: string) => void,
): Promise<LocalInbox[]> {
  const inboxes: LocalInbox[] = [];
  for (const [key, output] of Object.entries(stack.template.Outputs ?? {})) {
    if (!output.Description?.startsWith(OPS_CONFIG_OUTPUT_DESCRIPTION)) continue;
    const opsConfig = JSON.parse(outputs[key]) as OpsConfig;
    const own = [...functions.values()].filter((fn) => fn.variables[Env.INBOX_NAME] === opsConfig.inboxName);
    const having = (variable: string) => own.find((fn) => variable in fn.variables);
    const verifier = having(Env.MAX_BODY_BYTES);
    const inboxFunctions = {
      verifier,
      processor: having(Env.LEASE_SECONDS),
      reconciler: having(Env.SWEEP_AFTER_SECONDS),
      rotator: having(Env.ROTATED_SECRETS),
    };
    const queueByUrl = (url: string | undefined) => [...resources.queues.values()].find((queue) => queue.url === url);
    const workQueue = queueByUrl(opsConfig.workQueueUrl);
    if (!workQueue) {
      throw new TemplateError(`the inbox ${opsConfig.inboxName} names a work queue that is not in the template`, { stackName: stack.stackName, output: key });
    }
    const configs = verifier ? (JSON.parse(verifier.variables[Env.PROVIDERS] ?? '[]') as ProviderRuntimeConfig[]) : [];
    const providers: LocalProvider[] = [];
    for (const config of configs) {
      // A polled-only provider has no route and no sender: nothing posts for it.
      if (POLLED_ONLY_ADAPTERS.includes(config.adapter)) continue;
      const route = [...routes]
        .flatMap(([apiLogicalId, list]) => list.map((entry) => ({ apiLogicalId, ...entry })))
        .find((entry) => entry.functionLogicalId === verifier!.logicalId && entry.route.routeKey.endsWith(`/${config.name}`));
      const api = apis.find((candidate) => candidate.logicalId === route?.apiLogicalId);
      // A provider that signs with certificates (SNS) has no secret: its messages are signed by the SNS stand-in.
      const certificateSigned = CERTIFICATE_SIGNED_ADAPTERS.includes(config.adapter);
      if (certificateSigned && signingSecrets[config.name] !== undefined) {
        warn(`provider ${config.name} signs with certificates, not a secret: the secret given for it is ignored`);
      }
      const secret = certificateSigned ? services.sns.signingKeyPem : (signingSecrets[config.name] ?? signingSecretFor(config));
      if (config.secretId) await services.clients.secrets.send(new PutSecretValueCommand({ SecretId: config.secretId, SecretString: secret }));
      providers.push({
        name: config.name,
        adapter: config.adapter,
        url: api && route ? `${api.url}${route.route.routeKey.split(' ')[1]}` : '',
        ...(config.notificationUrl ? { signedUrl: config.notificationUrl } : {}),
        secretArn: config.secretId,
        secret,
        ...(config.topicArns ? { topicArns: config.topicArns } : {}),
      });
    }
    const reconcileRule = Object.entries(stack.template.Resources).find(
      ([, resource]) =>
        resource.Type === 'AWS::Events::Rule' &&
        inboxFunctions.reconciler &&
        ((resource.Properties?.Targets as { Arn?: unknown }[] | undefined) ?? []).some(
          (target) => refTarget(target.Arn) === inboxFunctions.reconciler!.logicalId,
        ),
    )?.[0];
    inboxes.push({
      stackName: stack.stackName,
      opsConfig,
      providers,
      functions: inboxFunctions,
      workQueue,
      deadLetterQueue: queueByUrl(opsConfig.deadLetterQueueUrl),
      ...(inboxFunctions.processor?.variables[Env.EFFECT_BUS_NAME] ? { eventBus: inboxFunctions.processor.variables[Env.EFFECT_BUS_NAME] } : {}),
      ...(reconcileRule ? { reconcileRule } : {}),
    });
  }
  return inboxes;
}

/** Secrets no inbox signs with: the template's value, or one generated as it asks. */
async function fillOtherSecrets(binding: StackBinding, services: LocalServices, resources: CreatedResources, inboxes: readonly LocalInbox[]): Promise<void> {
  const signing = new Set(inboxes.flatMap((inbox) => inbox.providers.map((provider) => provider.secretArn)));
  for (const [logicalId, arn] of resources.secrets) {
    if (signing.has(arn)) continue;
    await services.clients.secrets.send(new PutSecretValueCommand({ SecretId: arn, SecretString: templateSecretValue(binding.resolveProperties(logicalId)) }));
  }
}
