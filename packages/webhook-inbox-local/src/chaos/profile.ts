/**
 * The timing of a fault-injection run, all derived from its speed: how fast each provider's time
 * runs, the twin's compressed timeouts and schedules, the outages' lengths.
 */
import { Defaults, Limits } from '../../../../lib/contract';
import { ANSWERLINE_RETRY_WINDOW_MS, ANSWERLINE_RUN_MS } from '../providers/answerline/simulator';
import { ECHONOVA_RETRY_WINDOW_MS } from '../providers/echonova/simulator';

/** The knobs of a run's timing, all derived from `speed`. */
export interface ChaosProfile {
  /** Provider time compression: provider time runs this many times faster than the wall clock. */
  readonly factors: { readonly answerline: number; readonly echonova: number; readonly standardWebhooks: number };
  /** Result deliveries the providers complete per second, on average. */
  readonly ratePerSecond: number;
  readonly processorTimeoutSeconds: number;
  readonly reconcilerTimeoutSeconds: number;
  readonly sweepAfterSeconds: number;
  readonly reconcileEverySeconds: number;
  readonly maxReceiveCount: number;
  /** The reconciler's polling horizon and recheck per provider, seconds (compressed lifecycles). */
  readonly polling: {
    readonly answerline: { horizon: number; recheck: number };
    readonly echonova: { horizon: number; recheck: number };
    readonly batches: { horizon: number; recheck: number };
  };
  readonly storeOutageMs: number;
  readonly queueOutageMs: number;
  /** Longer than Answerline's whole retry window (compressed), so that deliveries die. */
  readonly longOutageMs: number;
  /**
   * The processing's downstream (the effect target) failing every row: longer than a row's retry
   * budget (`maxReceiveCount` receives, one visibility timeout apart), which would leave every row
   * it touched DEAD without the circuit breaker.
   */
  readonly downstreamOutageMs: number;
  /** The circuit breaker's cool-down, seconds: short, so that probes run within the outage and the run recovers soon after it. */
  readonly breakerCoolDownSeconds: number;
  /** How long after the endpoint recovers the operator enables a disabled Echonova webhook again. */
  readonly reenableAfterMs: number;
  /** Simulated run time of a task/job, real ms. */
  readonly answerlineRunMs: number;
  readonly echonovaRunMs: number;
}

/** An Echonova job runs up to a minute here (Echonova documents no job lifecycle, docs/providers/echonova.md). */
const ECHONOVA_RUN_MS = 60_000;

export function chaosProfile(speed = 1, ratePerSecond?: number): ChaosProfile {
  const factors = { answerline: 100 * speed, echonova: 10 * speed, standardWebhooks: 1000 * speed };
  // At least 2 s: a shorter timeout kills batches on a loaded 2-core machine, and every kill costs a cold start.
  const processorTimeoutSeconds = speed >= 2 ? 2 : 3;
  // Room for the sweep's steps and, beside them, polls of 5 s each with the 5 s a run keeps in hand
  // after the last, on a loaded machine too; a run with more to do stops there and the next run goes on.
  const reconcilerTimeoutSeconds = 30;
  const answerlineWindowMs = ANSWERLINE_RETRY_WINDOW_MS / factors.answerline;
  // Tighter than the construct's 5, with room for what a row's budget must bear besides the
  // outage (docs/FLOW-CONTROL.md): one attempt in an invocation that was killed, and the failures
  // before the breaker opened, which on a loaded machine can be two (the breaker needs ten rows in
  // one environment; a row comes back every visibility timeout, 12 s at speed 4).
  const maxReceiveCount = 4;
  const visibilityTimeoutMs = processorTimeoutSeconds * Defaults.VISIBILITY_TIMEOUT_FACTOR * 1000;
  return {
    factors,
    ratePerSecond: ratePerSecond ?? (speed >= 2 ? 40 : 70),
    processorTimeoutSeconds,
    reconcilerTimeoutSeconds,
    // Beyond the visibility timeout (6 × the processor timeout), so that the sweep leaves rows
    // the queue is still retrying alone, and at least the construct's floor: the longest function
    // timeout (the reconciler's here; the verifier's is 10 s) plus its margin.
    sweepAfterSeconds: Math.max(processorTimeoutSeconds * 6 + 6, reconcilerTimeoutSeconds + Limits.SWEEP_AFTER_MARGIN_SECONDS),
    reconcileEverySeconds: speed >= 2 ? 1 : 2,
    maxReceiveCount,
    polling: {
      // Answerline: five minutes of run and 45 minutes of delivery retries after the start (the
      // four hours of queueing are not simulated: tasks start at once).
      answerline: {
        horizon: Math.ceil((ANSWERLINE_RUN_MS + ANSWERLINE_RETRY_WINDOW_MS) / factors.answerline / 1000) + 1,
        recheck: Math.max(1, Math.ceil(600 / factors.answerline)),
      },
      echonova: {
        horizon: Math.ceil((ECHONOVA_RUN_MS + ECHONOVA_RETRY_WINDOW_MS) / factors.echonova / 1000) + 1,
        recheck: Math.max(1, Math.ceil(300 / factors.echonova)),
      },
      // A batch's first look a minute after submission, then every 5 minutes: a second each here.
      batches: { horizon: 1, recheck: 1 },
    },
    storeOutageMs: Math.round(4_000 / Math.sqrt(speed)),
    queueOutageMs: Math.round(5_000 / Math.sqrt(speed)),
    longOutageMs: Math.round(answerlineWindowMs * 1.25 + 2_000),
    // A row's last receive comes (maxReceiveCount - 1) visibility timeouts after its first: one
    // more outlasts it. With the construct's 30 s processor timeout that is many minutes.
    downstreamOutageMs: maxReceiveCount * visibilityTimeoutMs,
    breakerCoolDownSeconds: processorTimeoutSeconds * 2,
    reenableAfterMs: 2_000,
    answerlineRunMs: ANSWERLINE_RUN_MS / factors.answerline,
    echonovaRunMs: ECHONOVA_RUN_MS / factors.echonova,
  };
}
