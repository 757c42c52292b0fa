/**
 * EventBridge event patterns, for the local twin: `validateEventPattern` refuses a malformed or
 * unsupported pattern, naming where it is at fault; `matchesEventPattern` decides as a rule on a
 * bus decides.
 *
 * A pattern is an object whose leaves are non-empty arrays. An event matches when every field the
 * pattern names matches (fields it does not name are ignored); a leaf matches when any element of
 * its array does; an array in the event matches when any of its elements does, nested arrays
 * flattened. Elements are literals (strings, numbers, booleans, null; numbers compare as numbers)
 * or one-operator objects: prefix, suffix, equals-ignore-case, wildcard, anything-but, numeric,
 * exists, cidr. `$or` takes two or more sub-patterns applied to the same object.
 *
 * Not modelled: PutRule's size and `$or` combination limits, the numeric range and 6-decimal
 * precision EventBridge compares numbers with (here they compare as doubles), and canonical forms
 * of IP address literals (a literal string matches the same string only).
 */
import { BlockList, isIP } from 'node:net';
import { TemplateError } from '../cloudformation/template-error';

/** A rule's event pattern EventBridge would refuse, or that is not supported locally. */
export class EventPatternError extends TemplateError {
  override readonly name = 'EventPatternError';

  constructor(
    /** Where in the pattern the fault is, as `detail.state[0].numeric`. */
    readonly path: string,
    reason: string,
  ) {
    super(`Invalid event pattern at ${path || 'its root'}: ${reason}`);
  }
}

/** Throws an EventPatternError naming the first malformed or unsupported part of `pattern`. */
export function validateEventPattern(pattern: unknown): void {
  compileObject(pattern, '', false);
}

/** Whether `event` matches `pattern`; throws an EventPatternError if the pattern is malformed. */
export function matchesEventPattern(pattern: unknown, event: unknown): boolean {
  return matchesObject(compileObject(pattern, '', false), event);
}

type Leaf = string | number | boolean | null;
type ValueTest = (value: Leaf) => boolean;

/** One element of a leaf's array: a test of the field's values, or of whether it has any. */
type Condition = { readonly exists: boolean } | { readonly test: ValueTest };

interface LeafPattern {
  readonly kind: 'leaf';
  readonly conditions: readonly Condition[];
}

interface ObjectPattern {
  readonly kind: 'object';
  readonly fields: readonly (readonly [string, LeafPattern | ObjectPattern])[];
  /** The `$or` sub-patterns, one of which must match too; empty without `$or`. */
  readonly alternatives: readonly ObjectPattern[];
}

