/**
 * What a function of the synthesized template reads, as CloudFormation values: its environment
 * variables, and the variables of the handler configuration file in its asset, each value the
 * file takes from the environment put back in its place. Stated here on its own: a secret the
 * file names as `<prefix><logical id>-<suffix>` is that secret's ARN only when the prefix is
 * `arn:<partition>:secretsmanager:<region>:<account>:secret:` and the suffix is what follows
 * `:secret:<logical id>-` in the secret's own ARN; then it reads as `{ Ref: <logical id> }`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, Stage } from 'aws-cdk-lib';
import { Env, HANDLER_CONFIG_FILE, HandlerConfigFile, PackedPart } from '../../lib/contract';

/** The variables of the file's packing, not settings of their own. */
const PACKING = new Set<string>([Env.CONFIG_FILE, Env.SECRET_ARN_PREFIX, Env.SECRET_ARN_SUFFIXES]);

const SECRET_ARN_PREFIX = {
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':secretsmanager:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':secret:']],
};

/** The settings of the one function of `stack` whose logical id starts with `prefix`. */
export function handlerSettings(stack: Stack, prefix: string): Record<string, any> {
  const assembly = Stage.of(stack)!.synth();
  const template = assembly.getStackByName(stack.stackName).template as { Resources: Record<string, any> };
  const functions = Object.entries(template.Resources).filter(([id, resource]) => id.startsWith(prefix) && resource.Type === 'AWS::Lambda::Function');
  if (functions.length !== 1) throw new Error(`${functions.length} functions start with ${prefix}`);
  const properties = functions[0][1].Properties;
  const env: Record<string, unknown> = properties.Environment?.Variables ?? {};
  const settings: Record<string, any> = Object.fromEntries(Object.entries(env).filter(([name]) => !PACKING.has(name) && !name.startsWith(Env.REF_PREFIX)));
  if (env[Env.CONFIG_FILE] === undefined) return settings;
  const folder = join(assembly.directory, `asset.${String(properties.Code.S3Key).replace(/\.zip$/, '')}`);
  const path = join(folder, String(env[Env.CONFIG_FILE]));
  if (!existsSync(path)) throw new Error(`${prefix}: its asset has no ${env[Env.CONFIG_FILE]}`);
  const file = JSON.parse(readFileSync(path, 'utf8')) as HandlerConfigFile;
  for (const [name, value] of Object.entries(file.variables)) {
    if (name in settings) throw new Error(`${prefix}: ${name} is both in the environment and in ${HANDLER_CONFIG_FILE}`);
    settings[name] = typeof value === 'string' ? value : joined(cloudFormationParts(value.concat, env));
  }
  return settings;
}

function cloudFormationParts(parts: readonly PackedPart[], env: Record<string, unknown>): unknown[] {
  const values: unknown[] = [];
  for (let at = 0; at < parts.length; at++) {
    const part = parts[at];
    if (typeof part === 'string') values.push(part);
    else if (part.env === Env.SECRET_ARN_PREFIX) {
      const [name, suffix] = [parts[at + 1], parts[at + 2]];
      const logicalId = typeof name === 'string' ? name.replace(/-$/, '') : undefined;
      // One suffix is the value itself (a join of one part is that part); several, a comma-separated join.
      const all = env[Env.SECRET_ARN_SUFFIXES] as { 'Fn::Join'?: [string, unknown[]] } | undefined;
      const suffixes = all?.['Fn::Join'] ?? [',', [all]];
      const expected = { 'Fn::Select': [1, { 'Fn::Split': [`:secret:${logicalId}-`, { Ref: logicalId }] }] };
      const valid =
        logicalId !== undefined &&
        typeof suffix === 'object' &&
        suffix.env === Env.SECRET_ARN_SUFFIXES &&
        suffixes?.[0] === ',' &&
        JSON.stringify(suffixes[1][suffix.item!]) === JSON.stringify(expected) &&
        JSON.stringify(env[Env.SECRET_ARN_PREFIX]) === JSON.stringify(SECRET_ARN_PREFIX);
      if (!valid) throw new Error(`not a secret's ARN: ${JSON.stringify(parts.slice(at, at + 3))}`);
      values.push({ Ref: logicalId });
      at += 2;
    } else {
      if (part.item !== undefined || env[part.env] === undefined) throw new Error(`unknown part ${JSON.stringify(part)}`);
      values.push(env[part.env]);
    }
  }
  return values;
}

/** The parts as one CloudFormation value: adjacent text merged, a lone part as itself. */
function joined(values: unknown[]): unknown {
  const merged: unknown[] = [];
  for (const value of values) {
    if (typeof value === 'string' && typeof merged[merged.length - 1] === 'string') merged[merged.length - 1] += value;
    else if (value !== '') merged.push(value);
  }
  if (merged.length === 0) return '';
  return merged.length === 1 ? merged[0] : { 'Fn::Join': ['', merged] };
}
