import { Duration } from 'aws-cdk-lib';

/**
 * The circuit breaker on processing (docs/FLOW-CONTROL.md#the-circuit-breaker): when processing
 * fails downstream (the effect targets, the processing function, the authoritative read) at a rate
 * above the threshold, the inbox stops spending attempts, probes one row at a time after the
 * cool-down, and resumes when the probes succeed.
 */
export interface CircuitBreakerOptions {
  /**
   * Whether the breaker is on; `false` leaves only pause and resume.
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * Share of the rows one processor environment processed within `window` that failed downstream at which the breaker opens (1 to 100 percent).
   * @default 50
   */
  readonly failureThresholdPercent?: number;

  /**
   * Rows one processor environment must have processed within `window` before the breaker may open, so a few poison rows alone never open it (1 to 10,000).
   * @default 10
   */
  readonly minimumRows?: number;

  /**
   * How far back a processor environment's count of outcomes reaches (10 seconds to 1 hour, whole seconds).
   * @default Duration.minutes(1)
   */
  readonly window?: Duration;

  /**
   * How long the breaker stays open before the first probe (1 second to 1 hour, whole seconds).
   * @default Duration.minutes(1)
   */
  readonly coolDown?: Duration;

  /**
   * Probes (one row each, one at a time) that must succeed for the breaker to close (1 to 100).
   * @default 3
   */
  readonly probesToClose?: number;
}
