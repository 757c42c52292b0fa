import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import { EventPatternError, matchesEventPattern, validateEventPattern } from '../../../src/aws/eventbridge/event-pattern';
import { DeliveryStatus } from '../../../../../lib/contract';

/** An event as a bus delivers it to rules: the envelope and a detail. */
function eventWith(detail: Record<string, unknown>, envelope: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: '0',
    id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    'detail-type': 'Delivery Status Changed',
    source: 'webhook.inbox',
    account: '111111111111',
    time: '2026-12-01T12:00:00Z',
    region: 'eu-west-1',
    resources: ['arn:aws:sqs:eu-west-1:111111111111:answers'],
    detail,
    ...envelope,
  };
}

/** Whether a pattern on one detail field matches that field holding `value`. */
function fieldMatches(condition: unknown[], value: unknown): boolean {
  return matchesEventPattern({ detail: { field: condition } }, eventWith(value === undefined ? {} : { field: value }));
}

function patternError(pattern: unknown): EventPatternError {
  try {
    validateEventPattern(pattern);
  } catch (error) {
    if (error instanceof EventPatternError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(pattern)} to be refused`);
}

describe('structure', () => {
  test('fields the pattern does not name are ignored', () => {
    expect(matchesEventPattern({ source: ['webhook.inbox'] }, eventWith({ anything: 1 }))).toBe(true);
  });

  test('every field the pattern names must match', () => {
    const pattern = { source: ['webhook.inbox'], detail: { status: [DeliveryStatus.DEAD] } };
    expect(matchesEventPattern(pattern, eventWith({ status: DeliveryStatus.DEAD }))).toBe(true);
    expect(matchesEventPattern(pattern, eventWith({ status: DeliveryStatus.PROCESSED }))).toBe(false);
    expect(matchesEventPattern(pattern, eventWith({ status: DeliveryStatus.DEAD }, { source: 'other' }))).toBe(false);
  });

  test('a field the event lacks does not match a value', () => {
    expect(fieldMatches(['x'], undefined)).toBe(false);
  });

  test('an array of values matches when any of them does', () => {
    expect(fieldMatches(['a', 'b'], 'b')).toBe(true);
    expect(fieldMatches(['a', 'b'], 'c')).toBe(false);
  });

  test('an array in the event matches when any of its elements does, nested arrays flattened', () => {
    expect(matchesEventPattern({ resources: ['arn:aws:sqs:eu-west-1:111111111111:answers'] }, eventWith({}))).toBe(true);
    expect(fieldMatches(['c'], ['a', ['b', 'c']])).toBe(true);
    expect(fieldMatches(['d'], ['a', ['b', 'c']])).toBe(false);
  });

  test('nested fields match at the same nesting in the event', () => {
    const pattern = { detail: { delivery: { attempt: [3] } } };
    expect(matchesEventPattern(pattern, eventWith({ delivery: { attempt: 3 } }))).toBe(true);
    expect(matchesEventPattern(pattern, eventWith({ attempt: 3 }))).toBe(false);
  });

  test('fields matched together inside an array of objects must come from one element', () => {
    const detail = {
      employees: [
        { firstName: 'John', lastName: 'Doe' },
        { firstName: 'Anna', lastName: 'Smith' },
      ],
    };
    expect(matchesEventPattern({ detail: { employees: { firstName: ['Anna'], lastName: ['Smith'] } } }, eventWith(detail))).toBe(true);
    expect(matchesEventPattern({ detail: { employees: { firstName: ['Anna'], lastName: ['Doe'] } } }, eventWith(detail))).toBe(false);
  });

  test('literals match their own JSON type only: strings, numbers, booleans, null', () => {
    expect(fieldMatches(['5'], 5)).toBe(false);
    expect(fieldMatches([5], '5')).toBe(false);
    expect(fieldMatches([true], true)).toBe(true);
    expect(fieldMatches([true], 'true')).toBe(false);
    expect(fieldMatches([null], null)).toBe(true);
    expect(fieldMatches([''], '')).toBe(true);
    expect(fieldMatches([''], null)).toBe(false);
    expect(fieldMatches([null], '')).toBe(false);
  });

  test('numbers compare as numbers, whatever their notation', () => {
    const event = JSON.parse('{"detail": {"field": 3.0e2}}');
    expect(matchesEventPattern({ detail: { field: [300] } }, event)).toBe(true);
    expect(matchesEventPattern(JSON.parse('{"detail": {"field": [300.0]}}'), JSON.parse('{"detail": {"field": 300}}'))).toBe(true);
    expect(matchesEventPattern({ detail: { field: [301] } }, event)).toBe(false);
  });

  test('a leaf pattern does not match an object value', () => {
    expect(fieldMatches(['x'], { x: 'x' })).toBe(false);
  });
});

describe('prefix and suffix', () => {
  test('prefix matches strings that start with it', () => {
    expect(fieldMatches([{ prefix: 'us-' }], 'us-east-1')).toBe(true);
    expect(fieldMatches([{ prefix: 'us-' }], 'eu-west-1')).toBe(false);
    expect(fieldMatches([{ prefix: 'US-' }], 'us-east-1')).toBe(false);
  });

  test('prefix with equals-ignore-case ignores case', () => {
    expect(fieldMatches([{ prefix: { 'equals-ignore-case': 'EventB' } }], 'eventbridge')).toBe(true);
    expect(fieldMatches([{ prefix: { 'equals-ignore-case': 'EventB' } }], 'EVENTBUS')).toBe(true);
    expect(fieldMatches([{ prefix: { 'equals-ignore-case': 'EventB' } }], 'events')).toBe(false);
  });

  test('suffix matches strings that end with it', () => {
    expect(fieldMatches([{ suffix: '.png' }], 'image.png')).toBe(true);
    expect(fieldMatches([{ suffix: '.png' }], 'image.PNG')).toBe(false);
    expect(fieldMatches([{ suffix: '.png' }], 'image.jpg')).toBe(false);
  });

  test('suffix with equals-ignore-case ignores case', () => {
    expect(fieldMatches([{ suffix: { 'equals-ignore-case': '.png' } }], 'image.PNG')).toBe(true);
    expect(fieldMatches([{ suffix: { 'equals-ignore-case': '.png' } }], 'image.pngx')).toBe(false);
  });

  test('string operators never match numbers', () => {
    expect(fieldMatches([{ prefix: '12' }], 123)).toBe(false);
    expect(fieldMatches([{ suffix: '23' }], 123)).toBe(false);
  });
});

describe('equals-ignore-case', () => {
  test('matches the same string in any case, and nothing else', () => {
    expect(fieldMatches([{ 'equals-ignore-case': 'alice' }], 'ALICE')).toBe(true);
    expect(fieldMatches([{ 'equals-ignore-case': 'alice' }], 'Alice')).toBe(true);
    expect(fieldMatches([{ 'equals-ignore-case': 'alice' }], 'alice2')).toBe(false);
  });
});

describe('wildcard', () => {
  test('* stands for any run of characters, the empty one included', () => {
    expect(fieldMatches([{ wildcard: 'dir/*.png' }], 'dir/a.png')).toBe(true);
    expect(fieldMatches([{ wildcard: 'dir/*.png' }], 'dir/.png')).toBe(true);
    expect(fieldMatches([{ wildcard: 'dir/*.png' }], 'dir/a.jpg')).toBe(false);
    expect(fieldMatches([{ wildcard: '*/lib/*' }], 'src/lib/a.ts')).toBe(true);
    expect(fieldMatches([{ wildcard: 'a*b*a' }], 'aba')).toBe(true);
    expect(fieldMatches([{ wildcard: 'a*b*a' }], 'ab')).toBe(false);
  });

  test('without * it is an exact match', () => {
    expect(fieldMatches([{ wildcard: 'exact' }], 'exact')).toBe(true);
    expect(fieldMatches([{ wildcard: 'exact' }], 'exactly')).toBe(false);
  });

  test('\\* is a literal star', () => {
    expect(fieldMatches([{ wildcard: 'a\\*b' }], 'a*b')).toBe(true);
    expect(fieldMatches([{ wildcard: 'a\\*b' }], 'axb')).toBe(false);
  });
});

describe('anything-but', () => {
  test('a string: matches any other value', () => {
    expect(fieldMatches([{ 'anything-but': 'initializing' }], 'running')).toBe(true);
    expect(fieldMatches([{ 'anything-but': 'initializing' }], 'initializing')).toBe(false);
  });

  test('a number: matches any other value', () => {
    expect(fieldMatches([{ 'anything-but': 123 }], 124)).toBe(true);
    expect(fieldMatches([{ 'anything-but': 123 }], 123)).toBe(false);
  });

  test('a list: matches values outside it', () => {
    expect(fieldMatches([{ 'anything-but': ['stopped', 'overloaded'] }], 'running')).toBe(true);
    expect(fieldMatches([{ 'anything-but': ['stopped', 'overloaded'] }], 'stopped')).toBe(false);
    expect(fieldMatches([{ 'anything-but': [100, 200] }], 150)).toBe(true);
    expect(fieldMatches([{ 'anything-but': [100, 200] }], 200)).toBe(false);
  });

  test('a value of another type than the excluded ones is not excluded', () => {
    expect(fieldMatches([{ 'anything-but': [100] }], '100')).toBe(true);
    expect(fieldMatches([{ 'anything-but': 'x' }], null)).toBe(true);
  });

  test('needs the field: an absent field matches nothing', () => {
    expect(fieldMatches([{ 'anything-but': 'initializing' }], undefined)).toBe(false);
  });

  test('on an array, matches when any element is outside the exclusion', () => {
    expect(fieldMatches([{ 'anything-but': 'a' }], ['a', 'b'])).toBe(true);
    expect(fieldMatches([{ 'anything-but': 'a' }], ['a', 'a'])).toBe(false);
  });

  test('prefix: matches values that do not start with it', () => {
    expect(fieldMatches([{ 'anything-but': { prefix: 'us-' } }], 'eu-west-1')).toBe(true);
    expect(fieldMatches([{ 'anything-but': { prefix: 'us-' } }], 'us-east-1')).toBe(false);
  });

  test('suffix: matches values that do not end with it', () => {
    expect(fieldMatches([{ 'anything-but': { suffix: '.png' } }], 'a.jpg')).toBe(true);
    expect(fieldMatches([{ 'anything-but': { suffix: '.png' } }], 'a.png')).toBe(false);
  });

  test('equals-ignore-case: matches values other than these in any case', () => {
    expect(fieldMatches([{ 'anything-but': { 'equals-ignore-case': ['initializing', 'stopped'] } }], 'running')).toBe(true);
    expect(fieldMatches([{ 'anything-but': { 'equals-ignore-case': 'initializing' } }], 'INITIALIZING')).toBe(false);
  });

  test('wildcard: matches values the wildcard does not', () => {
    expect(fieldMatches([{ 'anything-but': { wildcard: '*/lib/*' } }], 'src/app/a.ts')).toBe(true);
    expect(fieldMatches([{ 'anything-but': { wildcard: '*/lib/*' } }], 'src/lib/a.ts')).toBe(false);
  });
});

describe('numeric', () => {
  test.each([
    ['<', 10, 9, true],
    ['<', 10, 10, false],
    ['<=', 10, 10, true],
    ['<=', 10, 11, false],
    ['=', 301.8, 3.018e2, true],
    ['=', 301.8, 301.9, false],
    ['>', 0, 1, true],
    ['>', 0, 0, false],
    ['>=', 0, 0, true],
    ['>=', 0, -1, false],
  ])('%s %d against %d is %s', (operator, bound, value, expected) => {
    expect(fieldMatches([{ numeric: [operator, bound] }], value)).toBe(expected);
  });

  test('two pairs bound a range: a lower bound, then an upper bound', () => {
    expect(fieldMatches([{ numeric: ['>', 0, '<=', 5] }], 5)).toBe(true);
    expect(fieldMatches([{ numeric: ['>', 0, '<=', 5] }], 0)).toBe(false);
    expect(fieldMatches([{ numeric: ['>=', 5, '<', 10] }], 5)).toBe(true);
    expect(fieldMatches([{ numeric: ['>=', 5, '<', 10] }], 10)).toBe(false);
  });

  test('only JSON numbers are compared', () => {
    expect(fieldMatches([{ numeric: ['>', 0] }], '5')).toBe(false);
  });
});

describe('exists', () => {
  test('true: matches when the field has a value, null included', () => {
    expect(fieldMatches([{ exists: true }], 'x')).toBe(true);
    expect(fieldMatches([{ exists: true }], null)).toBe(true);
    expect(fieldMatches([{ exists: true }], undefined)).toBe(false);
  });

  test('false: matches when the field is absent', () => {
    expect(fieldMatches([{ exists: false }], undefined)).toBe(true);
    expect(fieldMatches([{ exists: false }], 'x')).toBe(false);
    expect(matchesEventPattern({ detail: { field: [{ exists: false }] } }, { source: 'no detail at all' })).toBe(true);
  });

  test('works on leaves only: a field holding an object or an empty array has no value', () => {
    expect(fieldMatches([{ exists: true }], { nested: 1 })).toBe(false);
    expect(fieldMatches([{ exists: false }], { nested: 1 })).toBe(true);
    expect(fieldMatches([{ exists: true }], [])).toBe(false);
  });
});

describe('cidr', () => {
  test('IPv4: matches addresses inside the block', () => {
    expect(fieldMatches([{ cidr: '10.0.0.0/24' }], '10.0.0.33')).toBe(true);
    expect(fieldMatches([{ cidr: '10.0.0.0/24' }], '10.0.1.1')).toBe(false);
  });

  test('IPv6: matches addresses inside the block', () => {
    expect(fieldMatches([{ cidr: '2001:db8::/32' }], '2001:db8:0:1::7')).toBe(true);
    expect(fieldMatches([{ cidr: '2001:db8::/32' }], '2001:db9::1')).toBe(false);
  });

  test('values that are not addresses do not match', () => {
    expect(fieldMatches([{ cidr: '10.0.0.0/8' }], 'ten')).toBe(false);
    expect(fieldMatches([{ cidr: '10.0.0.0/8' }], 10)).toBe(false);
  });
});

describe('$or', () => {
  test('matches when any of its patterns matches, besides the other fields', () => {
    const pattern = { source: ['webhook.inbox'], detail: { $or: [{ status: [DeliveryStatus.DEAD] }, { attempts: [{ numeric: ['>', 3] }] }] } };
    expect(matchesEventPattern(pattern, eventWith({ status: DeliveryStatus.DEAD, attempts: 1 }))).toBe(true);
    expect(matchesEventPattern(pattern, eventWith({ status: DeliveryStatus.PROCESSED, attempts: 4 }))).toBe(true);
    expect(matchesEventPattern(pattern, eventWith({ status: DeliveryStatus.PROCESSED, attempts: 1 }))).toBe(false);
    expect(matchesEventPattern(pattern, eventWith({ status: DeliveryStatus.DEAD }, { source: 'other' }))).toBe(false);
  });

  test('each of its patterns needs all its own fields, and may hold another $or', () => {
    const pattern = {
      $or: [{ source: ['a'], 'detail-type': ['b'] }, { $or: [{ source: ['c'] }, { source: ['d'] }] }],
    };
    expect(matchesEventPattern(pattern, { source: 'a', 'detail-type': 'b' })).toBe(true);
    expect(matchesEventPattern(pattern, { source: 'a', 'detail-type': 'x' })).toBe(false);
    expect(matchesEventPattern(pattern, { source: 'd' })).toBe(true);
  });
});

describe('patterns aws-cdk-lib synthesizes', () => {
  function synthesizedPattern(eventPattern: events.EventPattern): unknown {
    const stack = new Stack(new App(), 'Rules');
    new events.Rule(stack, 'Rule', { eventPattern });
    const [rule] = Object.values(Template.fromStack(stack).findResources('AWS::Events::Rule'));
    return rule.Properties.EventPattern;
  }

  test('source, detail-type and detail fields', () => {
    const pattern = synthesizedPattern({ source: ['a'], detailType: ['b'], detail: { status: ['x'] } });
    expect(pattern).toEqual({ source: ['a'], 'detail-type': ['b'], detail: { status: ['x'] } });
    expect(matchesEventPattern(pattern, { source: 'a', 'detail-type': 'b', detail: { status: 'x' } })).toBe(true);
    expect(matchesEventPattern(pattern, { source: 'a', 'detail-type': 'b', detail: { status: 'y' } })).toBe(false);
  });

  test('every Match helper is accepted and means what it says', () => {
    const { Match } = events;
    const pattern = synthesizedPattern({
      source: Match.anyOf(Match.prefix('webhook.'), Match.exactString('other')),
      region: Match.anythingButPrefix('us-gov', 'cn-'),
      detail: {
        inbox: Match.equalsIgnoreCase('ANSWERS'),
        file: Match.suffixEqualsIgnoreCase('.JSON'),
        path: Match.anythingButWildcard('*/tmp/*'),
        attempts: Match.allOf(Match.greaterThanOrEqual(1), Match.lessThan(10)),
        size: Match.interval(1, 1024),
        client: Match.cidr('192.168.0.0/16'),
        error: Match.doesNotExist(),
        status: Match.anythingBut(DeliveryStatus.PROCESSED, 'DUPLICATE'),
      },
    });
    const detail = { inbox: 'answers', file: 'body.json', path: 'var/data/x', attempts: 3, size: 10, client: '192.168.4.1', status: DeliveryStatus.DEAD };
    expect(matchesEventPattern(pattern, eventWith(detail))).toBe(true);
    expect(matchesEventPattern(pattern, eventWith({ ...detail, attempts: 10 }))).toBe(false);
    expect(matchesEventPattern(pattern, eventWith({ ...detail, error: 'boom' }))).toBe(false);
    expect(matchesEventPattern(pattern, eventWith(detail, { region: 'us-gov-west-1' }))).toBe(false);
  });
});

describe('malformed patterns', () => {
  test.each([
    ['a pattern that is not an object', ['source'], ''],
    ['an empty pattern', {}, ''],
    ['a leaf that is not an array', { source: 'a' }, 'source'],
    ['an empty array', { detail: { status: [] } }, 'detail.status'],
    ['an empty nested object', { detail: {} }, 'detail'],
    ['an array inside a leaf', { source: [['a']] }, 'source[0]'],
    ['an unsupported operator', { source: [{ contains: 'a' }] }, 'source[0].contains'],
    ['two operators in one object', { source: [{ prefix: 'a', suffix: 'b' }] }, 'source[0]'],
    ['a prefix that is not a string', { source: [{ prefix: 1 }] }, 'source[0].prefix'],
    ['a prefix option other than equals-ignore-case', { source: [{ prefix: { wildcard: 'a' } }] }, 'source[0].prefix.wildcard'],
    ['consecutive wildcards', { source: [{ wildcard: 'a**b' }] }, 'source[0].wildcard'],
    ['an escape of another character than * or \\', { source: [{ wildcard: 'a\\b' }] }, 'source[0].wildcard'],
    ['anything-but of mixed types', { detail: { x: [{ 'anything-but': ['a', 1] }] } }, 'detail.x[0].anything-but'],
    ['anything-but of an empty list', { detail: { x: [{ 'anything-but': [] }] } }, 'detail.x[0].anything-but'],
    ['anything-but of a boolean', { detail: { x: [{ 'anything-but': true }] } }, 'detail.x[0].anything-but'],
    ['anything-but of an unsupported operator', { detail: { x: [{ 'anything-but': { numeric: ['>', 1] } }] } }, 'detail.x[0].anything-but.numeric'],
    ['anything-but of an empty prefix', { detail: { x: [{ 'anything-but': { prefix: '' } }] } }, 'detail.x[0].anything-but.prefix'],
    ['numeric that is not a list', { detail: { x: [{ numeric: '>' }] } }, 'detail.x[0].numeric'],
    ['numeric with an unknown operator', { detail: { x: [{ numeric: ['!=', 1] }] } }, 'detail.x[0].numeric[0]'],
    ['numeric with a string bound', { detail: { x: [{ numeric: ['>', '1'] }] } }, 'detail.x[0].numeric[1]'],
    ['numeric with three pairs', { detail: { x: [{ numeric: ['>', 1, '<', 5, '<', 6] }] } }, 'detail.x[0].numeric'],
    ['numeric with two lower bounds', { detail: { x: [{ numeric: ['>', 1, '>=', 5] }] } }, 'detail.x[0].numeric'],
    ['numeric with the upper bound first', { detail: { x: [{ numeric: ['<', 10, '>=', 5] }] } }, 'detail.x[0].numeric'],
    ['numeric with an empty range', { detail: { x: [{ numeric: ['>', 5, '<', 5] }] } }, 'detail.x[0].numeric'],
    ['exists that is not a boolean', { detail: { x: [{ exists: 'yes' }] } }, 'detail.x[0].exists'],
    ['a cidr that is not a block', { detail: { ip: [{ cidr: '10.0.0.1' }] } }, 'detail.ip[0].cidr'],
    ['a cidr prefix longer than the address', { detail: { ip: [{ cidr: '10.0.0.0/33' }] } }, 'detail.ip[0].cidr'],
    ['$or with one pattern', { $or: [{ source: ['a'] }] }, '$or'],
    ['$or that is not an array', { $or: { source: ['a'] } }, '$or'],
    ['$or holding a non-object', { $or: [{ source: ['a'] }, ['b']] }, '$or[1]'],
    ['an operator name as a field inside $or', { $or: [{ source: ['a'] }, { prefix: ['b'] }] }, '$or[1].prefix'],
  ])('%s is refused, naming where', (_what, pattern, path) => {
    const error = patternError(pattern);
    expect(error.path).toBe(path);
    expect(error.message).toContain(path || 'its root');
  });

  test('matching with a malformed pattern throws rather than answering', () => {
    expect(() => matchesEventPattern({ detail: { status: [{ numeric: ['>', 'one'] }] } }, eventWith({ status: 2 }))).toThrow(
      'Invalid event pattern at detail.status[0].numeric[1]: must be a number',
    );
  });

  test('a well-formed pattern validates silently', () => {
    expect(() => validateEventPattern({ source: ['a'], detail: { $or: [{ x: [{ exists: true }] }, { y: [null, 1, { cidr: '::/0' }] }] } })).not.toThrow();
  });
});
