/**
 * API Gateway's throttling as the twin applies it, on a clock the test moves: a route's bucket
 * holds its burst and refills at its rate; a request refused by its route takes nothing from the
 * account, so a flood on one route leaves another its allowance; the account's bucket is shared;
 * a stage's settings pick the throttle of a route as API Gateway does (HTTP API route settings over
 * the default; REST method settings, the exact path and method over `/*` and `*`).
 */
import { httpStageLimits, restStageLimits, RouteThrottles, TokenBucket } from '../../../src/aws/apigateway/throttle';

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function admitted(throttles: RouteThrottles, routeKey: string, requests: number): number {
  let count = 0;
  for (let i = 0; i < requests; i++) if (throttles.admit(routeKey)) count++;
  return count;
}

test('a route lets its burst through at once, then its rate; a flood on it leaves another route all of its own', () => {
  const time = clock();
  const limits: Record<string, { rateLimit: number; burstLimit: number }> = {
    'POST /hooks/flooded': { rateLimit: 5, burstLimit: 10 },
    'POST /hooks/quiet': { rateLimit: 100, burstLimit: 50 },
  };
  const throttles = new RouteThrottles(new TokenBucket({ rateLimit: 1000, burstLimit: 100 }, time.now), (key) => limits[key], time.now);
  expect(admitted(throttles, 'POST /hooks/flooded', 1000)).toBe(10);
  expect(admitted(throttles, 'POST /hooks/quiet', 50)).toBe(50);
  time.advance(1_000);
  expect(admitted(throttles, 'POST /hooks/flooded', 1000)).toBe(5);
  expect(admitted(throttles, 'POST /hooks/quiet', 50)).toBe(50);
});

test('the account’s bucket is every route’s: past it, even a route within its own allowance gets 429', () => {
  const time = clock();
  const throttles = new RouteThrottles(new TokenBucket({ rateLimit: 10, burstLimit: 20 }, time.now), () => ({ rateLimit: 100, burstLimit: 15 }), time.now);
  expect(admitted(throttles, 'POST /hooks/a', 15)).toBe(15);
  expect(admitted(throttles, 'POST /hooks/b', 15)).toBe(5);
  // A route without a throttle of its own draws on the account's alone.
  const unlimited = new RouteThrottles(new TokenBucket({ rateLimit: 10, burstLimit: 20 }, time.now), () => undefined, time.now);
  expect(admitted(unlimited, 'POST /hooks/a', 100)).toBe(20);
});

test('an HTTP API stage: a route’s own settings, else the default route settings', () => {
  const limitOf = httpStageLimits({
    DefaultRouteSettings: { ThrottlingRateLimit: 7, ThrottlingBurstLimit: 8 },
    RouteSettings: { 'POST /hooks/a': { ThrottlingRateLimit: 1, ThrottlingBurstLimit: 2 } },
  });
  expect(limitOf('POST /hooks/a')).toEqual({ rateLimit: 1, burstLimit: 2 });
  expect(limitOf('POST /hooks/b')).toEqual({ rateLimit: 7, burstLimit: 8 });
  expect(httpStageLimits({})('POST /hooks/a')).toBeUndefined();
});

test('a REST API stage: the method’s own settings over the path’s, the stage’s /* default last', () => {
  const limitOf = restStageLimits({
    MethodSettings: [
      { ResourcePath: '/*', HttpMethod: '*', ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
      { ResourcePath: '/~1hooks~1a', HttpMethod: 'POST', ThrottlingRateLimit: 1, ThrottlingBurstLimit: 2 },
      { ResourcePath: '/~1hooks~1b', HttpMethod: '*', ThrottlingRateLimit: 3, ThrottlingBurstLimit: 4 },
      { ResourcePath: '/~1hooks~1c', HttpMethod: 'POST', LoggingLevel: 'INFO' },
    ],
  });
  expect(limitOf('POST /hooks/a')).toEqual({ rateLimit: 1, burstLimit: 2 });
  expect(limitOf('GET /hooks/a')).toEqual({ rateLimit: 100, burstLimit: 200 });
  expect(limitOf('GET /hooks/b')).toEqual({ rateLimit: 3, burstLimit: 4 });
  expect(limitOf('POST /hooks/c')).toEqual({ rateLimit: 100, burstLimit: 200 });
});
