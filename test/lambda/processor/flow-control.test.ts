import { BreakerDefaults, BreakerState, DeliveryStatus, MetricName, ReconcileRequest } from '../../../lib/contract';
import type { DispatchOutcome, EffectSink } from '../../../lambda/shared/effects/sinks';
import { DynamoDbFlowStore } from '../../../lambda/shared/stores/flow';
import { answerlineBody, InboxHarness, keyOf, PROVIDER, SecretsFixture } from '../../support/inbox-fixture';

/**
 * Flow control against the emulators, every call judged by the role policies of the template
 * (docs/FLOW-CONTROL.md): a paused inbox admits and keeps deliveries without spending an attempt,
 * a resume processes each waiting row once, a downstream outage opens the breaker without killing
 * rows, probes close it, and a poison row still dies.
 */

/** Redelivery after a failure takes one visibility timeout: keep it short. */
const MAX_RECEIVE_COUNT = 2;
const QUEUE = { visibilityTimeoutSeconds: 1, maxReceiveCount: MAX_RECEIVE_COUNT };
const SWEEP_AFTER_MS = 5 * 60_000;
const COOL_DOWN_MS = BreakerDefaults.coolDownSeconds * 1000;
/** Longer than the processors' cache of the flow-control item. */
const CACHE_PASSED_MS = 6_000;
const RESUME = { source: ReconcileRequest.SOURCE, 'detail-type': ReconcileRequest.RESUME };

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'flow', { queue: QUEUE });
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

/** The operator's (and the CLI's) side of the flow-control item. */
const operator = () => new DynamoDbFlowStore(h.dynamodb, h.names.inboxTable);

/** A sink standing for the downstream: down while `down` says so, and failing the rows `poisoned` holds whatever. */
function downstream(poisoned: ReadonlySet<string> = new Set()) {
  const state = { down: false, sent: [] as string[] };
  const sink: EffectSink = {
    dispatch: async (effects) =>
      effects.map((effect): DispatchOutcome => {
        const key = (JSON.parse(effect.detailJson) as { eventKey: string }).eventKey;
        if (state.down || poisoned.has(key)) return { ok: false, error: new Error('downstream unavailable') };
        state.sent.push(key);
        return { ok: true };
      }),
  };
  return { state, sink };
}

async function acceptMany(count: number, label: string): Promise<string[]> {
  const bodies = Array.from({ length: count }, (_, n) => answerlineBody({ idempotencyKey: `${label}-${n}`, id: `tsk_${label}_${n}` }));
  for (const body of bodies) expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
  return bodies.map(keyOf);
}

async function statuses(keys: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const key of keys) {
    const status = String((await h.row(key))?.status);
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

describe('pause and resume', () => {
  test('while paused, deliveries are admitted and kept; nothing is processed, no attempt spent, the sweep enqueues none', async () => {
    await operator().pause(h.clock.now(), 'test');
    const keys = await acceptMany(3, 'paused');

    expect(await h.drain(h.processor())).toEqual({ received: 3, failed: 0 });

    for (const key of keys) {
      const row = await h.row(key);
      expect(row?.status).toBe(DeliveryStatus.RECEIVED);
      // The claim is what counts an attempt: none was made.
      expect(row?.attempts ?? 0).toBe(0);
    }
    expect(h.capture.metric(MetricName.DEFERRED, PROVIDER)).toBe(3);
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(0);
    // Long past `sweepAfter`, the sweep still leaves them: they wait for the resume.
    h.clock.advance(SWEEP_AFTER_MS * 3);
    expect(await h.reconciler({ sweepAfterMs: SWEEP_AFTER_MS })()).toMatchObject({ swept: 0, paused: true });
    expect(h.capture.metric(MetricName.PAUSED)).toBe(1);
    expect(await h.drain(h.processor())).toEqual({ received: 0, failed: 0 });
  });

  test('resume enqueues each waiting row once, however recent, and each is processed once', async () => {
    await operator().pause(h.clock.now(), 'test');
    const keys = await acceptMany(4, 'resume');
    const processor = h.processor();
    await h.drain(processor);
    const flow = await operator().resume(h.clock.now());
    expect(flow).toMatchObject({ breaker: BreakerState.CLOSED });
    expect(flow.pausedAt).toBeUndefined();
    h.clock.advance(CACHE_PASSED_MS);

    // The rows arrived seconds ago, far less than `sweepAfter`: a resume's sweep takes them all the same.
    expect(await h.reconciler({ sweepAfterMs: SWEEP_AFTER_MS })(RESUME)).toMatchObject({ swept: 4 });
    expect(await h.drain(processor)).toEqual({ received: 4, failed: 0 });

    for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
    expect(h.capture.metric(MetricName.PROCESSED, PROVIDER)).toBe(4);
    expect(await h.reconciler({ sweepAfterMs: SWEEP_AFTER_MS })(RESUME)).toMatchObject({ swept: 0 });
  });

  test('a pause reaches a running processor once its cache of the state has passed', async () => {
    const processor = h.processor();
    await acceptMany(1, 'before');
    expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });
    await operator().pause(h.clock.now(), 'test');
    const [later] = await acceptMany(1, 'after');
    h.clock.advance(CACHE_PASSED_MS);

    expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });
    expect(await h.row(later)).toMatchObject({ status: DeliveryStatus.RECEIVED });
  });
});

