/**
 * The plan's clock for a fault-injection run: plan time advances with the wall clock, except while
 * the twin is behind (`behind()`), when it stands still. New work then waits instead of piling up a
 * backlog the machine cannot absorb, and what the plan puts side by side (a burst of results and an
 * outage) stays side by side, however fast the machine is. Durations inside an action (an outage's
 * length, a task's run) are real time.
 */
import { sleep } from '../providers/sender';

export class Timeline {
  /** How far the plan has got, ms. */
  planMs = 0;
  private readonly actions: Array<{ readonly at: number; readonly run: () => Promise<unknown> | unknown }> = [];
  private stopped = false;

  constructor(
    private readonly behind: () => boolean,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs `action` when the plan reaches `ms`; actions due at the same time start in the order given. */
  at(ms: number, action: () => Promise<unknown> | unknown): void {
    this.actions.push({ at: ms, run: action });
  }

  /** Starts every action at its plan time; resolves once all have started and finished. */
  async run(): Promise<void> {
    const started: Promise<void>[] = [];
    let last = Date.now();
    for (const action of [...this.actions].sort((a, b) => a.at - b.at)) {
      while (this.planMs < action.at && !this.stopped) {
        await sleep(Math.min(20, action.at - this.planMs));
        const now = Date.now();
        if (!this.behind()) this.planMs += now - last;
        last = now;
      }
      if (this.stopped) break;
      started.push(
        Promise.resolve()
          .then(action.run)
          .then(() => undefined, this.onError),
      );
    }
    await Promise.all(started);
  }

  /** Starts nothing more. */
  stop(): void {
    this.stopped = true;
  }
}
