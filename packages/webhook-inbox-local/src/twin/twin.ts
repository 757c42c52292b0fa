/**
 * The local twin: a synthesized CloudFormation template run on 127.0.0.1, with no AWS account.
 * Every resource comes from the template (tables, queues, bucket, secrets, bus and rules, the
 * HTTP API's routes, the schedule, each Lambda function from its asset with its environment
 * resolved), and each function calls AWS under its own role's policy from the template, judged by
 * the IAM gateway: what runs locally is what deploys. `startTemplateTwin` runs any app's cloud
 * assembly; `startTwin` (inbox-twin.ts) synthesizes the twin's own app first (app.ts).
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import type { LocalOpsConfig } from '../../../../lib/contract';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../aws/local-aws';
import { checkRestApiStageLogging } from '../aws/apigateway/account-settings';
import { constructPath, loadStacks } from '../aws/cloudformation/assembly';
import { LocalInbox, RunningStack, runStack } from '../aws/cloudformation/run-stack';
import { LocalServices, startLocalServices } from '../aws/services';
import { nextPort, type ScheduleClock } from '../aws/cloudformation/triggers';
import { TwinMonitor } from './monitor';
import { consoleRequestListener, CONSOLE_PATH } from './console/server';
import { trailRecordOf } from '../aws/iam/trail-record';

export { TWIN_PROVIDERS } from './app';
export type { TwinProviderSpec } from './app';
export { LOCAL_AWS } from '../aws/local-aws';
export type { InvocationFault, Interceptor } from '../aws/cloudformation/functions';

export interface TemplateTwinOptions {
  /** A cloud assembly folder (`cdk.out`) or a template file. */
  readonly app: string;
  /** Only these stacks (by name or display path). @default every stack */
  readonly stacks?: readonly string[];
  /** Port of the first HTTP API (and the console), the other APIs on the ports after it; 0 picks a free one for each. */
  readonly port?: number;
  /** Signing secrets by provider name; the others are generated. */
  readonly secrets?: Readonly<Record<string, string>>;
  /** Keep DynamoDB data in this folder across restarts. */
  readonly dataDir?: string;
  /** Where the twin writes the ops CLI's configuration, the functions' logs and the events log. */
  readonly stateDir?: string;
  /** Runs schedules this many times faster than real time. @default 1 */
  readonly timeScale?: number;
  /**
   * Shortens every queue's visibility timeout this many times (to 1 s at least), so a failed
   * message is received again, and dead-lettered, as much sooner: a runbook drill in minutes.
   * @default timeScale
   */
  readonly visibilityTimeScale?: number;
  /** Execution environments per function without reserved concurrency. @default 4 */
  readonly defaultConcurrency?: number;
  /** Judge every function's AWS calls by its role's policy from the template. @default true */
  readonly enforceIam?: boolean;
  /** More secrets to create before the stacks run, name → value (API keys the template imports by name). */
  readonly extraSecrets?: Readonly<Record<string, string>>;
  /**
   * The account's API Gateway CloudWatch role in the region (`aws apigateway get-account`), which a
   * REST API stage needs before it may write logs.
   * @default - none, as in a new account: a stage that logs is refused unless a stack sets the role
   */
  readonly apiGatewayCloudWatchRoleArn?: string;
  /** Progress and warnings while the twin starts and runs. @default stderr */
  readonly log?: (line: string) => void;
  /**
   * What the alarms' runbook paths (`docs/RUNBOOK.md#…`) are relative to: a folder, or a URL ending in `/`.
   * @default - the installed construct's folder, relative to the working folder (`node_modules/cdk-webhook-inbox/`)
   */
  readonly runbookBase?: string;
}

export interface TemplateTwin {
  readonly services: LocalServices;
  readonly stacks: readonly RunningStack[];
  readonly inboxes: readonly LocalInbox[];
  /** The ops CLI's configuration file of each inbox, by inbox name. */
  readonly opsConfigPaths: Readonly<Record<string, string>>;
  readonly logDir: string;
  /** Every event put on a bus, one JSON line each, and what the rules delivered. */
  readonly eventsLog: string;
  /** The metrics and the template's alarms, as the twin evaluates them. */
  readonly monitor: TwinMonitor;
  /** One JSON line per alarm state change. */
  readonly notificationsLog: string;
  /** The local console, on the first API's port; absent without an HTTP API. */
  readonly consoleUrl?: string;
  /** Each function's AWS calls the IAM gateway refused, by its stack and path (`Prod/Inbox/Verifier`): paths repeat from stack to stack. */
  deniedByFunction(): Record<string, number>;
  stop(): Promise<void>;
}