const OR = '$or';
const OPERATORS = new Set(['prefix', 'suffix', 'equals-ignore-case', 'wildcard', 'anything-but', 'numeric', 'exists', 'cidr']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLeaf(value: unknown): value is Leaf {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function fieldPath(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function fail(path: string, reason: string): never {
  throw new EventPatternError(path, reason);
}

// --- Compiling: every check PutRule makes happens here, so matching can trust the shape. ---

function compileObject(pattern: unknown, path: string, insideOr: boolean): ObjectPattern {
  if (!isPlainObject(pattern)) fail(path, 'must be an object of fields');
  const entries = Object.entries(pattern);
  if (entries.length === 0) fail(path, 'an empty object is not allowed');
  const fields: (readonly [string, LeafPattern | ObjectPattern])[] = [];
  let alternatives: ObjectPattern[] = [];
  for (const [name, value] of entries) {
    const at = fieldPath(path, name);
    if (name === OR) {
      alternatives = compileOr(value, at);
    } else if (insideOr && OPERATORS.has(name)) {
      // Inside $or an operator name as a field is almost surely a misplaced operator.
      fail(at, `"${name}" is an operator and cannot name a field inside ${OR}`);
    } else if (Array.isArray(value)) {
      fields.push([name, compileLeaf(value, at)]);
    } else if (isPlainObject(value)) {
      fields.push([name, compileObject(value, at, insideOr)]);
    } else {
      fail(at, 'must be an array of values to match or an object of nested fields');
    }
  }
  return { kind: 'object', fields, alternatives };
}

function compileOr(value: unknown, path: string): ObjectPattern[] {
  if (!Array.isArray(value) || value.length < 2) fail(path, `${OR} takes an array of at least two patterns`);
  return value.map((alternative, index) => compileObject(alternative, `${path}[${index}]`, true));
}

function compileLeaf(values: readonly unknown[], path: string): LeafPattern {
  if (values.length === 0) fail(path, 'an empty array is not allowed');
  return { kind: 'leaf', conditions: values.map((value, index) => compileCondition(value, `${path}[${index}]`)) };
}

function compileCondition(element: unknown, path: string): Condition {
  if (isLeaf(element)) return { test: (value) => value === element };
  if (!isPlainObject(element)) fail(path, 'must be a string, number, boolean, null or an operator object');
  const [operator, operand] = soleEntry(element, path);
  const at = fieldPath(path, operator);
  switch (operator) {
    case 'exists':
      if (typeof operand !== 'boolean') fail(at, 'must be true or false');
      return { exists: operand };
    case 'prefix':
      return { test: compilePrefixOrSuffix(operand, at, (value, affix) => value.startsWith(affix)) };
    case 'suffix':
      return { test: compilePrefixOrSuffix(operand, at, (value, affix) => value.endsWith(affix)) };
    case 'equals-ignore-case': {
      const expected = requireString(operand, at).toLowerCase();
      return { test: (value) => typeof value === 'string' && value.toLowerCase() === expected };
    }
    case 'wildcard': {
      const wildcard = compileWildcard(requireString(operand, at), at);
      return { test: (value) => typeof value === 'string' && wildcard(value) };
    }
    case 'anything-but':
      return { test: compileAnythingBut(operand, at) };
    case 'numeric':
      return { test: compileNumeric(operand, at) };
    case 'cidr':
      return { test: compileCidr(operand, at) };
    default:
      return fail(at, `unsupported operator "${operator}"`);
  }
}

function soleEntry(object: Record<string, unknown>, path: string): [string, unknown] {
  const entries = Object.entries(object);
  if (entries.length !== 1) fail(path, 'an operator object holds exactly one operator');
  return entries[0];
}

function requireString(operand: unknown, path: string): string {
  if (typeof operand !== 'string') fail(path, 'must be a string');
  return operand;
}

/** `prefix`/`suffix` take a string, or `{ "equals-ignore-case": string }` to ignore case. */
function compilePrefixOrSuffix(operand: unknown, path: string, hasAffix: (value: string, affix: string) => boolean): ValueTest {
  if (isPlainObject(operand)) {
    const [option, affix] = soleEntry(operand, path);
    if (option !== 'equals-ignore-case') fail(fieldPath(path, option), `unsupported option "${option}"`);
    const lowered = requireString(affix, fieldPath(path, option)).toLowerCase();
    return (value) => typeof value === 'string' && hasAffix(value.toLowerCase(), lowered);
  }
  const affix = requireString(operand, path);
  return (value) => typeof value === 'string' && hasAffix(value, affix);
}

/**
 * `*` stands for any run of characters; `\*` is a literal star and `\\` a literal backslash.
 * Matching places the literal pieces between stars leftmost in order, which is exact for a
 * pattern whose only wildcard is `*` and never backtracks.
 */
function compileWildcard(text: string, path: string): (value: string) => boolean {
  const pieces = [''];
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === '*') {
      if (text[index + 1] === '*') fail(path, 'consecutive * are not allowed');
      pieces.push('');
    } else if (character === '\\') {
      const escaped = text[index + 1];
      if (escaped !== '*' && escaped !== '\\') fail(path, 'a backslash may only escape * or \\');
      pieces[pieces.length - 1] += escaped;
      index++;
    } else {
      pieces[pieces.length - 1] += character;
    }
  }
  return (value) => wildcardMatches(pieces, value);
}

function wildcardMatches(pieces: readonly string[], value: string): boolean {
  if (pieces.length === 1) return value === pieces[0];
  const first = pieces[0];
  const last = pieces[pieces.length - 1];
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  const end = value.length - last.length;
  let from = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const at = value.indexOf(piece, from);
    if (at < 0 || at + piece.length > end) return false;
    from = at + piece.length;
  }
  return true;
}

/**
 * `anything-but` takes a string, a number, a list of strings only or numbers only, or one of
 * `{prefix}`, `{suffix}`, `{equals-ignore-case}`, `{wildcard}` with a string or a list of them.
 * A value of another type than the excluded ones is not excluded, so it matches.
 */
function compileAnythingBut(operand: unknown, path: string): ValueTest {
  if (isPlainObject(operand)) return compileAnythingButOperator(operand, path);
  const excluded = Array.isArray(operand) ? operand : [operand];
  if (excluded.length > 0 && excluded.every((value) => typeof value === 'string')) {
    const strings = new Set<unknown>(excluded);
    return (value) => !strings.has(value);
  }
  if (excluded.length > 0 && excluded.every((value) => typeof value === 'number' && Number.isFinite(value))) {
    const numbers = new Set<unknown>(excluded);
    return (value) => !numbers.has(value);
  }
  return fail(path, 'must be a string, a number, or a non-empty list of strings only or numbers only');
}

function compileAnythingButOperator(operand: Record<string, unknown>, path: string): ValueTest {
  const [operator, inner] = soleEntry(operand, path);
  const excludes = compileExclusion(operator, inner, fieldPath(path, operator));
  return (value) => typeof value !== 'string' || !excludes(value);
}

