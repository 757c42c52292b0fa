/**
 * jest's order of test files, with a better guess for the files it has no duration for (a fresh
 * clone, a changed jest configuration): jest runs those first, the largest first, and file size
 * says little here (the fault-injection run's file is among the smaller, the fuzzer's among the
 * smallest). They go by layer instead (jest-project.cjs `START_ORDER`): the files that start
 * processes and wait on them first, the pure tests last, to fill the workers' gaps; by size
 * within a layer. Files with durations keep jest's order: the slowest first.
 */
const TestSequencer = require('@jest/test-sequencer').default;
const { START_ORDER } = require('./jest-project.cjs');

class LayerSequencer extends TestSequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) => START_ORDER.indexOf(test.context.config.displayName?.name);
    const guessed = sorted.filter((test) => test.duration == null && !this.hasFailed(test));
    const byLayer = [...guessed].sort((a, b) => rank(a) - rank(b));
    // The guessed files stay where jest put them (after the failed ones, before the timed ones), reordered among themselves.
    let next = 0;
    return sorted.map((test) => (guessed.includes(test) ? byLayer[next++] : test));
  }
}

module.exports = LayerSequencer;
