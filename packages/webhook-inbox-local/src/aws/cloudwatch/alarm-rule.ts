/**
 * A composite alarm's `AlarmRule`: `ALARM(x)`, `OK(x)` and `INSUFFICIENT_DATA(x)` (x an alarm name or
 * ARN, quoted or not), `TRUE`, `FALSE`, `NOT`, `AND`, `OR` and parentheses; NOT binds tighter than
 * AND, AND tighter than OR. Anything else (AT_LEAST, a lowercase keyword, a stray token) is an error
 * naming it.
 */

export type AlarmStateValue = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

export type RuleNode =
  | { readonly type: 'state'; readonly state: AlarmStateValue; readonly alarm: string }
  | { readonly type: 'constant'; readonly value: boolean }
  | { readonly type: 'not'; readonly operand: RuleNode }
  | { readonly type: 'and' | 'or'; readonly left: RuleNode; readonly right: RuleNode };

export class AlarmRuleError extends Error {
  override readonly name = 'AlarmRuleError';
}

const STATE_FUNCTIONS: ReadonlySet<string> = new Set<AlarmStateValue>(['ALARM', 'OK', 'INSUFFICIENT_DATA']);

export function parseAlarmRule(rule: string): RuleNode {
  let at = 0;
  const skipSpace = () => {
    while (/\s/.test(rule[at] ?? '')) at++;
  };
  const where = () => (at < rule.length ? `at position ${at}` : 'at the end');
  const word = (): string => {
    skipSpace();
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rule.slice(at));
    return match ? match[0] : '';
  };
  const expect = (text: string) => {
    skipSpace();
    if (!rule.startsWith(text, at)) throw new AlarmRuleError(`expected "${text}" ${where()} of ${JSON.stringify(rule)}`);
    at += text.length;
  };
  /** The alarm a state function names, quoted or bare, up to its closing parenthesis. */
  const alarmReference = (): string => {
    skipSpace();
    if (rule[at] === '"') {
      const end = rule.indexOf('"', at + 1);
      if (end < 0) throw new AlarmRuleError(`unterminated alarm name ${where()} of ${JSON.stringify(rule)}`);
      const name = rule.slice(at + 1, end);
      at = end + 1;
      return name;
    }
    const end = rule.indexOf(')', at);
    if (end < 0) throw new AlarmRuleError(`expected ")" after the alarm name ${where()} of ${JSON.stringify(rule)}`);
    const name = rule.slice(at, end).trim();
    at = end;
    return name;
  };

  const primary = (): RuleNode => {
    skipSpace();
    if (rule[at] === '(') {
      at++;
      const inner = disjunction();
      expect(')');
      return inner;
    }
    const keyword = word();
    if (keyword === 'TRUE' || keyword === 'FALSE') {
      at += keyword.length;
      return { type: 'constant', value: keyword === 'TRUE' };
    }
    if (keyword === 'NOT') {
      at += keyword.length;
      return { type: 'not', operand: primary() };
    }
    if (STATE_FUNCTIONS.has(keyword)) {
      at += keyword.length;
      expect('(');
      const alarm = alarmReference();
      if (alarm === '') throw new AlarmRuleError(`${keyword}() names no alarm in ${JSON.stringify(rule)}`);
      expect(')');
      return { type: 'state', state: keyword as AlarmStateValue, alarm };
    }
    if (at >= rule.length) throw new AlarmRuleError(`${JSON.stringify(rule)} ends where an alarm state, TRUE, FALSE, NOT or "(" is expected`);
    const found = keyword || rule[at];
    throw new AlarmRuleError(
      `${JSON.stringify(found)} ${where()} of ${JSON.stringify(rule)} is not supported (ALARM, OK, INSUFFICIENT_DATA, TRUE, FALSE, NOT, AND, OR)`,
    );
  };
  const level = (operand: () => RuleNode, operator: 'AND' | 'OR') => (): RuleNode => {
    let left = operand();
    while (word() === operator) {
      at += operator.length;
      left = { type: operator === 'AND' ? 'and' : 'or', left, right: operand() };
    }
    return left;
  };
  const conjunction = level(primary, 'AND');
  const disjunction = level(conjunction, 'OR');

  const root = disjunction();
  skipSpace();
  if (at < rule.length) throw new AlarmRuleError(`unexpected ${JSON.stringify(rule.slice(at))} ${where()} of ${JSON.stringify(rule)}`);
  return root;
}

/** The alarms a rule names, each once, in order of appearance. */
export function ruleReferences(node: RuleNode): string[] {
  const names: string[] = [];
  const visit = (current: RuleNode): void => {
    if (current.type === 'state') names.push(current.alarm);
    else if (current.type === 'not') visit(current.operand);
    else if (current.type === 'and' || current.type === 'or') {
      visit(current.left);
      visit(current.right);
    }
  };
  visit(node);
  return [...new Set(names)];
}

export function evaluateRule(node: RuleNode, stateOf: (alarm: string) => AlarmStateValue): boolean {
  switch (node.type) {
    case 'state':
      return stateOf(node.alarm) === node.state;
    case 'constant':
      return node.value;
    case 'not':
      return !evaluateRule(node.operand, stateOf);
    case 'and':
      return evaluateRule(node.left, stateOf) && evaluateRule(node.right, stateOf);
    case 'or':
      return evaluateRule(node.left, stateOf) || evaluateRule(node.right, stateOf);
  }
}