function compileExclusion(operator: string, operand: unknown, path: string): (value: string) => boolean {
  switch (operator) {
    case 'prefix': {
      const prefixes = nonEmptyStrings(operand, path);
      return (value) => prefixes.some((prefix) => value.startsWith(prefix));
    }
    case 'suffix': {
      const suffixes = nonEmptyStrings(operand, path);
      return (value) => suffixes.some((suffix) => value.endsWith(suffix));
    }
    case 'equals-ignore-case': {
      const lowered = new Set(stringOrStrings(operand, path).map((text) => text.toLowerCase()));
      return (value) => lowered.has(value.toLowerCase());
    }
    case 'wildcard': {
      const wildcards = stringOrStrings(operand, path).map((text, index) => compileWildcard(text, Array.isArray(operand) ? `${path}[${index}]` : path));
      return (value) => wildcards.some((wildcard) => wildcard(value));
    }
    default:
      return fail(path, `unsupported anything-but operator "${operator}"`);
  }
}

function stringOrStrings(operand: unknown, path: string): string[] {
  const strings = Array.isArray(operand) ? operand : [operand];
  if (strings.length === 0 || !strings.every((text) => typeof text === 'string')) fail(path, 'must be a string or a non-empty list of strings');
  return strings;
}

/** An empty prefix or suffix would exclude every string. */
function nonEmptyStrings(operand: unknown, path: string): string[] {
  const strings = stringOrStrings(operand, path);
  if (strings.includes('')) fail(path, 'an empty string is not allowed');
  return strings;
}

type Comparison = '<' | '<=' | '=' | '>' | '>=';

const COMPARE: Readonly<Record<Comparison, (value: number, bound: number) => boolean>> = {
  '<': (value, bound) => value < bound,
  '<=': (value, bound) => value <= bound,
  '=': (value, bound) => value === bound,
  '>': (value, bound) => value > bound,
  '>=': (value, bound) => value >= bound,
};

/** One `[operator, number]` pair, or a lower bound (`>`, `>=`) followed by an upper bound (`<`, `<=`). */
function compileNumeric(operand: unknown, path: string): ValueTest {
  if (!Array.isArray(operand) || (operand.length !== 2 && operand.length !== 4)) fail(path, 'must be [operator, number] or two such pairs');
  const pairs: [Comparison, number][] = [];
  for (let index = 0; index < operand.length; index += 2) {
    const [operator, bound] = [operand[index], operand[index + 1]];
    if (typeof operator !== 'string' || !Object.hasOwn(COMPARE, operator)) fail(`${path}[${index}]`, 'must be one of <, <=, =, >, >=');
    if (typeof bound !== 'number' || !Number.isFinite(bound)) fail(`${path}[${index + 1}]`, 'must be a number');
    pairs.push([operator as Comparison, bound]);
  }
  if (pairs.length === 2) checkRange(pairs, path);
  return (value) => typeof value === 'number' && pairs.every(([operator, bound]) => COMPARE[operator](value, bound));
}

function checkRange([[lower, bottom], [upper, top]]: readonly [Comparison, number][], path: string): void {
  if ((lower !== '>' && lower !== '>=') || (upper !== '<' && upper !== '<=')) fail(path, 'two pairs must be a lower bound (>, >=) then an upper bound (<, <=)');
  if (bottom >= top) fail(path, 'the lower bound must be less than the upper bound');
}

/** An IPv4 or IPv6 block `address/length`; matches string values that are addresses of the same family inside it. */
function compileCidr(operand: unknown, path: string): ValueTest {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(requireString(operand, path));
  const family = match ? isIP(match[1]) : 0;
  if (!match || family === 0) fail(path, 'must be an IPv4 or IPv6 block such as 10.0.0.0/24');
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const length = Number(match[2]);
  if (length > (family === 4 ? 32 : 128)) fail(path, `a prefix length of ${length} is too long for ${type}`);
  const block = new BlockList();
  block.addSubnet(match[1], length, type);
  return (value) => typeof value === 'string' && isIP(value) === family && block.check(value, type);
}

// --- Matching ---

function matchesObject(pattern: ObjectPattern, node: unknown): boolean {
  return (
    pattern.fields.every(([name, field]) => matchesField(field, isPlainObject(node) && Object.hasOwn(node, name) ? node[name] : undefined)) &&
    (pattern.alternatives.length === 0 || pattern.alternatives.some((alternative) => matchesObject(alternative, node)))
  );
}

function matchesField(pattern: LeafPattern | ObjectPattern, value: unknown): boolean {
  if (pattern.kind === 'leaf') {
    const leaves = leavesOf(value);
    return pattern.conditions.some((condition) => ('exists' in condition ? leaves.length > 0 === condition.exists : leaves.some(condition.test)));
  }
  // Each object of an array is matched whole, so fields matched together come from one element.
  const objects = objectsOf(value);
  return objects.length === 0 ? matchesObject(pattern, undefined) : objects.some((object) => matchesObject(pattern, object));
}

/** The leaf values of a field: itself, or the leaves of its (nested) array; an object has none. */
function leavesOf(value: unknown): Leaf[] {
  if (Array.isArray(value)) return value.flatMap(leavesOf);
  return isLeaf(value) ? [value] : [];
}

function objectsOf(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(objectsOf);
  return isPlainObject(value) ? [value] : [];
}