export async function startTemplateTwin(options: TemplateTwinOptions): Promise<TemplateTwin> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const stacks = loadStacks(options.app, options.stacks);
  // Refused as CloudFormation would refuse it, before anything starts.
  checkRestApiStageLogging(stacks, options.apiGatewayCloudWatchRoleArn !== undefined);
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const services = await startLocalServices({ dataDir: options.dataDir, enforceIam: options.enforceIam, progress: log });
  try {
    const stateDir = options.stateDir ?? join(process.cwd(), '.twin');
    const logDir = join(stateDir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const eventsLog = join(stateDir, 'events.log');
    writeFileSync(eventsLog, '');
    const record = (entry: object) => appendFileSync(eventsLog, `${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`);
    services.eventBridge.onAccepted((event) => record({ type: 'event', ...event }));
    for (const [name, value] of Object.entries(options.extraSecrets ?? {})) {
      await services.clients.secrets.send(new CreateSecretCommand({ Name: name, SecretString: value }));
    }
    const clock = scaledClock(options.timeScale ?? 1);
    const notificationsLog = join(stateDir, 'notifications.log');
    writeFileSync(notificationsLog, '');
    const monitor = new TwinMonitor({ clock, notificationsLog, log, runbookBase: options.runbookBase ?? installedConstructFolder() });
    services.onStop(() => monitor.stop());
    // Each function's role, known once the stacks run: the denials are counted by function.
    const functionsByPrincipal = new Map<string, string>();
    const deniedByFunction = () => {
      const counts: Record<string, number> = {};
      for (const denial of services.iam?.gateway.denials ?? []) {
        const name = functionsByPrincipal.get(denial.principal) ?? denial.principal;
        counts[name] = (counts[name] ?? 0) + 1;
      }
      return counts;
    };
    // A missing grant shows as it happens, as AWS would record it in the account's trail.
    services.iam?.gateway.onDenial((denial) =>
      log(
        `denied: ${functionsByPrincipal.get(denial.principal) ?? denial.principal} ${denial.action} on ${denial.resource} ` +
          JSON.stringify(trailRecordOf(denial, LOCAL_REGION)),
      ),
    );
    const source = monitor.consoleSource(services);
    const consoleListener = consoleRequestListener({
      snapshot: async () => ({ ...(await source.snapshot()), iam: { enforced: services.iam !== undefined, deniedByFunction: deniedByFunction() } }),
    });
    const running: RunningStack[] = [];
    for (const [index, stack] of stacks.entries()) {
      log(`running stack ${stack.stackName} from its template…`);
      running.push(
        await runStack(stack, services, {
          account: LOCAL_ACCOUNT,
          region: LOCAL_REGION,
          port: nextPort(options.port, running.flatMap((started) => started.apis).length),
          // The console shares the first API's loopback port.
          ...(index === 0 ? { fallback: consoleListener } : {}),
          stateDir,
          defaultConcurrency: options.defaultConcurrency ?? 4,
          clock,
          visibilityTimeScale: options.visibilityTimeScale ?? options.timeScale ?? 1,
          signingSecrets: options.secrets,
          warn: (line) => log(`warning: ${line}`),
          onRuleDelivery: (delivery) => record({ type: 'rule-delivery', ...delivery }),
          onLogLine: (fn, line) => monitor.onLogLine(fn, line),
          onInvocation: (fn, outcome) => monitor.onInvocation(fn, outcome),
          onApiResponse: (api, response) => monitor.onApiResponse(api, response),
        }),
      );
    }
    monitor.start(running, services);
    const firstApi = running[0]?.apis[0];
    const inboxes = running.flatMap((stack) => stack.inboxes);
    const opsConfigPaths: Record<string, string> = {};
    for (const inbox of inboxes) {
      const document: LocalOpsConfig = {
        ...inbox.opsConfig,
        endpoints: {
          dynamodb: services.endpoints.dynamodb,
          sqs: services.endpoints.sqs,
          s3: services.endpoints.s3,
          lambda: services.endpoints.lambda,
          region: LOCAL_REGION,
        },
        eventsLog,
        ...(inbox.eventBus ? { eventBus: inbox.eventBus } : {}),
      };
      const path = join(stateDir, inboxes.length === 1 ? 'ops-config.json' : `ops-config.${fileNameOf(inbox.path)}.json`);
      writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
      opsConfigPaths[inbox.opsConfig.inboxName] = path;
    }
    for (const stack of running) {
      for (const fn of stack.functions.values()) {
        functionsByPrincipal.set(`${stack.stack.stackName}/${roleName(stack, fn.roleLogicalId)}`, `${stack.stack.stackName}/${fn.path}`);
      }
    }
    return {
      services,
      stacks: running,
      inboxes,
      opsConfigPaths,
      logDir,
      eventsLog,
      monitor,
      notificationsLog,
      ...(firstApi ? { consoleUrl: `${firstApi.url}${CONSOLE_PATH}` } : {}),
      deniedByFunction,
      stop: () => services.stop(),
    };
  } catch (error) {
    await services.stop();
    throw error;
  }
}

