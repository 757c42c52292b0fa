import { randomBytes } from 'node:crypto';
import { BreakerRuntimeConfig, BreakerState, DeferReason, FLOW_STATE_CACHE_MS, MetricName } from '../../lib/contract';
import { FlowState, FlowStore, ProbeOutcome } from '../shared/stores/flow';
import { Telemetry } from '../shared/runtime/telemetry';
import { openReason, OutcomeWindow, overThreshold } from './breaker';

/** What an invocation may do with its batch. */
export type Admission =
  | { readonly kind: 'process' }
  | { readonly kind: 'defer'; readonly reason: (typeof DeferReason)[keyof typeof DeferReason] }
  /** Process one row, the first; the rest are deferred. */
  | { readonly kind: 'probe'; readonly owner: string };

export interface FlowGateOptions {
  readonly store: FlowStore;
  /** Absent: no breaker, only pause and resume. */
  readonly breaker?: BreakerRuntimeConfig;
  /** A probe's lease: the processor's timeout, so a crashed probe frees it with its invocation. */
  readonly probeLeaseMs: number;
  readonly telemetry: Telemetry;
  readonly now: () => number;
}

/**
 * The processor's side of flow control (docs/FLOW-CONTROL.md), one per execution environment: the
 * flow-control item, cached for `FLOW_STATE_CACHE_MS`, says whether a batch is processed, deferred
 * or probes; the environment's outcome window opens the breaker.
 */
export class FlowGate {
  private cached?: { readonly state: FlowState; readonly until: number };
  private readonly window?: OutcomeWindow;

  constructor(private readonly options: FlowGateOptions) {
    this.window = options.breaker && new OutcomeWindow(options.breaker.windowSeconds * 1000);
  }

  async admit(): Promise<Admission> {
    const now = this.options.now();
    const state = await this.state(now);
    if (state.pausedAt !== undefined) return { kind: 'defer', reason: DeferReason.PAUSED };
    const breaker = this.options.breaker;
    // An inbox deployed without the breaker processes whatever state an earlier one left.
    if (!breaker || state.breaker === BreakerState.CLOSED) return { kind: 'process' };
    const cooled = state.breaker === BreakerState.OPEN && (state.openedAt ?? 0) + breaker.coolDownSeconds * 1000 <= now;
    const probeFree = state.breaker === BreakerState.HALF_OPEN && (state.probeUntil ?? 0) < now;
    if (!cooled && !probeFree) return { kind: 'defer', reason: state.breaker === BreakerState.OPEN ? DeferReason.BREAKER_OPEN : DeferReason.PROBE_ELSEWHERE };
    const owner = randomBytes(12).toString('base64url');
    if (await this.options.store.takeProbe(owner, now, breaker.coolDownSeconds * 1000, this.options.probeLeaseMs)) {
      this.remember({ ...state, breaker: BreakerState.HALF_OPEN, probeOwner: owner, probeUntil: now + this.options.probeLeaseMs }, now);
      return { kind: 'probe', owner };
    }
    // Another took it, or an operator closed the breaker meanwhile: what the item says now decides.
    const fresh = await this.refresh(now);
    if (fresh.pausedAt === undefined && fresh.breaker === BreakerState.CLOSED) return { kind: 'process' };
    return { kind: 'defer', reason: fresh.pausedAt !== undefined ? DeferReason.PAUSED : DeferReason.PROBE_ELSEWHERE };
  }

  /**
   * Records a processed batch's outcomes: its rows, and how many failed downstream. True when the
   * breaker is open (this batch opened it, or this environment knows it open): the rows that failed
   * downstream are given back without spending their attempt.
   */
  async record(rows: number, failures: number): Promise<boolean> {
    const { breaker, store, telemetry } = this.options;
    if (!breaker || !this.window) return false;
    const now = this.options.now();
    if (this.cached && this.cached.state.breaker !== BreakerState.CLOSED) return failures > 0;
    this.window.add(now, rows, failures);
    const tally = this.window.tally(now);
    if (!overThreshold(tally, breaker)) {
      // Another environment may have opened it since this one cached the item: a failure asks the item itself.
      if (failures === 0) return false;
      return (await this.refresh(now)).breaker !== BreakerState.CLOSED;
    }
    const reason = openReason(tally, breaker);
    this.window.clear();
    if (await store.open(now, reason)) {
      telemetry.count(MetricName.BREAKER_OPENED, undefined);
      telemetry.log('WARN', 'circuit breaker opened', { reason, coolDownSeconds: breaker.coolDownSeconds });
    }
    await this.refresh(now);
    return true;
  }

  /** Ends this environment's probe; logs the breaker closing or opening again. */
  async endProbe(owner: string, outcome: ProbeOutcome, reason?: string): Promise<void> {
    const { breaker, store, telemetry } = this.options;
    const now = this.options.now();
    const after = await store.endProbe(owner, outcome, now, breaker?.probesToClose ?? 1, reason);
    if (!after) return;
    this.remember(after, now);
    if (outcome === 'failed') {
      telemetry.count(MetricName.BREAKER_OPENED, undefined);
      telemetry.log('WARN', 'circuit breaker opened again: the probe failed downstream', { reason });
    } else if (after.breaker === BreakerState.CLOSED) {
      telemetry.log('INFO', 'circuit breaker closed: the probes succeeded', { probes: breaker?.probesToClose });
    }
  }

  private async state(now: number): Promise<FlowState> {
    return this.cached && this.cached.until > now ? this.cached.state : this.refresh(now);
  }

  private async refresh(now: number): Promise<FlowState> {
    return this.remember(await this.options.store.read(), now);
  }

  private remember(state: FlowState, now: number): FlowState {
    // Outcomes from before the breaker left CLOSED say nothing once it is back.
    if (state.breaker !== BreakerState.CLOSED) this.window?.clear();
    this.cached = { state, until: now + FLOW_STATE_CACHE_MS };
    return state;
  }
}
