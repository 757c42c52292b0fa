import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BreakerState, BreakerStateName, FlowAttr as F } from '../../../../lib/contract';

/** The flow-control item as one read found it (docs/FLOW-CONTROL.md); absent item: running, breaker closed. */
export interface FlowState {
  /** When an operator paused the inbox (epoch ms); undefined while it runs. */
  readonly pausedAt?: number;
  readonly pausedBy?: string;
  readonly breaker: BreakerStateName;
  readonly openedAt?: number;
  readonly openReason?: string;
  readonly openings: number;
  readonly closedAt?: number;
  /** The probe in flight, if any, and when its lease runs out. */
  readonly probeOwner?: string;
  readonly probeUntil?: number;
  readonly probeSuccesses: number;
}

/** What an inbox that never paused nor opened its breaker has. */
export const RUNNING: FlowState = { breaker: BreakerState.CLOSED, openings: 0, probeSuccesses: 0 };

const BREAKER_STATES: ReadonlySet<string> = new Set(Object.values(BreakerState));

/** The state an item holds; an unknown breaker value (written by a later version) reads as open, the side that loses nothing. */
export function flowStateOf(item: Record<string, AttributeValue> | undefined): FlowState {
  if (!item) return RUNNING;
  const number = (name: string) => (item[name]?.N === undefined ? undefined : Number(item[name].N));
  const text = (name: string) => item[name]?.S;
  const breaker = text(F.BREAKER) ?? BreakerState.CLOSED;
  return {
    ...optional('pausedAt', number(F.PAUSED_AT)),
    ...optional('pausedBy', text(F.PAUSED_BY)),
    breaker: (BREAKER_STATES.has(breaker) ? breaker : BreakerState.OPEN) as BreakerStateName,
    ...optional('openedAt', number(F.OPENED_AT)),
    ...optional('openReason', text(F.OPEN_REASON)),
    openings: number(F.OPENINGS) ?? 0,
    ...optional('closedAt', number(F.CLOSED_AT)),
    ...optional('probeOwner', text(F.PROBE_OWNER)),
    ...optional('probeUntil', number(F.PROBE_UNTIL)),
    probeSuccesses: number(F.PROBE_SUCCESSES) ?? 0,
  };
}

function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

/** Whether processing is held back: paused, or the breaker not closed. */
export function isHeld(state: FlowState): boolean {
  return state.pausedAt !== undefined || state.breaker !== BreakerState.CLOSED;
}
