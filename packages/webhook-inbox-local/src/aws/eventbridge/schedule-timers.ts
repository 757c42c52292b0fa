/**
 * How EventBridge runs a scheduled rule, for the local twin: at each occurrence of its schedule,
 * on the twin's clock (which may run faster than real time), whether or not the last run ended.
 */
import type { Schedule } from './schedule-expression';

/** The longest delay a Node.js timer takes as given. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The clock schedules run on: local time may run faster than real time. */
export interface ScheduleClock {
  /** How many times faster than real time it runs. */
  readonly scale: number;
  /** Now, in the stack's (possibly compressed) time. */
  now(): number;
  /** A real instant (epoch milliseconds) in the stack's time. */
  at(realMs: number): number;
  /** Real milliseconds until `at` in the stack's time. */
  realDelayUntil(at: number): number;
}

/** The timers of a stack's scheduled rules, on the twin's clock. */
export class ScheduleTimers {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly clock: ScheduleClock) {}

  /**
   * Runs `run` at each occurrence of `schedule`. The next occurrence is armed before this one runs:
   * EventBridge fires on time whether or not the last run ended. A cron schedule whose last
   * occurrence has passed never fires again.
   */
  arm(schedule: Pick<Schedule, 'nextAfter'>, run: () => Promise<void>): void {
    const next = schedule.nextAfter(this.clock.now());
    if (Number.isFinite(next))
      this.waitUntil(next, () => {
        this.arm(schedule, run);
        void run();
      });
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
  }

  private waitUntil(at: number, then: () => void): void {
    if (this.stopped) return;
    // Node fires a timer beyond its 32-bit limit at once: a long wait is taken in steps.
    const delay = this.clock.realDelayUntil(at);
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        if (delay > MAX_TIMER_MS) this.waitUntil(at, then);
        else then();
      },
      Math.min(delay, MAX_TIMER_MS),
    );
    this.timers.add(timer);
  }
}
