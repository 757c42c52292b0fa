/**
 * Resolves the CloudFormation intrinsic functions of a synthesized template against the local
 * resources that stand for its logical ids: `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`,
 * `Fn::Select`, `Fn::Split` and the pseudo parameters. Strict on purpose: a reference that
 * nothing stands for, or a function it does not know, is an error naming it, never a string
 * that silently matches nothing (which, in an IAM policy, would turn into a puzzling denial).
 * The error says which key of the value held it (`Variables.TABLE`), for the caller to say whose.
 */
import { placed, TemplateError } from './template-error';

/** What one logical id stands for locally: its `Ref` value and its `Fn::GetAtt` attributes. */
export interface BoundResource {
  readonly ref: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

/** Local stand-ins by logical id; `fallback` answers for ids that are not bound (or throws). */
export interface TemplateBinding {
  readonly resources: Readonly<Record<string, BoundResource>>;
  readonly pseudo: Readonly<Record<string, string>>;
  readonly fallback?: (logicalId: string, attribute?: string) => string;
}

/** A value of the template that cannot be resolved locally. */
export class UnresolvableError extends TemplateError {
  override name = 'UnresolvableError';
}

/** The pseudo parameters of a local account and region. */
export function pseudoParameters(account: string, region: string, stackName = 'local'): Record<string, string> {
  return {
    'AWS::AccountId': account,
    'AWS::Region': region,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': stackName,
    'AWS::StackId': `arn:aws:cloudformation:${region}:${account}:stack/${stackName}/local`,
  };
}

/** Resolves every intrinsic in `value` (any JSON) to plain values; an error says at which key of `value`. */
export function resolveIntrinsics(value: unknown, binding: TemplateBinding): unknown {
  return resolveValue(value, binding, true);
}

/** A resolved value that must be text. */
export function resolveString(value: unknown, binding: TemplateBinding): string {
  return text(resolveIntrinsics(value, binding));
}

/** `keyed`: an error names the key of the structure it came from; not inside a function's arguments, which are no property. */
function resolveValue(value: unknown, binding: TemplateBinding, keyed: boolean): unknown {
  const resolveAt = (key: string, item: unknown) =>
    keyed ? placed({ property: key }, () => resolveValue(item, binding, true)) : resolveValue(item, binding, false);
  if (Array.isArray(value)) return value.map((item, index) => resolveAt(String(index), item));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && (entries[0][0] === 'Ref' || entries[0][0].startsWith('Fn::'))) {
    return resolveFunction(entries[0][0], entries[0][1], binding);
  }
  return Object.fromEntries(entries.map(([key, item]) => [key, resolveAt(key, item)]));
}

/** An argument of a function, resolved. */
function resolveArgument(value: unknown, binding: TemplateBinding): unknown {
  return resolveValue(value, binding, false);
}

function text(resolved: unknown): string {
  if (typeof resolved !== 'string') throw new UnresolvableError(`expected text, got ${JSON.stringify(resolved)}`);
  return resolved;
}

function resolveFunction(name: string, argument: unknown, binding: TemplateBinding): unknown {
  switch (name) {
    case 'Ref':
      return ref(String(argument), binding);
    case 'Fn::GetAtt': {
      const [logicalId, attribute] = Array.isArray(argument) ? argument.map(String) : String(argument).split(/\.(.*)/);
      return attributeOf(logicalId, attribute, binding);
    }
    case 'Fn::Join': {
      const [separator, parts] = argument as [string, unknown[]];
      return (resolveArgument(parts, binding) as unknown[]).map((part) => String(part)).join(separator);
    }
    case 'Fn::Select': {
      const [index, list] = argument as [unknown, unknown];
      const items = resolveArgument(list, binding) as unknown[];
      const at = Number(resolveArgument(index, binding));
      if (!Array.isArray(items) || !(at >= 0 && at < items.length)) throw new UnresolvableError(`Fn::Select index ${at} is out of range`);
      return items[at];
    }
    case 'Fn::Split': {
      const [separator, source] = argument as [string, unknown];
      return text(resolveArgument(source, binding)).split(separator);
    }
    case 'Fn::Sub':
      return substitute(argument, binding);
    default:
      throw new UnresolvableError(`${name} is not supported locally`);
  }
}

function ref(logicalId: string, binding: TemplateBinding): string {
  const pseudo = binding.pseudo[logicalId];
  if (pseudo !== undefined) return pseudo;
  const bound = binding.resources[logicalId];
  if (bound) return bound.ref;
  if (binding.fallback) return binding.fallback(logicalId);
  throw new UnresolvableError(`nothing local stands for ${logicalId} (Ref)`);
}

function attributeOf(logicalId: string, attribute: string, binding: TemplateBinding): string {
  const value = binding.resources[logicalId]?.attributes?.[attribute];
  if (value !== undefined) return value;
  if (binding.fallback) return binding.fallback(logicalId, attribute);
  throw new UnresolvableError(`nothing local stands for ${logicalId}.${attribute} (Fn::GetAtt)`);
}

/** `Fn::Sub` in both forms: a template string, or [template, variables]. */
function substitute(argument: unknown, binding: TemplateBinding): string {
  const [template, variables] = Array.isArray(argument) ? (argument as [string, Record<string, unknown>]) : [String(argument), {}];
  const values = Object.fromEntries(Object.entries(variables ?? {}).map(([name, value]) => [name, text(resolveArgument(value, binding))]));
  return template.replace(/\$\{([^}]+)\}/g, (_whole, name: string) => {
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    if (values[name] !== undefined) return values[name];
    const dot = name.indexOf('.');
    return dot < 0 ? ref(name, binding) : attributeOf(name.slice(0, dot), name.slice(dot + 1), binding);
  });
}

/** The logical id a `{ Ref: X }` or `{ 'Fn::GetAtt': [X, …] }` names; undefined for anything else. */
export function refTarget(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const ref = (value as { Ref?: unknown }).Ref;
  if (typeof ref === 'string') return ref;
  const getAtt = (value as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return String(getAtt[0]);
  if (typeof getAtt === 'string') return getAtt.split('.')[0];
  return undefined;
}
