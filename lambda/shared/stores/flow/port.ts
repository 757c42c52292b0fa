import type { FlowState } from './state';

/** How a probe ended: it succeeded, failed downstream, or failed for a reason that says nothing of the downstream. */
export type ProbeOutcome = 'succeeded' | 'failed' | 'inconclusive';

/**
 * The flow-control item (docs/FLOW-CONTROL.md). Every change is one conditional UpdateItem, so
 * processors that trip at once, or an operator resuming during a probe, leave one state.
 */
export interface FlowStore {
  /** The item, read strongly consistent. */
  read(): Promise<FlowState>;
  /** Pauses the inbox (a pause already in place keeps its time); the state after. */
  pause(now: number, by: string): Promise<FlowState>;
  /** Resumes it and closes the breaker (an operator overrides the breaker); the state after. */
  resume(now: number): Promise<FlowState>;
  /** Opens the breaker if it is closed; false when it was not (another processor opened it first). */
  open(now: number, reason: string): Promise<boolean>;
  /**
   * Takes the probe: the breaker open for at least `coolDownMs`, or half-open with no live probe,
   * becomes half-open with this owner's lease; false when another took it or the state changed.
   */
  takeProbe(owner: string, now: number, coolDownMs: number, leaseMs: number): Promise<boolean>;
  /**
   * Ends this owner's probe: a success counts (the `probesToClose`-th closes the breaker), a
   * failure opens it again for another cool-down, an inconclusive one frees the lease. The state
   * after; undefined when the probe was no longer this owner's (an operator's resume, an expired lease).
   */
  endProbe(owner: string, outcome: ProbeOutcome, now: number, probesToClose: number, reason?: string): Promise<FlowState | undefined>;
}