describe('the circuit breaker', () => {
  test('a downstream outage opens it; the failing rows get their attempts back, nothing dies; probes close it and every row is processed once', async () => {
    const { state, sink } = downstream();
    const processor = h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink) });
    state.down = true;
    const keys = await acceptMany(BreakerDefaults.minimumRows, 'outage');

    // One batch of ten fails downstream: at the threshold, the breaker opens on it.
    expect(await h.drain(processor)).toEqual({ received: BreakerDefaults.minimumRows, failed: 0 });
    expect(await operator().read()).toMatchObject({ breaker: BreakerState.OPEN, openings: 1 });
    expect(h.capture.metric(MetricName.BREAKER_OPENED)).toBe(1);
    for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });

    // While open, deliveries are admitted and deferred.
    const [during] = await acceptMany(1, 'during');
    expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });
    expect(await h.row(during)).toMatchObject({ status: DeliveryStatus.RECEIVED });
    expect(h.capture.metric(MetricName.DEFERRED, PROVIDER)).toBe(1);
    expect(await h.reconciler({ sweepAfterMs: SWEEP_AFTER_MS })()).toMatchObject({ swept: 0 });
    expect(h.capture.metric(MetricName.BREAKER_OPEN)).toBe(1);

    // The downstream comes back; after the cool-down the sweep brings the rows back, and they probe one at a time.
    state.down = false;
    h.clock.advance(Math.max(COOL_DOWN_MS, SWEEP_AFTER_MS) + 1);
    const all = [...keys, during];
    for (let sweeps = 0; sweeps < BreakerDefaults.probesToClose + 2 && (await operator().read()).breaker !== BreakerState.CLOSED; sweeps++) {
      await h.reconciler({ sweepAfterMs: SWEEP_AFTER_MS })();
      await h.drain(processor);
      h.clock.advance(SWEEP_AFTER_MS + 1);
    }
    expect(await operator().read()).toMatchObject({ breaker: BreakerState.CLOSED });
    // What still waits comes back with the next sweep, processed at full speed.
    await h.reconciler({ sweepAfterMs: SWEEP_AFTER_MS })();
    await h.drain(processor);

    expect(await statuses(all)).toEqual({ [DeliveryStatus.PROCESSED]: all.length });
    expect(new Set(state.sent)).toEqual(new Set(all));
    expect(h.capture.metric(MetricName.DEAD_LETTERED, PROVIDER)).toBe(0);
  });

  test('a probe that fails downstream opens it again for another cool-down, its row not charged', async () => {
    const { state, sink } = downstream();
    const processor = h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink) });
    state.down = true;
    const keys = await acceptMany(BreakerDefaults.minimumRows, 'reopen');
    await h.drain(processor);
    h.clock.advance(COOL_DOWN_MS + 1);

    // One message arrives; it is the probe, and the downstream is still down.
    const [probe] = await acceptMany(1, 'probe');
    expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });

    const flow = await operator().read();
    expect(flow).toMatchObject({ breaker: BreakerState.OPEN, openings: 2, openedAt: h.clock.now() });
    expect(await h.row(probe)).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
    expect(await statuses(keys)).toEqual({ [DeliveryStatus.RECEIVED]: keys.length });
  });

  test('a probe whose row reaches no downstream (a result that ranks lower, so no effect) proves nothing: the breaker does not count it', async () => {
    const { state, sink } = downstream();
    const processor = h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink) });
    // The job's winner is decided while the downstream is up.
    const newer = answerlineBody({ idempotencyKey: 'ranked', id: 'tsk_ranked_new', createdAt: '2026-09-18T11:00:00.000Z' });
    expect(await h.deliver(newer)).toMatchObject({ statusCode: 202 });
    await h.drain(processor);
    state.down = true;
    await acceptMany(BreakerDefaults.minimumRows, 'down');
    await h.drain(processor);
    expect(await operator().read()).toMatchObject({ breaker: BreakerState.OPEN });
    h.clock.advance(COOL_DOWN_MS + 1);

    // The probe is an older FAILED task of the same job: it loses, and needs no effect.
    const older = answerlineBody({ idempotencyKey: 'ranked', id: 'tsk_ranked_old', createdAt: '2026-09-18T09:00:00.000Z', status: 'FAILED' });
    expect(await h.deliver(older)).toMatchObject({ statusCode: 202 });
    await h.drain(processor);

    expect(await h.row(keyOf(older))).toMatchObject({ status: DeliveryStatus.PROCESSED });
    expect(await operator().read()).toMatchObject({ probeSuccesses: 0 });
    expect((await operator().read()).breaker).not.toBe(BreakerState.CLOSED);
  });

  test('an environment that still trusts its cached state gives a downstream failure back once another opened the breaker', async () => {
    const { state, sink } = downstream();
    const opener = h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink) });
    const cached = h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink) });
    // This environment reads the flow-control item while all is well, and keeps it for its cache's time.
    const [warm] = await acceptMany(1, 'warm');
    await h.drain(cached);
    expect(await h.row(warm)).toMatchObject({ status: DeliveryStatus.PROCESSED });
    state.down = true;
    await acceptMany(BreakerDefaults.minimumRows, 'opens');
    await h.drain(opener);
    expect(await operator().read()).toMatchObject({ breaker: BreakerState.OPEN });

    // Within its cache's time it processes one row, which fails downstream, far below the threshold of its own window.
    const [late] = await acceptMany(1, 'late');
    expect(await h.drain(cached)).toEqual({ received: 1, failed: 0 });
    expect(await h.row(late)).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
  });

  test('a poison row among successes keeps the breaker closed and dies after its attempts', async () => {
    const keys = await acceptMany(BreakerDefaults.minimumRows, 'healthy');
    const [poison] = await acceptMany(1, 'poison');
    const { sink } = downstream(new Set([poison]));
    const processor = h.processor({ maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink) });

    await h.drain(processor);
    // The poison row's message comes back after its visibility timeout, until its attempts run out.
    for (let receives = 1; receives < MAX_RECEIVE_COUNT; receives++) await h.pollOnce(processor, 2);

    expect(await operator().read()).toMatchObject({ breaker: BreakerState.CLOSED, openings: 0 });
    expect(await h.row(poison)).toMatchObject({ status: DeliveryStatus.DEAD });
    expect(await statuses(keys)).toEqual({ [DeliveryStatus.PROCESSED]: keys.length });
  });
});

describe('a rate for the consumer', () => {
  test('an invocation of n rows lasts n × its share of the rate: it waits out what its work left', async () => {
    const waits: number[] = [];
    // 2 rows a second shared by 5 invocations: each row is 2.5 s of an invocation's time.
    const processor = h.processor({
      pacingMsPerRow: 2_500,
      sleep: async (ms) => {
        waits.push(ms);
        h.clock.advance(ms);
      },
    });
    await acceptMany(3, 'paced');
    const started = h.clock.now();

    expect(await h.pollOnce(processor)).toEqual({ received: 3, failed: 0 });

    expect(waits).toEqual([3 * 2_500]);
    expect(h.clock.now() - started).toBe(3 * 2_500);
  });

  test('deferred messages are not paced: nothing reached the downstream', async () => {
    const waits: number[] = [];
    await operator().pause(h.clock.now(), 'test');
    await acceptMany(2, 'deferred');
    expect(await h.pollOnce(h.processor({ pacingMsPerRow: 2_500, sleep: async (ms) => void waits.push(ms) }))).toEqual({ received: 2, failed: 0 });
    expect(waits).toEqual([]);
  });
});
