/**
 * The metric store answers statistics as CloudWatch defines them, identifies a metric by its full
 * dimension set, and forgets datapoints older than its retention.
 */
import { MetricStore, UnsupportedStatisticError } from '../../../src/aws/cloudwatch/metric-store';
import { ManualClock, MINUTE, T0 } from './support';

const metric = { namespace: 'Test', name: 'Latency', dimensions: { Api: 'orders' } };

function storeWith(values: number[], clock = new ManualClock()): MetricStore {
  const store = new MetricStore({ clock: clock.read });
  values.forEach((value, index) => store.put({ ...metric, timestamp: T0 + index, value }));
  return store;
}

describe('statistics', () => {
  const store = storeWith([4, 1, 3, 2]);

  test.each([
    ['Sum', 10],
    ['Average', 2.5],
    ['Minimum', 1],
    ['Maximum', 4],
    ['SampleCount', 4],
  ])('%s', (statistic, expected) => {
    expect(store.statistic(metric, statistic, T0, T0 + MINUTE)).toBe(expected);
  });

  test('the range includes its start and excludes its end', () => {
    // Datapoints at T0, T0+1, T0+2, T0+3 hold 4, 1, 3, 2.
    expect(store.statistic(metric, 'Sum', T0 + 1, T0 + 3)).toBe(1 + 3);
  });

  test('no datapoint in the range is no data, not zero', () => {
    expect(store.statistic(metric, 'Sum', T0 + MINUTE, T0 + 2 * MINUTE)).toBeUndefined();
  });

  test('statistics CloudWatch does not have, or that are not computed here, are refused', () => {
    for (const statistic of ['sum', 'Median', 'tm90', 'p101', 'p', 'IQM']) {
      expect(() => store.statistic(metric, statistic, T0, T0 + MINUTE)).toThrow(UnsupportedStatisticError);
    }
  });
});

describe('percentiles', () => {
  // pNN is the smallest value with at least NN% of the values at or below it.
  const oneToTen = storeWith([7, 3, 10, 1, 5, 9, 2, 8, 4, 6]);

  test.each([
    ['p50', 5],
    ['p90', 9],
    ['p91', 10],
    ['p95', 10],
    ['p10', 1],
    ['p10.5', 2],
    ['p0', 1],
    ['p100', 10],
  ])('%s of 1..10 is %d', (statistic, expected) => {
    expect(oneToTen.statistic(metric, statistic, T0, T0 + MINUTE)).toBe(expected);
  });

  test('p99.9 of 1..1000 is 999', () => {
    const store = storeWith(Array.from({ length: 1000 }, (_unused, index) => 1000 - index));
    expect(store.statistic(metric, 'p99.9', T0, T0 + MINUTE)).toBe(999);
    expect(store.statistic(metric, 'p99.95', T0, T0 + MINUTE)).toBe(1000);
  });
});

describe('metric identity', () => {
  test('a metric is its full dimension set: a datapoint with more dimensions belongs to another metric', () => {
    const store = new MetricStore({ clock: new ManualClock().read });
    store.put({ ...metric, dimensions: { Api: 'orders', Stage: 'prod' }, timestamp: T0, value: 5 });
    store.put({ ...metric, timestamp: T0, value: 1 });
    expect(store.statistic(metric, 'Sum', T0, T0 + MINUTE)).toBe(1);
    expect(store.statistic({ ...metric, dimensions: { Stage: 'prod', Api: 'orders' } }, 'Sum', T0, T0 + MINUTE)).toBe(5);
    expect(store.statistic({ ...metric, dimensions: {} }, 'Sum', T0, T0 + MINUTE)).toBeUndefined();
    expect(store.statistic({ ...metric, namespace: 'Other' }, 'Sum', T0, T0 + MINUTE)).toBeUndefined();
  });

  test('with a unit, only datapoints published in that unit count; a datapoint without one is None', () => {
    const store = new MetricStore({ clock: new ManualClock().read });
    store.putAll([
      { ...metric, timestamp: T0, value: 100, unit: 'Milliseconds' },
      { ...metric, timestamp: T0, value: 2, unit: 'Count' },
      { ...metric, timestamp: T0, value: 7 },
    ]);
    expect(store.statistic({ ...metric, unit: 'Milliseconds' }, 'Sum', T0, T0 + MINUTE)).toBe(100);
    expect(store.statistic({ ...metric, unit: 'None' }, 'Sum', T0, T0 + MINUTE)).toBe(7);
    expect(store.statistic(metric, 'Sum', T0, T0 + MINUTE)).toBe(109);
  });

  test('a value that is not a finite number is refused, as PutMetricData refuses it', () => {
    const store = new MetricStore({ clock: new ManualClock().read });
    expect(() => store.put({ ...metric, timestamp: T0, value: Number.NaN })).toThrow(RangeError);
    expect(() => store.put({ ...metric, timestamp: T0, value: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
});

describe('series', () => {
  test('one point per whole period, undefined where a period has no datapoint, in time order whatever the arrival order', () => {
    const store = new MetricStore({ clock: new ManualClock().read });
    store.put({ ...metric, timestamp: T0 + 2 * MINUTE + 5, value: 3 });
    store.put({ ...metric, timestamp: T0 + 10, value: 1 });
    store.put({ ...metric, timestamp: T0 + 20, value: 2 });
    store.put({ ...metric, timestamp: T0 + 3 * MINUTE, value: 9 });
    expect(store.series(metric, 'Sum', 60, T0, T0 + 3.5 * MINUTE)).toEqual([
      { timestamp: T0, value: 3 },
      { timestamp: T0 + MINUTE, value: undefined },
      { timestamp: T0 + 2 * MINUTE, value: 3 },
    ]);
    expect(store.series(metric, 'Maximum', 120, T0, T0 + 4 * MINUTE)).toEqual([
      { timestamp: T0, value: 2 },
      { timestamp: T0 + 2 * MINUTE, value: 9 },
    ]);
  });
});

describe('retention', () => {
  test('datapoints older than the retention are not answered, are dropped from memory, and are not accepted', () => {
    const clock = new ManualClock();
    const store = new MetricStore({ clock: clock.read, retentionMs: 10 * MINUTE });
    for (let minute = 0; minute < 10; minute++) store.put({ ...metric, timestamp: T0 + minute * MINUTE, value: 1 });
    expect(store.datapointCount()).toBe(10);

    clock.set(T0 + 15 * MINUTE);
    // Minutes 0 to 4 are older than ten minutes: gone from answers at once.
    expect(store.statistic(metric, 'SampleCount', T0, T0 + 15 * MINUTE)).toBe(5);
    store.put({ ...metric, timestamp: T0, value: 1 });
    store.put({ ...metric, timestamp: T0 + 15 * MINUTE, value: 1 });
    expect(store.datapointCount()).toBe(6);

    clock.set(T0 + 60 * MINUTE);
    store.put({ ...metric, dimensions: {}, timestamp: T0 + 60 * MINUTE, value: 1 });
    // The metric no longer written is swept too.
    expect(store.datapointCount()).toBe(1);
  });

  test('the default retention is a day of the store clock', () => {
    const clock = new ManualClock();
    const store = new MetricStore({ clock: clock.read });
    store.put({ ...metric, timestamp: T0, value: 1 });
    clock.set(T0 + 24 * 60 * MINUTE - 1);
    expect(store.statistic(metric, 'Sum', T0, T0 + MINUTE)).toBe(1);
    clock.set(T0 + 24 * 60 * MINUTE + 1);
    expect(store.statistic(metric, 'Sum', T0, T0 + MINUTE)).toBeUndefined();
  });
});
