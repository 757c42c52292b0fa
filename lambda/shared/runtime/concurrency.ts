import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `task` on every item, at most `limit` at once, and settles each: one failure never hides
 * another's outcome, and the outcomes keep the items' order. `stop` is asked before each item is
 * started: once it says so, the items not started yet are settled rejected with `stopped` (a call
 * that failed whole says the service is down: sending the rest would only wait out more timeouts).
 */
export async function settleEach<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
  stop: () => boolean = () => false,
): Promise<PromiseSettledResult<R>[]> {
  const outcomes = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      if (stop()) {
        outcomes[index] = { status: 'rejected', reason: STOPPED };
        continue;
      }
      try {
        outcomes[index] = { status: 'fulfilled', value: await task(items[index]) };
      } catch (reason) {
        outcomes[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return outcomes;
}

/** The reason of an item `settleEach` never started. */
export const STOPPED = new Error('not started: an earlier call failed whole');

/**
 * Waits before the `attempt`-th resend (1, 2, …) of what a service refused for now (throttling,
 * an internal error): a random time up to `baseMs` × 2^(attempt − 1) ("full jitter"), so that many
 * callers refused at once do not come back at once.
 */
export function backOff(attempt: number, baseMs: number): Promise<void> {
  return sleep(Math.round(Math.random() * baseMs * 2 ** (attempt - 1)));
}
