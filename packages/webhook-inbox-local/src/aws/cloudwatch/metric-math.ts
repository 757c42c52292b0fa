/**
 * CloudWatch metric math for alarms: a parser and an evaluator over time series aligned on one
 * alarm's evaluation range. Supported: numbers, ids of other queries, `+ - * / ^`, unary minus,
 * parentheses, the comparisons `== != < <= > >=`, `AND`/`&&`, `OR`/`||`, lists `[a, b]`, and the
 * functions FILL (a number, a series or REPEAT), IF, SUM/MAX/MIN/AVG of a list, ABS, CEIL and FLOOR.
 * Anything else (another function, a string, FILL(m, LINEAR), SUM of a single series) is an error
 * naming it, never a value computed some other way.
 *
 * Missing datapoints follow CloudWatch's documented rules: an operation between two series treats a
 * value missing from one of them as 0 (a timestamp missing from both stays missing); an operation
 * between a series and a number applies where the series has a value; a division by zero drops
 * the datapoint.
 */

/** One value per period of the evaluation range, oldest first; undefined where no datapoint exists. */
export type Series = readonly (number | undefined)[];

export type MathValue =
  | { readonly kind: 'scalar'; readonly value: number }
  | { readonly kind: 'series'; readonly values: Series }
  | { readonly kind: 'list'; readonly items: readonly MathValue[] };

export type MathNode =
  | { readonly type: 'number'; readonly value: number }
  | { readonly type: 'id'; readonly name: string }
  | { readonly type: 'keyword'; readonly name: string }
  | { readonly type: 'list'; readonly items: readonly MathNode[] }
  | { readonly type: 'negate'; readonly operand: MathNode }
  | { readonly type: 'binary'; readonly operator: BinaryOperator; readonly left: MathNode; readonly right: MathNode }
  | { readonly type: 'call'; readonly name: string; readonly args: readonly MathNode[] };

type BinaryOperator = '+' | '-' | '*' | '/' | '^' | '==' | '!=' | '<' | '<=' | '>' | '>=' | 'AND' | 'OR';

/** An expression CloudWatch would refuse, or one that uses what is not supported locally. */
export class MetricMathError extends Error {
  override readonly name = 'MetricMathError';
}

/** How an expression reads the queries it names. */
export interface MathContext {
  readonly length: number;
  readonly valueOf: (id: string) => MathValue;
}

interface Token {
  readonly kind: 'number' | 'id' | 'word' | 'symbol';
  readonly text: string;
  readonly at: number;
}

const TOKEN = /(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([a-z][A-Za-z0-9_]*)|([A-Z][A-Z0-9_]*)|(==|!=|<=|>=|&&|\|\||[-+*/^()[\],<>])/y;
const SYMBOL_ALIASES: Readonly<Record<string, string>> = { '&&': 'AND', '||': 'OR' };

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  for (;;) {
    while (/\s/.test(expression[at] ?? '')) at++;
    if (at >= expression.length) return tokens;
    TOKEN.lastIndex = at;
    const match = TOKEN.exec(expression);
    if (!match) throw new MetricMathError(`unexpected ${JSON.stringify(expression[at])} at position ${at} of "${expression}"`);
    const [text, number, id, word] = match;
    const kind = number !== undefined ? 'number' : id !== undefined ? 'id' : word !== undefined ? 'word' : 'symbol';
    tokens.push({ kind, text: SYMBOL_ALIASES[text] ?? text, at });
    at += text.length;
  }
}

/** Parses an expression; precedence from loosest: OR, AND, comparisons, + -, * /, unary minus, ^. */
export function parseMathExpression(expression: string): MathNode {
  const tokens = tokenize(expression);
  let next = 0;
  const peek = (): Token | undefined => tokens[next];
  const isOperator = (...texts: string[]) => {
    const token = peek();
    return token !== undefined && (token.kind === 'symbol' || token.kind === 'word') && texts.includes(token.text);
  };
  const expect = (text: string) => {
    const token = peek();
    if (!token || token.text !== text) throw new MetricMathError(`expected "${text}" ${token ? `at position ${token.at}` : 'at the end'} of "${expression}"`);
    next++;
  };
  /** One left-associative level of binary operators. */
  const binaryLevel = (operand: () => MathNode, operators: readonly string[]) => (): MathNode => {
    let left = operand();
    while (isOperator(...operators)) {
      const operator = tokens[next++].text as BinaryOperator;
      left = { type: 'binary', operator, left, right: operand() };
    }
    return left;
  };

  const primary = (): MathNode => {
    const token = peek();
    if (!token) throw new MetricMathError(`"${expression}" ends where a value is expected`);
    next++;
    if (token.kind === 'number') return { type: 'number', value: Number(token.text) };
    if (token.kind === 'id') return { type: 'id', name: token.text };
    if (token.kind === 'word') {
      if (!isOperator('(')) return { type: 'keyword', name: token.text };
      next++;
      const args: MathNode[] = isOperator(')') ? [] : [disjunction()];
      while (isOperator(',')) {
        next++;
        args.push(disjunction());
      }
      expect(')');
      return { type: 'call', name: token.text, args };
    }
    if (token.text === '(') {
      const inner = disjunction();
      expect(')');
      return inner;
    }
    if (token.text === '[') {
      const items = [disjunction()];
      while (isOperator(',')) {
        next++;
        items.push(disjunction());
      }
      expect(']');
      return { type: 'list', items };
    }
    throw new MetricMathError(`unexpected "${token.text}" at position ${token.at} of "${expression}"`);
  };
  const power = (): MathNode => {
    const base = primary();
    if (!isOperator('^')) return base;
    next++;
    return { type: 'binary', operator: '^', left: base, right: unary() };
  };
  const unary = (): MathNode => {
    if (isOperator('-')) {
      next++;
      return { type: 'negate', operand: unary() };
    }
    return power();
  };
  const product = binaryLevel(unary, ['*', '/']);
  const sum = binaryLevel(product, ['+', '-']);
  const comparison = binaryLevel(sum, ['==', '!=', '<', '<=', '>', '>=']);
  const conjunction = binaryLevel(comparison, ['AND']);
  const disjunction = binaryLevel(conjunction, ['OR']);

  const root = disjunction();
  const rest = peek();
  if (rest) throw new MetricMathError(`unexpected "${rest.text}" at position ${rest.at} of "${expression}"`);
  return root;
}

