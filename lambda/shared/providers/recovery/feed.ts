/**
 * What recovering a provider from its own event log (GitHub's hook deliveries, Stripe's events)
 * shares: the position a run leaves for the next, the outcome of a run, and what a provider's
 * recovery is given to admit what it finds. The reconciler runs it (`lambda/reconciler/recovery.ts`).
 */

/**
 * Where a recovery got to: every entry at or before `at` (epoch ms, the provider's own clock) was
 * handled, and so were the entries in `handled`: those after `at - overlap` a run already handled,
 * so that the next run, which lists again from `at - overlap` (for entries the provider lists
 * late), does not handle them twice.
 */
export interface FeedPosition {
  readonly at: number;
  readonly handled: readonly FeedEntry[];
}

/** What became of one entry a run found. */
export type EntryOutcome =
  /** Admitted as recovered. */
  | 'recovered'
  /** The inbox already held it, or it needs nothing (a test event). */
  | 'held'
  /** Asked the provider to deliver it again (GitHub's redelivery). */
  | 'redelivered'
  /** The provider's record cannot be admitted (counted and logged, skipped: nothing in it is what the endpoint would store). */
  | 'unadmissible';

/** How a run ended. */
export type FeedOutcome =
  /** Everything up to the run's start was handled. */
  | 'complete'
  /** Stopped for lack of time, or because the provider asked to slow down: what was handled is kept, the rest is for the next run. */
  | 'partial'
  | 'rate_limited'
  /** A request failed (network, 5xx, refused credentials); `detail` says how. */
  | 'failed'
  /** The log is gone (a deleted GitHub hook): `gone` names it; it is not asked again while the configuration names it. */
  | 'gone';

export interface FeedRun {
  readonly outcome: FeedOutcome;
  /** The position to save; absent: leave the saved one. */
  readonly position?: FeedPosition;
  readonly counts: Readonly<Record<EntryOutcome, number>>;
  /** Entries the provider no longer keeps, between the saved position and the oldest it still lists (a recovery resumed after its retention). */
  readonly beyondRetention: boolean;
  /** A reason code, never content. */
  readonly detail?: string;
  /** What answered 404, when the outcome is `gone`. */
  readonly gone?: string;
}

/** What a provider's recovery is given for one run. */
export interface FeedContext {
  /** The run's start, epoch ms. */
  readonly now: number;
  /** The saved position; absent before the first run. */
  readonly position?: FeedPosition;
  /** Whether one more request fits in the run's time. */
  hasTime(): boolean;
  /** Admits a body as the provider delivers it (its delivery headers and exact bytes), marked recovered. */
  admit(headers: Readonly<Record<string, string>>, body: Buffer): Promise<EntryOutcome>;
}

/** A provider's recovery from its event log. */
export interface RecoveryFeed {
  /** What a deleted log would be recorded as: a configuration that names another starts afresh. */
  readonly target: string;
  run(context: FeedContext): Promise<FeedRun>;
}

/** An entry of a provider's log, on the provider's clock. */
export interface FeedEntry {
  readonly at: number;
  readonly id: string;
}

/** The most handled entries a position keeps (the item stays small): a larger burst inside the overlap is handled again, harmlessly, by admission. */
const MAX_HANDLED = 1000;

/** Where a run starts listing: `overlapMs` before the saved position, or `initialLookbackMs` before now on the first run. */
export function listingStart(position: FeedPosition | undefined, now: number, overlapMs: number, initialLookbackMs: number): number {
  return position ? position.at - overlapMs : now - initialLookbackMs;
}

/**
 * The position after a run: `entries` (oldest first) were handled up to `handledCount`; the run
 * looked at everything up to `until`. With everything handled the position moves to `until`;
 * otherwise to just before the first entry not handled. It never moves back. The entries handled
 * within the overlap before it are kept (the previous position's too), at most `MAX_HANDLED`.
 */
export function nextPosition(
  previous: FeedPosition | undefined,
  entries: readonly FeedEntry[],
  handledCount: number,
  until: number,
  overlapMs: number,
): FeedPosition {
  const firstUnhandled = entries[handledCount];
  const at = Math.max(previous?.at ?? -Infinity, firstUnhandled ? firstUnhandled.at - 1 : until);
  const seen = new Set<string>();
  const handled = [...(previous?.handled ?? []), ...entries.slice(0, handledCount)].filter((entry) => {
    if (entry.at <= at - overlapMs || seen.has(entry.id)) return false;
    seen.add(entry.id);
    return true;
  });
  return { at, handled: handled.slice(-MAX_HANDLED) };
}

/** Whether a run already handled this entry (it lies in the overlap it lists again). */
export function alreadyHandled(position: FeedPosition | undefined, id: string): boolean {
  return position?.handled.some((entry) => entry.id === id) ?? false;
}

/** Reads a saved position (JSON); undefined when there is none or it is not one (started afresh: admission makes a repeat harmless). */
export function parsePosition(text: string | undefined): FeedPosition | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as FeedPosition;
    if (!Number.isFinite(value.at) || !Array.isArray(value.handled)) return undefined;
    return { at: value.at, handled: value.handled.filter((entry) => typeof entry?.id === 'string' && Number.isFinite(entry.at)) };
  } catch {
    return undefined;
  }
}
