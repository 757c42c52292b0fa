/**
 * Where the CLI learns an inbox's resources: the stack output the construct publishes (one per
 * inbox, `OPS_CONFIG_OUTPUT_DESCRIPTION (<construct path>)`, value the OpsConfig JSON), or a
 * JSON file with the same document plus optional endpoints (the local twin writes one).
 */
import { readFileSync } from 'node:fs';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { LocalOpsConfig, OPS_CONFIG_OUTPUT_DESCRIPTION, OpsConfig, OpsEndpoints } from '../lib/contract';

export type { LocalOpsConfig, OpsEndpoints };
import { OpsError, UsageError } from './errors';

/** Endpoints of a local twin (emulators); absent ones use the SDK's defaults (AWS, or `AWS_ENDPOINT_URL_*`). */
/** A stack output as DescribeStacks returns it. */
export interface StackOutput {
  readonly OutputKey?: string;
  readonly OutputValue?: string;
  readonly Description?: string;
}

/** One inbox's output: the construct path named in its description, and its OpsConfig. */
export interface InboxOutput {
  readonly path: string;
  readonly config: OpsConfig;
}

const REQUIRED_STRINGS = ['inboxName', 'inboxTable', 'resultsTable', 'workQueueUrl', 'reconcilerFunctionName'] as const;
const OPTIONAL_STRINGS = ['deadLetterQueueUrl', 'bodyBucket', 'archiveBucket'] as const;
const ENDPOINT_NAMES = ['dynamodb', 'sqs', 's3', 'lambda'] as const;
/** The fields a --config file may add to an OpsConfig beside its endpoints (the twin's events). */
const LOCAL_OPTIONAL_STRINGS = ['eventsLog', 'eventBus'] as const;

/** What is wrong with an OpsConfig document; empty when it is usable. */
export function opsConfigProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['is not a JSON object'];
  const doc = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const name of REQUIRED_STRINGS) {
    if (typeof doc[name] !== 'string' || doc[name] === '') problems.push(`${name} is missing`);
  }
  for (const name of OPTIONAL_STRINGS) {
    if (doc[name] !== undefined && typeof doc[name] !== 'string') problems.push(`${name} is not a string`);
  }
  if (!Array.isArray(doc.providers) || !doc.providers.every((p) => typeof p === 'string')) {
    problems.push('providers is missing (an array of provider names)');
  }
  const retention = doc.resultRetentionSeconds;
  if (retention !== undefined && !(Number.isSafeInteger(retention) && (retention as number) > 0)) {
    problems.push('resultRetentionSeconds is not a positive whole number of seconds');
  }
  return problems;
}

/** What is wrong with a config file's endpoints; empty when they are usable. */
export function endpointProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['endpoints is not a JSON object'];
  const endpoints = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const [name, url] of Object.entries(endpoints)) {
    if (name === 'region') {
      if (typeof url !== 'string' || url === '') problems.push('endpoints.region is not a region name');
    } else if (!(ENDPOINT_NAMES as readonly string[]).includes(name)) {
      problems.push(`endpoints.${name} is not one of ${ENDPOINT_NAMES.join(', ')}, region`);
    } else if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) {
      problems.push(`endpoints.${name} is not an http(s) URL`);
    }
  }
  return problems;
}

/** The inbox outputs among a stack's outputs. */
export function inboxOutputs(outputs: readonly StackOutput[], stackName: string): InboxOutput[] {
  return outputs
    .filter((output) => (output.Description ?? '').startsWith(OPS_CONFIG_OUTPUT_DESCRIPTION))
    .map((output) => {
      const rest = output.Description!.slice(OPS_CONFIG_OUTPUT_DESCRIPTION.length).trim();
      const path = /^\((.*)\)$/.exec(rest)?.[1] ?? '';
      const where = `stack ${stackName}: output ${output.OutputKey ?? '?'} (${path || 'no path'})`;
      let value: unknown;
      try {
        value = JSON.parse(output.OutputValue ?? '');
      } catch {
        throw new OpsError(`${where} is not JSON`);
      }
      const problems = opsConfigProblems(value);
      if (problems.length > 0) throw new OpsError(`${where}: ${problems.join('; ')}`);
      return { path, config: value as OpsConfig };
    });
}

/**
 * The OpsConfig of the inbox to act on, from a stack's outputs. `inbox` matches an inbox's
 * construct path exactly, a trailing part of it (`Inbox` for `MyStack/Inbox`), or its name.
 */
export function selectOpsConfig(outputs: readonly StackOutput[], stackName: string, inbox?: string): OpsConfig {
  const inboxes = inboxOutputs(outputs, stackName);
  if (inboxes.length === 0) {
    throw new OpsError(
      `stack ${stackName} has no output described "${OPS_CONFIG_OUTPUT_DESCRIPTION} (...)": ` +
        'is a WebhookInbox deployed in it, by a version of cdk-webhook-inbox that publishes its ops configuration?',
    );
  }
  const listing = inboxes.map((candidate) => candidate.path).join(', ');
  if (inbox === undefined) {
    if (inboxes.length > 1) {
      throw new UsageError(`stack ${stackName} has ${inboxes.length} inboxes (${listing}): choose one with --inbox <construct path>`);
    }
    return inboxes[0].config;
  }
  const exact = inboxes.filter((candidate) => candidate.path === inbox);
  const matches = exact.length > 0 ? exact : inboxes.filter((candidate) => candidate.path.endsWith(`/${inbox}`) || candidate.config.inboxName === inbox);
  if (matches.length === 0) throw new UsageError(`stack ${stackName} has no inbox at ${inbox}; its inboxes: ${listing}`);
  if (matches.length > 1) {
    throw new UsageError(
      `--inbox ${inbox} matches ${matches.length} inboxes of stack ${stackName} (${matches.map((m) => m.path).join(', ')}): give the full construct path`,
    );
  }
  return matches[0].config;
}

/** A stack's outputs, with a clear error when the stack does not exist. */
export async function stackOutputs(client: CloudFormationClient, stackName: string): Promise<StackOutput[]> {
  try {
    const out = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = out.Stacks?.[0];
    if (!stack) throw new OpsError(`no such stack: ${stackName}`);
    return stack.Outputs ?? [];
  } catch (error) {
    const { name, message } = error as { name?: string; message?: string };
    if (name === 'ValidationError' && /does not exist/i.test(message ?? '')) {
      const region = await client.config.region().catch(() => 'unknown');
      throw new OpsError(`no such stack: ${stackName} (region ${region}; set --region or AWS_REGION if it is elsewhere)`);
    }
    throw error;
  }
}

/** Reads and checks a `--config` file. */
export function loadConfigFile(path: string): LocalOpsConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --config ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${path} is not JSON: ${(error as Error).message}`);
  }
  const doc = value as Record<string, unknown> | null;
  const problems = [
    ...opsConfigProblems(value),
    ...endpointProblems(doc?.endpoints),
    ...LOCAL_OPTIONAL_STRINGS.filter((name) => doc?.[name] !== undefined && typeof doc[name] !== 'string').map((name) => `${name} is not a string`),
  ];
  if (problems.length > 0) throw new UsageError(`--config ${path}: ${problems.join('; ')}`);
  return value as LocalOpsConfig;
}
