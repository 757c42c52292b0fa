import { BATCH_CHILD_STATES, EffectEvent, MESSAGE_BATCH_CUSTOM_ID_PATTERN, ProviderRuntimeConfig } from '../../../../lib/contract';
import { buildAdapter, compositeEventId, idProblem, parseJsonObject, ProviderAdapter, utf8Key } from '../adapter';

/**
 * The bodies the reconciler feeds into the inbox for a polled batch (a batch API sends no
 * webhooks): one per request of the batch (`message_batch.result`: the batch id, the request's
 * `custom_id` and the provider's `result` as listed), and one summary once every result was
 * recorded (`message_batch.settled`).
 */
export const BatchBodyType = {
  CHILD: 'message_batch.result',
  SUMMARY: 'message_batch.settled',
} as const;

/** The event id of one request's result: `<batchId>:<customId>`, each escaped. */
export function batchChildEventId(batchId: string, customId: string): string {
  return compositeEventId(batchId, customId);
}

/** The event id of a batch's summary: `<batchId>:~batch` (no custom id holds a `~`). */
export function batchSummaryEventId(batchId: string): string {
  return compositeEventId(batchId, '~batch');
}

/** One request's result, as the reconciler stores it. */
export interface BatchChildBody {
  readonly type: typeof BatchBodyType.CHILD;
  readonly batch_id: string;
  readonly custom_id: string;
  /** The provider's result object: `{ "type": "succeeded" | "errored" | "canceled" | "expired", … }`. */
  readonly result: unknown;
}

/** A settled batch, as the reconciler stores it. */
export interface BatchSummaryBody {
  readonly type: typeof BatchBodyType.SUMMARY;
  readonly batch_id: string;
  /** `succeeded`, `partial` or `failed` (a `BatchOutcome`). */
  readonly outcome: string;
  /** The requests the app recorded. */
  readonly children: number;
  /** Results recorded, per terminal state. */
  readonly counts: Readonly<Record<string, number>>;
  /** Recorded requests the results never named. */
  readonly missing: number;
  /** Results that named no recorded request (not stored). */
  readonly unexpected: number;
  /** The provider's batch object at its last poll (its `request_counts`, `ended_at`, `expires_at`, …). */
  readonly batch: unknown;
}

type Parsed =
  | { kind: 'child'; batchId: string; customId: string; state: string }
  | { kind: 'summary'; batchId: string; outcome: string }
  | { kind: 'malformed'; detail: string };

function parse(body: Buffer): Parsed {
  const parsed = parseJsonObject(body);
  if (!parsed) return { kind: 'malformed', detail: 'body is not a JSON object' };
  const batchProblem = idProblem(parsed.batch_id);
  if (batchProblem !== undefined) return { kind: 'malformed', detail: `batch_id ${batchProblem}` };
  const batchId = parsed.batch_id as string;
  if (parsed.type === BatchBodyType.SUMMARY) {
    return typeof parsed.outcome === 'string' ? { kind: 'summary', batchId, outcome: parsed.outcome } : { kind: 'malformed', detail: 'outcome is missing' };
  }
  if (parsed.type !== BatchBodyType.CHILD) return { kind: 'malformed', detail: 'type is not a batch result or summary' };
  if (typeof parsed.custom_id !== 'string' || !MESSAGE_BATCH_CUSTOM_ID_PATTERN.test(parsed.custom_id)) {
    return { kind: 'malformed', detail: 'custom_id must be 1 to 64 letters, digits, _ or -' };
  }
  const state = (parsed.result as { type?: unknown } | null)?.type;
  if (typeof state !== 'string' || !BATCH_CHILD_STATES.includes(state)) return { kind: 'malformed', detail: 'result.type is not a terminal state' };
  return { kind: 'child', batchId, customId: parsed.custom_id, state };
}

/**
 * A batch API (Anthropic Message Batches): it sends no webhooks, so the inbox has no route for it
 * and the verifier serves none (a request that reached this adapter anyway is refused); its rows are fed by the reconciler only, one per request of a batch and one
 * summary per batch, and each causes its own effect (`BatchChildSettled`, `BatchSettled`).
 */
export function messageBatchesAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: () => ({ ok: false, reason: 'bad_signature', detail: 'this provider sends no deliveries: its batches are polled' }),
    admit: (_headers, body) => {
      const parsed = parse(body);
      if (parsed.kind === 'malformed') return parsed;
      return { kind: 'event', eventId: parsed.kind === 'child' ? batchChildEventId(parsed.batchId, parsed.customId) : batchSummaryEventId(parsed.batchId) };
    },
    keptHeaders: [],
    effectOf: (body) => {
      const parsed = parse(body);
      if (parsed.kind === 'child') {
        return {
          detailType: EffectEvent.BATCH_CHILD_SETTLED,
          keyFields: [parsed.batchId, parsed.customId],
          fields: { batchId: parsed.batchId, customId: parsed.customId, childState: parsed.state },
        };
      }
      if (parsed.kind === 'summary') {
        return { detailType: EffectEvent.BATCH_SETTLED, keyFields: [parsed.batchId], fields: { batchId: parsed.batchId, batchOutcome: parsed.outcome } };
      }
      return undefined;
    },
  });
}