/** The ids an expression reads, to order and check the queries of an alarm. */
export function referencedIds(node: MathNode): string[] {
  switch (node.type) {
    case 'id':
      return [node.name];
    case 'list':
      return node.items.flatMap(referencedIds);
    case 'negate':
      return referencedIds(node.operand);
    case 'binary':
      return [...referencedIds(node.left), ...referencedIds(node.right)];
    case 'call':
      return node.args.flatMap(referencedIds);
    default:
      return [];
  }
}

export function evaluateMath(node: MathNode, context: MathContext): MathValue {
  switch (node.type) {
    case 'number':
      return scalar(node.value);
    case 'id':
      return context.valueOf(node.name);
    case 'keyword':
      throw new MetricMathError(`${node.name} is not a value (it is not a function call, a number or a query id)`);
    case 'list':
      return { kind: 'list', items: node.items.map((item) => evaluateMath(item, context)) };
    case 'negate':
      return mapValue(evaluateMath(node.operand, context), (value) => -value);
    case 'binary':
      return combine(node.operator, evaluateMath(node.left, context), evaluateMath(node.right, context));
    case 'call':
      return callFunction(node, context);
  }
}

function scalar(value: number): MathValue {
  return { kind: 'scalar', value };
}

function mapValue(value: MathValue, apply: (value: number) => number | undefined): MathValue {
  switch (value.kind) {
    case 'scalar': {
      const result = apply(value.value);
      if (result === undefined) throw new MetricMathError('a constant expression divides by zero');
      return scalar(result);
    }
    case 'series':
      return { kind: 'series', values: value.values.map((point) => (point === undefined ? undefined : apply(point))) };
    case 'list':
      return { kind: 'list', items: value.items.map((item) => mapValue(item, apply)) };
  }
}

const OPERATIONS: Readonly<Record<BinaryOperator, (left: number, right: number) => number | undefined>> = {
  '+': (left, right) => left + right,
  '-': (left, right) => left - right,
  '*': (left, right) => left * right,
  '/': (left, right) => (right === 0 ? undefined : left / right),
  '^': (left, right) => left ** right,
  '==': (left, right) => Number(left === right),
  '!=': (left, right) => Number(left !== right),
  '<': (left, right) => Number(left < right),
  '<=': (left, right) => Number(left <= right),
  '>': (left, right) => Number(left > right),
  '>=': (left, right) => Number(left >= right),
  AND: (left, right) => Number(left !== 0 && right !== 0),
  OR: (left, right) => Number(left !== 0 || right !== 0),
};

function combine(operator: BinaryOperator, left: MathValue, right: MathValue): MathValue {
  const operation = OPERATIONS[operator];
  if (left.kind === 'list') return { kind: 'list', items: left.items.map((item) => combine(operator, item, right)) };
  if (right.kind === 'list') return { kind: 'list', items: right.items.map((item) => combine(operator, left, item)) };
  if (left.kind === 'scalar' && right.kind === 'scalar') return mapValue(left, (value) => operation(value, right.value));
  if (left.kind === 'scalar') return mapValue(right, (value) => operation(left.value, value));
  if (right.kind === 'scalar') return mapValue(left, (value) => operation(value, right.value));
  const rightValues = right.values;
  return {
    kind: 'series',
    values: left.values.map((point, index) => {
      const other = rightValues[index];
      return point === undefined && other === undefined ? undefined : operation(point ?? 0, other ?? 0);
    }),
  };
}