/**
 * The twin's ready line: every endpoint (the stand-ins' included, with the SNS stand-in's CA file),
 * each inbox's providers with their URL, secret ARN and value (SNS: its topics, and the stand-in's
 * signing key as the value), its tables, queues, bus and bucket, and where logs and events go.
 */
export function readyLine(twin: TemplateTwin): Record<string, unknown> {
  // Every inbox's webhook URLs and secrets, where scripts look for them: by provider name, or by
  // `<inbox path>/<provider>` for a name that more than one inbox has.
  const providers = twin.inboxes.flatMap((inbox) => inbox.providers.map((provider) => ({ inbox, provider })));
  const shared = (name: string) => providers.filter(({ provider }) => provider.name === name).length > 1;
  const keyOf = (inbox: LocalInbox, name: string) => (shared(name) ? `${inbox.path}/${name}` : name);
  return {
    ready: true,
    endpoints: Object.fromEntries(providers.map(({ inbox, provider }) => [keyOf(inbox, provider.name), provider.url])),
    secrets: Object.fromEntries(providers.map(({ inbox, provider }) => [keyOf(inbox, provider.name), provider.secret])),
    services: { ...twin.services.endpoints, ...(twin.services.iam ? { iamGateway: twin.services.iam.endpoint } : {}) },
    // What trusts the SNS stand-in's host (curl --cacert, NODE_EXTRA_CA_CERTS).
    snsCaFile: twin.services.sns.caFile,
    region: LOCAL_REGION,
    inboxes: twin.inboxes.map((inbox) => ({
      stack: inbox.stackName,
      path: inbox.path,
      name: inbox.opsConfig.inboxName,
      providers: inbox.providers.map(({ name, adapter, url, signedUrl, secretArn, secret, topicArns }) => ({
        name,
        adapter,
        url,
        ...(signedUrl ? { signedUrl } : {}),
        secretArn,
        secret,
        topicArns,
      })),
      tables: { inbox: inbox.opsConfig.inboxTable, results: inbox.opsConfig.resultsTable },
      queues: { work: inbox.opsConfig.workQueueUrl, deadLetter: inbox.opsConfig.deadLetterQueueUrl },
      ...(inbox.eventBus ? { bus: inbox.eventBus } : {}),
      ...(inbox.opsConfig.bodyBucket ? { bucket: inbox.opsConfig.bodyBucket } : {}),
      opsConfig: twin.opsConfigPaths[inbox.opsConfig.inboxName],
    })),
    ...(twin.consoleUrl ? { console: twin.consoleUrl } : {}),
    logs: twin.logDir,
    events: twin.eventsLog,
    notifications: twin.notificationsLog,
  };
}

/** The folder of the construct's package as this folder resolves it (its docs ship in it), relative to here. */
function installedConstructFolder(): string {
  // In the construct's own repository (npm start), its docs are here.
  if (readPackageName(join(process.cwd(), 'package.json')) === CONSTRUCT_PACKAGE) return './';
  try {
    return `${relative(process.cwd(), dirname(require.resolve(`${CONSTRUCT_PACKAGE}/package.json`, { paths: [process.cwd()] })))}/`;
  } catch {
    return `${CONSTRUCT_PACKAGE}/`;
  }
}

const CONSTRUCT_PACKAGE = 'cdk-webhook-inbox';

function readPackageName(path: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { name?: string }).name;
  } catch {
    return undefined;
  }
}

/** A construct path as a file name part: `Answers/Inbox` → `Answers-Inbox`. */
function fileNameOf(path: string): string {
  return path.replace(/[^\w.-]+/g, '-');
}

/** The role's name in the IAM gateway's reports, as the stack registered it. */
function roleName(stack: RunningStack, roleLogicalId: string | undefined): string {
  return roleLogicalId ? constructPath(stack.stack, roleLogicalId, stack.stack.template.Resources[roleLogicalId]) : '';
}

/** Time that runs `scale` times faster than real time from now on. */
function scaledClock(scale: number): ScheduleClock {
  const origin = Date.now();
  const at = (realMs: number) => origin + (realMs - origin) * scale;
  return { scale, at, now: () => at(Date.now()), realDelayUntil: (instant) => Math.max(0, (instant - at(Date.now())) / scale) };
}
