/**
 * The conflict rule's order key, on its own (no emulator). The rule, stated here independently of
 * `winnerOrder`: a COMPLETED result beats any FAILED one whatever their creation times; among
 * results of one status the one created later wins, to the nanosecond; the greater task id breaks
 * a tie. The results table keeps the offer whose key is greater, as DynamoDB compares strings
 * (by their UTF-8 bytes), so the keys must order exactly as the rule does and the winner of a job
 * must not depend on the order its results arrive in.
 */
import fc from 'fast-check';
import { winnerOrder } from '../../../lambda/shared/winner-order';

type Observation = Parameters<typeof winnerOrder>[0];

/** Whether `a` beats `b` under the rule; 0 when neither does (the same observation). */
function rule(a: Observation, b: Observation): number {
  const rank = (status: Observation['status']) => (status === 'COMPLETED' ? 2 : 1);
  if (rank(a.status) !== rank(b.status)) return Math.sign(rank(a.status) - rank(b.status));
  const created = nanosecondsOf(a.createdAt) - nanosecondsOf(b.createdAt);
  if (created !== 0n) return created > 0n ? 1 : -1;
  return Math.sign(Buffer.compare(Buffer.from(a.taskId), Buffer.from(b.taskId)));
}

/** Nanoseconds since the epoch of a normalized instant, `YYYY-MM-DDTHH:MM:SS.fffffffffZ`. */
function nanosecondsOf(instant: string): bigint {
  const seconds = Date.parse(`${instant.slice(0, 19)}Z`) / 1000;
  return BigInt(seconds) * 1_000_000_000n + BigInt(instant.slice(20, 29));
}

/** How DynamoDB orders two string attributes: by their UTF-8 bytes. */
const keyOrder = (a: Observation, b: Observation) => Math.sign(Buffer.compare(Buffer.from(winnerOrder(a)), Buffer.from(winnerOrder(b))));

/** The results table's conditional offer, in memory: an offer replaces the stored one only when its key is greater. */
function storedWinner(arrivals: readonly Observation[]): Observation | undefined {
  let stored: Observation | undefined;
  for (const offer of arrivals) if (stored === undefined || keyOrder(offer, stored) > 0) stored = offer;
  return stored;
}

const observation = (status: Observation['status'], createdAt: string, taskId: string): Observation => ({ status, createdAt, taskId });

test('a FAILED result never beats a COMPLETED one, even created years later', () => {
  const completed = observation('COMPLETED', '2026-01-01T00:00:00.000000000Z', 'tsk_a');
  const failed = observation('FAILED', '2031-06-01T00:00:00.000000000Z', 'tsk_z');
  expect(keyOrder(completed, failed)).toBe(1);
  expect(storedWinner([completed, failed])).toBe(completed);
  expect(storedWinner([failed, completed])).toBe(completed);
});

test('of one status, the one created later wins, within one millisecond and across a year', () => {
  const earlier = observation('COMPLETED', '2026-09-18T10:00:00.123456788Z', 'tsk_z');
  const later = observation('COMPLETED', '2026-09-18T10:00:00.123456789Z', 'tsk_a');
  expect(keyOrder(later, earlier)).toBe(1);
  expect(keyOrder(observation('FAILED', '2027-01-01T00:00:00.000000000Z', 'a'), observation('FAILED', '2026-12-31T23:59:59.999999999Z', 'b'))).toBe(1);
});

test('created at one instant, the greater task id wins; the same observation again is no change', () => {
  const a = observation('COMPLETED', '2026-09-18T10:00:00.000000000Z', 'tsk_a');
  const b = observation('COMPLETED', '2026-09-18T10:00:00.000000000Z', 'tsk_b');
  expect(keyOrder(b, a)).toBe(1);
  expect(keyOrder(a, { ...a })).toBe(0);
  expect(storedWinner([a, b, { ...a }])).toBe(b);
});

/** An instant in the normalized form, from nanoseconds since the epoch (years 1970 to 9999). */
const instantArbitrary = fc.bigInt({ min: 0n, max: 253_402_300_799_999_999_999n }).map((ns) => {
  const seconds = ns / 1_000_000_000n;
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${fraction}Z`;
});
const observationArbitrary = fc.record({
  status: fc.constantFrom<Observation['status']>('COMPLETED', 'FAILED'),
  // Few distinct instants and ids, so that ties on each part are common.
  createdAt: fc.oneof(instantArbitrary, fc.constantFrom('2026-09-18T10:00:00.000000000Z', '2026-09-18T10:00:00.000000001Z')),
  taskId: fc.oneof(fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }), fc.constantFrom('tsk_1', 'tsk_2')),
});

test('for any two results, the keys order as the rule does', () => {
  fc.assert(
    fc.property(observationArbitrary, observationArbitrary, (a, b) => {
      expect(keyOrder(a, b)).toBe(rule(a, b));
    }),
    { numRuns: 5_000 },
  );
});

test('whatever order a job’s results arrive in, the stored winner is the one the rule picks', () => {
  fc.assert(
    fc.property(
      fc
        .array(observationArbitrary, { minLength: 1, maxLength: 8 })
        .chain((results) => fc.tuple(fc.constant(results), fc.shuffledSubarray(results, { minLength: results.length }))),
      ([results, arrivals]) => {
        const best = results.reduce((winner, candidate) => (rule(candidate, winner) > 0 ? candidate : winner));
        expect(rule(storedWinner(arrivals)!, best)).toBe(0);
      },
    ),
    { numRuns: 2_000 },
  );
});
