/**
 * A provider's filter, on its own. The rules, stated here: with `eventTypes`, only a listed type
 * is kept (a delivery naming none is dropped); a predicate's `in` compares a string as it is and a
 * number or boolean as its JSON text, never an object; `present` holds for any value, null
 * included; `prefix` only for strings; `not`, `all`, `any` combine; a body that is not a JSON
 * object meets no condition on a path; no filter keeps everything.
 */
import { PredicateRule } from '../../../../lib/contract';
import { deliveryFilter } from '../../../../lambda/shared/providers/delivery-filter';

const body = (value: unknown) => Buffer.from(JSON.stringify(value));
const keeps = (predicate: PredicateRule, value: unknown) => deliveryFilter({ predicate })(undefined, body(value)) === undefined;

test('no filter keeps every delivery, whatever its type or body', () => {
  expect(deliveryFilter(undefined)(undefined, Buffer.from('not json'))).toBeUndefined();
});

test('eventTypes: a listed type is kept, another or none is dropped, saying why', () => {
  const filter = deliveryFilter({ eventTypes: ['push'] });
  expect(filter('push', body({}))).toBeUndefined();
  expect(filter('issues', body({}))).toBe('event type issues is not one the provider keeps');
  expect(filter(undefined, body({}))).toMatch(/names no event type/);
});

test.each<[string, PredicateRule, unknown, boolean]>([
  ['in: a string', { op: 'in', path: 'a.b', values: ['x'] }, { a: { b: 'x' } }, true],
  ['in: another string', { op: 'in', path: 'a.b', values: ['x'] }, { a: { b: 'y' } }, false],
  ['in: a boolean as its JSON text', { op: 'in', path: 'live', values: ['true'] }, { live: true }, true],
  ['in: a number as its JSON text', { op: 'in', path: 'n', values: ['42'] }, { n: 42 }, true],
  ['in: an object never', { op: 'in', path: 'o', values: ['[object Object]', '{}'] }, { o: {} }, false],
  ['in: a missing path', { op: 'in', path: 'a.b', values: ['x'] }, { a: 1 }, false],
  ['present: null counts', { op: 'present', path: 'p' }, { p: null }, true],
  ['present: absent', { op: 'present', path: 'p' }, { q: 1 }, false],
  ['prefix: a string', { op: 'prefix', path: 's', prefix: 'dep' }, { s: 'dependabot' }, true],
  ['prefix: a number never', { op: 'prefix', path: 's', prefix: '4' }, { s: 42 }, false],
  ['not', { op: 'not', rule: { op: 'present', path: 'p' } }, { q: 1 }, true],
  [
    'all: one fails',
    {
      op: 'all',
      rules: [
        { op: 'present', path: 'a' },
        { op: 'present', path: 'b' },
      ],
    },
    { a: 1 },
    false,
  ],
  [
    'any: one holds',
    {
      op: 'any',
      rules: [
        { op: 'present', path: 'a' },
        { op: 'present', path: 'b' },
      ],
    },
    { b: 1 },
    true,
  ],
  ['a JSON array body meets no path condition', { op: 'present', path: '0' }, ['x'], false],
])('%s', (_name, predicate, value, kept) => {
  expect(keeps(predicate, value)).toBe(kept);
});

test('a predicate on a body that is not JSON drops it; both parts must keep a delivery', () => {
  expect(deliveryFilter({ predicate: { op: 'not', rule: { op: 'present', path: 'a' } } })(undefined, Buffer.from('<xml/>'))).toBeUndefined();
  expect(deliveryFilter({ predicate: { op: 'present', path: 'a' } })(undefined, Buffer.from('<xml/>'))).toMatch(/does not meet/);
  const both = deliveryFilter({ eventTypes: ['push'], predicate: { op: 'present', path: 'a' } });
  expect([both('push', body({ a: 1 })), both('push', body({})), both('pull', body({ a: 1 }))].map((verdict) => verdict === undefined)).toEqual([
    true,
    false,
    false,
  ]);
});
