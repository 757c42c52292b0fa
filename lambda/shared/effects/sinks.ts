import { EventBridgeClient, PutEventsCommand, PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { EffectEvent, Env } from '../../../lib/contract';
import { Effect, entrySize, EVENTBRIDGE_MAX_ENTRY_BYTES } from './assembler';
import { EffectDispatchError } from '../runtime/errors';

/** How the dispatch of one effect ended. */
export type DispatchOutcome = { readonly ok: true } | { readonly ok: false; readonly error: Error };

/**
 * Where effects go. `dispatch` sends a batch (the effects of one SQS batch) and answers one
 * outcome per effect, in order: a failure of one effect fails only its own row.
 */
export interface EffectSink {
  dispatch(effects: readonly Effect[]): Promise<DispatchOutcome[]>;
}

/** One event for the bus: its detail type and its detail as JSON (an effect is one). */
export type BusEntry = Pick<Effect, 'detailJson'> & { readonly detailType: string };

/** Where events that are not a row's effect go (the reconciler's `ResourceUnavailable`): the inbox's bus. */
export interface BusSink {
  dispatch(entries: readonly BusEntry[]): Promise<DispatchOutcome[]>;
}

export const OK: DispatchOutcome = { ok: true };
export const failed = (error: unknown): DispatchOutcome => ({ ok: false, error: error instanceof Error ? error : new EffectDispatchError(String(error)) });

/** PutEvents takes at most 10 entries per call. */
export const PUT_EVENTS_MAX_ENTRIES = 10;

/**
 * Effects as EventBridge events on one bus. The effects of a batch go out together, at most 10
 * entries and 256 KB per PutEvents call. An entry EventBridge did not accept (`FailedEntryCount`,
 * an entry with an `ErrorCode` or without an `EventId`) fails its row, which is retried with the
 * same effect key; a failed call fails every row in it.
 */
export class EventBridgeSink implements EffectSink, BusSink {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async dispatch(effects: readonly BusEntry[]): Promise<DispatchOutcome[]> {
    const outcomes: DispatchOutcome[] = new Array<DispatchOutcome>(effects.length);
    await Promise.all(
      putEventsChunks(effects).map(async (chunk) => {
        try {
          const out = await this.client.send(new PutEventsCommand({ Entries: chunk.map((index) => this.entry(effects[index])) }));
          const entries = out.Entries ?? [];
          const failedCount = out.FailedEntryCount ?? 0;
          chunk.forEach((index, position) => {
            const entry = entries[position];
            if (entries.length !== chunk.length) {
              outcomes[index] = failed(new EffectDispatchError(`PutEvents answered ${entries.length} entries for ${chunk.length} (${failedCount} failed)`));
            } else if (entry.ErrorCode || !entry.EventId) {
              outcomes[index] = failed(new EffectDispatchError(`PutEvents entry failed: ${entry.ErrorCode ?? 'no event id'}`));
            } else {
              outcomes[index] = OK;
            }
          });
        } catch (error) {
          for (const index of chunk) outcomes[index] = failed(error);
        }
      }),
    );
    return outcomes;
  }

  private entry(effect: BusEntry): PutEventsRequestEntry {
    return { EventBusName: this.busName, Source: EffectEvent.SOURCE, DetailType: effect.detailType, Detail: effect.detailJson };
  }
}

/** Indexes of the effects grouped into PutEvents calls: at most 10 entries and 256 KB each. */
export function putEventsChunks(effects: readonly BusEntry[]): number[][] {
  const chunks: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  effects.forEach((effect, index) => {
    const size = entrySize(effect);
    if (current.length > 0 && (current.length === PUT_EVENTS_MAX_ENTRIES || bytes + size > EVENTBRIDGE_MAX_ENTRY_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(index);
    bytes += size;
  });
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * Several sinks in order: an effect goes to the next sink only once the previous one accepted
 * it, and succeeds only when every sink accepted it (the user's function first, then the bus,
 * so that a failing function does not publish events on every retry).
 */
export class SequentialSinks implements EffectSink {
  constructor(private readonly sinks: readonly EffectSink[]) {}

  async dispatch(effects: readonly Effect[]): Promise<DispatchOutcome[]> {
    const outcomes: DispatchOutcome[] = effects.map(() => OK);
    for (const sink of this.sinks) {
      const pending = outcomes.flatMap((outcome, index) => (outcome.ok ? [index] : []));
      if (pending.length === 0) break;
      const results = await sink.dispatch(pending.map((index) => effects[index]));
      pending.forEach((index, position) => (outcomes[index] = results[position]));
    }
    return outcomes;
  }
}

/** The inbox's bus, when the construct configured one (the reconciler's events). */
export function busSinkFromEnv(env: Record<string, string | undefined>, client?: EventBridgeClient): EventBridgeSink | undefined {
  const busName = env[Env.EFFECT_BUS_NAME];
  return busName ? new EventBridgeSink(client ?? new EventBridgeClient({}), busName) : undefined;
}
