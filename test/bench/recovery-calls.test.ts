/**
 * The bench's count of the reconciler's requests to GitHub and Stripe (bench/recovery-calls.ts):
 * counts and shapes only, never a time. The rules are stated here: every GitHub delivery lost is
 * fetched once and recovered; Stripe's lost events older than its settle time are recovered; a
 * run lists at least one page.
 */
import { measureRecoveryCalls } from '../../bench/recovery-calls';

test('an hour at 300 deliveries, one in 50 lost: GitHub fetches each lost one once, Stripe lists a page a run', async () => {
  const [github, stripe] = await measureRecoveryCalls({ volumes: [300], lostOneIn: 50 });
  expect(github).toMatchObject({ provider: 'github', deliveriesPerHour: 300, lostPerHour: 6, runsPerHour: 12, recovered: 6 });
  expect(github.requests.fetch).toBe(6);
  expect(github.requests.redeliver).toBe(0);
  // 13 runs (the cursor's first among them), each at least one page; 300 an hour never fill two pages of 100 in 10 minutes.
  expect(github.requests.list).toBe(13);
  expect(github.requests.total).toBe(github.requests.list + github.requests.fetch);
  // Lost at 49, 99, …, 299 of 300 (12 s apart): those made 15 minutes before the hour's end or earlier, 4 of 6.
  expect(stripe).toMatchObject({ provider: 'stripe', lostPerHour: 6, recovered: 4 });
  expect(stripe.requests).toEqual({ list: 13, fetch: 0, redeliver: 0, total: 13 });
}, 120_000);
