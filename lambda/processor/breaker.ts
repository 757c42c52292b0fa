import type { BreakerRuntimeConfig } from '../../lib/contract';

/** What one execution environment's window holds: rows processed, and how many failed downstream. */
export interface Tally {
  readonly rows: number;
  readonly failures: number;
}

/**
 * The outcomes of the rows one execution environment processed within the last `windowMs`
 * (docs/FLOW-CONTROL.md#the-circuit-breaker): a batch's outcomes are one entry. Kept per
 * environment, since a shared count would cost a write per row.
 */
export class OutcomeWindow {
  private entries: { readonly at: number; readonly rows: number; readonly failures: number }[] = [];

  constructor(private readonly windowMs: number) {}

  add(at: number, rows: number, failures: number): void {
    if (rows > 0) this.entries.push({ at, rows, failures });
  }

  tally(now: number): Tally {
    this.entries = this.entries.filter((entry) => entry.at > now - this.windowMs);
    return this.entries.reduce((sum, entry) => ({ rows: sum.rows + entry.rows, failures: sum.failures + entry.failures }), { rows: 0, failures: 0 });
  }

  /** Forgets every outcome: the breaker opened on them, or is no longer closed. */
  clear(): void {
    this.entries = [];
  }
}

/** Whether the window's rows say the downstream is down: enough of them, and enough of those failed. */
export function overThreshold(tally: Tally, config: BreakerRuntimeConfig): boolean {
  return tally.rows >= config.minimumRows && tally.failures * 100 >= tally.rows * config.failureThresholdPercent;
}

/** The reason an opening records: counts and times only. */
export function openReason(tally: Tally, config: BreakerRuntimeConfig): string {
  return `${tally.failures} of ${tally.rows} rows failed downstream within ${config.windowSeconds} s (threshold ${config.failureThresholdPercent} %)`;
}
