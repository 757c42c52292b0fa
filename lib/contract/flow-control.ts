/**
 * Flow control (docs/FLOW-CONTROL.md): the item that says whether the inbox is paused and where
 * its circuit breaker is, the breaker's settings the processor reads, and their defaults.
 */

/**
 * The flow-control item of the inbox table (`pk` `flow:control`, `sk` `state`). No delivery row's
 * key can be it (provider names hold no `:`), nor the sweep's watermark (`sweep:pending`). It has
 * no TTL: absent, the inbox runs and the breaker is closed.
 */
export const FlowControlKey = {
  PARTITION: 'flow:control',
  SORT: 'state',
} as const;

/** Attribute names of the flow-control item. */
export const FlowAttr = {
  /** When an operator paused the inbox (epoch ms); absent while it runs. */
  PAUSED_AT: 'pausedAt',
  /** Who paused it, as the ops CLI tells (the caller's identity ARN, or `console`). */
  PAUSED_BY: 'pausedBy',
  /** A `BreakerState`; absent: CLOSED. */
  BREAKER: 'breaker',
  /** When the breaker last opened (epoch ms): the cool-down runs from here. */
  OPENED_AT: 'openedAt',
  /** Why it last opened: `<failures> of <rows> rows failed downstream in <seconds> s`, or a failed probe's reason. */
  OPEN_REASON: 'openReason',
  /** How many times the breaker opened since the item was written. */
  OPENINGS: 'openings',
  /** When it last closed (epoch ms). */
  CLOSED_AT: 'closedAt',
  /** The probe in flight: its owner, and when its lease runs out (epoch ms). */
  PROBE_OWNER: 'probeOwner',
  PROBE_UNTIL: 'probeUntil',
  /** Probes that succeeded since the breaker last opened. */
  PROBE_SUCCESSES: 'probeSuccesses',
} as const;

/** The circuit breaker's states. */
export const BreakerState = {
  /** Processing as configured. */
  CLOSED: 'CLOSED',
  /** Every message deferred until the cool-down has passed. */
  OPEN: 'OPEN',
  /** One probe at a time; the rest deferred. */
  HALF_OPEN: 'HALF_OPEN',
} as const;

export type BreakerStateName = (typeof BreakerState)[keyof typeof BreakerState];

/** The breaker's settings, as the processor reads them (JSON in `Env.BREAKER`; unset: no breaker). */
export interface BreakerRuntimeConfig {
  /** Share of the window's rows that failed downstream at which it opens, percent. */
  readonly failureThresholdPercent: number;
  /** Rows the window must hold before it may open. */
  readonly minimumRows: number;
  /** How far back one execution environment's window reaches, seconds. */
  readonly windowSeconds: number;
  /** How long it stays open before the first probe, seconds. */
  readonly coolDownSeconds: number;
  /** Probes that must succeed for it to close. */
  readonly probesToClose: number;
}

/** The breaker's defaults and the ranges the construct accepts. */
export const BreakerDefaults: BreakerRuntimeConfig = {
  failureThresholdPercent: 50,
  minimumRows: 10,
  windowSeconds: 60,
  coolDownSeconds: 60,
  probesToClose: 3,
};

export const BreakerLimits = {
  FAILURE_THRESHOLD_PERCENT: { MIN: 1, MAX: 100 },
  MINIMUM_ROWS: { MIN: 1, MAX: 10_000 },
  WINDOW_SECONDS: { MIN: 10, MAX: 3600 },
  COOL_DOWN_SECONDS: { MIN: 1, MAX: 3600 },
  PROBES_TO_CLOSE: { MIN: 1, MAX: 100 },
} as const;

/**
 * What is wrong with breaker settings, each problem after the setting's name; empty when they are
 * usable. Checked at synth (naming the prop) and at cold start.
 */
export function breakerProblems(config: Partial<Record<keyof BreakerRuntimeConfig, unknown>>): string[] {
  const ranges: [keyof BreakerRuntimeConfig, { MIN: number; MAX: number }][] = [
    ['failureThresholdPercent', BreakerLimits.FAILURE_THRESHOLD_PERCENT],
    ['minimumRows', BreakerLimits.MINIMUM_ROWS],
    ['windowSeconds', BreakerLimits.WINDOW_SECONDS],
    ['coolDownSeconds', BreakerLimits.COOL_DOWN_SECONDS],
    ['probesToClose', BreakerLimits.PROBES_TO_CLOSE],
  ];
  return ranges.flatMap(([name, { MIN, MAX }]) => {
    const value = config[name];
    return typeof value === 'number' && Number.isInteger(value) && value >= MIN && value <= MAX
      ? []
      : [`${name} must be a whole number from ${MIN} to ${MAX}, got ${String(value)}`];
  });
}

/**
 * How long a processor trusts the flow-control item it read: a pause, a resume or another
 * environment's opening reaches every processor within this, and `resume` waits it out before it
 * enqueues the waiting rows.
 */
export const FLOW_STATE_CACHE_MS = 5_000;

/** Why the processor deferred a message (the `Deferred` log line's `reason`). */
export const DeferReason = {
  PAUSED: 'paused',
  BREAKER_OPEN: 'breaker_open',
  /** Another invocation holds the breaker's probe. */
  PROBE_ELSEWHERE: 'probe_elsewhere',
  /** This invocation's probe took the first row of its batch. */
  NOT_THE_PROBE: 'not_the_probe',
} as const;
