/**
 * The breaker's rule on one environment's outcomes, stated on its own: it opens when the window
 * holds at least `minimumRows` rows and at least `failureThresholdPercent` of them failed
 * downstream; outcomes older than the window no longer count.
 */
import { BreakerRuntimeConfig } from '../../../lib/contract';
import { OutcomeWindow, overThreshold } from '../../../lambda/processor/breaker';

const config: BreakerRuntimeConfig = { failureThresholdPercent: 50, minimumRows: 10, windowSeconds: 60, coolDownSeconds: 60, probesToClose: 3 };

test.each([
  // rows, failures, opens
  [9, 9, false], // every row failed, but too few rows to say the downstream is down
  [10, 5, true], // exactly at the threshold
  [10, 4, false],
  [100, 1, false], // a poison row among successes
  [20, 20, true],
])('%i rows, %i failed downstream: opens %p', (rows, failures, opens) => {
  expect(overThreshold({ rows, failures }, config)).toBe(opens);
});

test('the window forgets outcomes older than its length, and counts batches as their rows', () => {
  const window = new OutcomeWindow(60_000);
  window.add(0, 10, 10);
  window.add(30_000, 10, 0);
  expect(window.tally(59_999)).toEqual({ rows: 20, failures: 10 });
  // The failing batch is a minute old: only the healthy one is left.
  expect(window.tally(60_000)).toEqual({ rows: 10, failures: 0 });
  window.clear();
  expect(window.tally(60_000)).toEqual({ rows: 0, failures: 0 });
});