function callFunction(node: Extract<MathNode, { type: 'call' }>, context: MathContext): MathValue {
  const arity = (min: number, max = min) => {
    if (node.args.length < min || node.args.length > max) {
      throw new MetricMathError(`${node.name} takes ${min === max ? min : `${min} to ${max}`} arguments, got ${node.args.length}`);
    }
  };
  switch (node.name) {
    case 'ABS':
    case 'CEIL':
    case 'FLOOR': {
      arity(1);
      const apply = node.name === 'ABS' ? Math.abs : node.name === 'CEIL' ? Math.ceil : Math.floor;
      return mapValue(evaluateMath(node.args[0], context), apply);
    }
    case 'FILL':
      arity(2);
      return fill(evaluateMath(node.args[0], context), node.args[1], context);
    case 'IF':
      arity(2, 3);
      return ifValue(
        evaluateMath(node.args[0], context),
        evaluateMath(node.args[1], context),
        node.args[2] === undefined ? undefined : evaluateMath(node.args[2], context),
        context.length,
      );
    case 'SUM':
    case 'MAX':
    case 'MIN':
    case 'AVG': {
      arity(1);
      const argument = evaluateMath(node.args[0], context);
      if (argument.kind !== 'list') {
        // Over one series the result depends on how much data CloudWatch retrieves for the alarm.
        throw new MetricMathError(`${node.name} of a single time series is not supported locally: only ${node.name}([a, b, ...]) of a list`);
      }
      return reduceList(node.name, argument.items, context.length);
    }
    default:
      throw new MetricMathError(`function ${node.name} is not supported locally`);
  }
}

/** FILL(series, number | series | REPEAT): a missing datapoint takes the filler's value. */
function fill(target: MathValue, fillerNode: MathNode, context: MathContext): MathValue {
  if (target.kind === 'list') return { kind: 'list', items: target.items.map((item) => fill(item, fillerNode, context)) };
  if (target.kind === 'scalar') throw new MetricMathError('FILL needs a time series to fill, got a number');
  if (fillerNode.type === 'keyword') {
    if (fillerNode.name !== 'REPEAT') throw new MetricMathError(`FILL(..., ${fillerNode.name}) is not supported locally (a number, a series or REPEAT)`);
    let last: number | undefined;
    // REPEAT carries the latest real value forward; a gap before the first one stays missing.
    return { kind: 'series', values: target.values.map((point) => (point === undefined ? last : (last = point))) };
  }
  const filler = evaluateMath(fillerNode, context);
  if (filler.kind === 'list') throw new MetricMathError('FILL cannot fill with a list');
  const fillerAt = (index: number) => (filler.kind === 'scalar' ? filler.value : filler.values[index]);
  return { kind: 'series', values: target.values.map((point, index) => point ?? fillerAt(index)) };
}

/**
 * IF(condition, whenTrue, whenFalse?) as CloudWatch documents it: a condition is true when nonzero;
 * a series condition decides each timestamp, a missing condition datapoint drops it, a missing
 * `whenTrue` datapoint counts 0, a missing or omitted `whenFalse` drops it.
 */
function ifValue(condition: MathValue, whenTrue: MathValue, whenFalse: MathValue | undefined, length: number): MathValue {
  if (condition.kind === 'list' || whenTrue.kind === 'list' || whenFalse?.kind === 'list') throw new MetricMathError('IF does not take lists');
  const empty: MathValue = { kind: 'series', values: Array.from({ length }, () => undefined) };
  if (condition.kind === 'scalar') return condition.value !== 0 ? whenTrue : (whenFalse ?? empty);
  const at = (value: Exclude<MathValue, { kind: 'list' }> | undefined, index: number) =>
    value === undefined ? undefined : value.kind === 'scalar' ? value.value : value.values[index];
  return {
    kind: 'series',
    values: condition.values.map((point, index) => {
      if (point === undefined) return undefined;
      return point !== 0 ? (at(whenTrue, index) ?? 0) : at(whenFalse, index);
    }),
  };
}

const REDUCERS: Readonly<Record<string, (values: readonly number[]) => number>> = {
  SUM: (values) => values.reduce((sum, value) => sum + value, 0),
  MAX: (values) => Math.max(...values),
  MIN: (values) => Math.min(...values),
  AVG: (values) => values.reduce((sum, value) => sum + value, 0) / values.length,
};

/**
 * SUM/MAX/MIN/AVG of a list, per timestamp. A series missing a datapoint counts 0 there, as
 * CloudWatch documents for arrays; a timestamp missing from every series stays missing.
 */
function reduceList(name: string, items: readonly MathValue[], length: number): MathValue {
  const reduce = REDUCERS[name];
  if (items.some((item) => item.kind === 'list')) throw new MetricMathError(`${name} of nested lists is not supported locally`);
  const flat = items as readonly Exclude<MathValue, { kind: 'list' }>[];
  if (flat.every((item) => item.kind === 'scalar')) return scalar(reduce(flat.map((item) => item.value)));
  const values = Array.from({ length }, (_unused, index) => {
    const points = flat.map((item) => (item.kind === 'scalar' ? item.value : item.values[index]));
    return points.every((point) => point === undefined) ? undefined : reduce(points.map((point) => point ?? 0));
  });
  return { kind: 'series', values };
}
