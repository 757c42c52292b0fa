import { Defaults, EffectDetail, EffectEvent, Limits } from '../../../lib/contract';
import { EventEffect, JobObservation } from '../providers/adapter';
import { BodyStore, bodyObjectKey, resourceObjectKey, responseObjectKey } from '../stores/body-store';
import { sha256Hex } from '../runtime/digest';
import { ConfigurationError } from '../runtime/errors';
import { nestsDeeperThan } from '../runtime/json-depth';
import { StoredDelivery } from '../stores/inbox';
import { winnerOrder } from '../winner-order';

/**
 * Effects: what the processor sends downstream once a row is decided, at most one per row.
 *
 * The outbox is the inbox row itself. The processor claims a row, observes it, decides (the
 * results offer), dispatches the effect, and only then completes the row. A crash anywhere
 * before completion leaves the row unprocessed; its lease expires, the message comes back (or
 * the reconciler's sweep enqueues it again), and the retry derives the same effect with the same
 * key and sends it. So an effect is sent at least once per intent, and every copy carries one
 * deterministic `effectKey`: consumers deduplicate by it (a crash after sending but before
 * completing the row repeats the same key, never a new one).
 */

/** One effect: its deterministic key, its detail type and its detail (serialized once). */
export interface Effect {
  readonly key: string;
  readonly detailType: (typeof EffectEvent)['JOB_RESULT_DECIDED' | 'WEBHOOK_RECEIVED' | 'BATCH_CHILD_SETTLED' | 'BATCH_SETTLED'];
  readonly detail: EffectDetail;
  /** `detail` as JSON: what is sent, and what its size is measured on. */
  readonly detailJson: string;
}

/** The detail of an effect event: part of the contract (`lib/contract/effects.ts`), exported by the package. */
export type { EffectDetail };

/**
 * The key of a job's winner: inbox, provider, job, winning task and status. The inbox is part of
 * every key, so two inboxes with a provider of the same name can share one bus and one consumer.
 */
export function jobEffectKey(inbox: string, provider: string, observation: Pick<JobObservation, 'jobKey' | 'taskId' | 'status'>): string {
  return sha256Hex(JSON.stringify([EffectEvent.JOB_RESULT_DECIDED, inbox, provider, observation.jobKey, observation.taskId, observation.status]));
}

/** The key of one event of a provider without job semantics: inbox, provider and stable event id. */
export function eventEffectKey(inbox: string, provider: string, eventId: string): string {
  return sha256Hex(JSON.stringify([EffectEvent.WEBHOOK_RECEIVED, inbox, provider, eventId]));
}

/**
 * The key of an event of its own kind (a batch's request: inbox, provider, batch, custom id; a
 * batch's summary: inbox, provider, batch): its detail type first, so no two kinds share a key.
 */
export function kindEffectKey(inbox: string, provider: string, event: Pick<EventEffect, 'detailType' | 'keyFields'>): string {
  return sha256Hex(JSON.stringify([event.detailType, inbox, provider, ...event.keyFields]));
}

/** EventBridge's limit on one PutEvents entry, and on a whole PutEvents request. */
export const EVENTBRIDGE_MAX_ENTRY_BYTES = 256 * 1024;

/**
 * The size EventBridge counts for an entry: Source, DetailType and Detail as UTF-8 (and Time and
 * Resources, which effects do not set).
 */
export function entrySize(effect: { readonly detailType: string; readonly detailJson: string }): number {
  return Buffer.byteLength(EffectEvent.SOURCE) + Buffer.byteLength(effect.detailType) + Buffer.byteLength(effect.detailJson);
}

/** A piece of content that may travel inline or by reference. */
export interface EffectContent {
  readonly text: string;
  /** A body-store key that already holds exactly these bytes. */
  readonly ref?: string;
  /** Where the bytes go in the body store when they must travel by reference and have no ref. */
  readonly objectKey: string;
}

type ContentName = 'response' | 'payload' | 'resource';

/** What the processor knows about a decided row; the assembler turns it into an effect. */
export interface EffectSpec {
  readonly row: StoredDelivery;
  /** Set for a job's winner; absent for an event of a provider without job semantics. */
  readonly observation?: JobObservation;
  /** Set for an event of its own kind (a batch's request or summary); absent: a `WebhookReceived`. */
  readonly event?: EventEffect;
  /** A job's winner: the results table's version of the job after the decision. */
  readonly resultVersion?: number;
  readonly content: Partial<Record<ContentName, EffectContent>>;
  /** The authoritative read found the resource gone after the decision was taken. */
  readonly resourceUnavailable?: boolean;
}

export interface EffectAssemblerOptions {
  readonly inboxName: string;
  /** Where large content goes; without it, content too large to travel inline is an error. */
  readonly bodies?: BodyStore;
  /** The bucket behind `bodies`, named in the detail so that consumers can fetch a `*Ref`. */
  readonly bodyBucket?: string;
  /** Content larger than this travels by reference (default: Defaults.EFFECT_INLINE_BYTES). */
  readonly inlineBytes?: number;
  /** The largest entry allowed (default: EventBridge's limit). */
  readonly maxEntryBytes?: number;
}

/** Builds effects from decided rows, placing each piece of content inline or by reference. */
export class EffectAssembler {
  private readonly inlineBytes: number;
  private readonly maxEntryBytes: number;

  constructor(private readonly options: EffectAssemblerOptions) {
    this.inlineBytes = options.inlineBytes ?? Defaults.EFFECT_INLINE_BYTES;
    this.maxEntryBytes = options.maxEntryBytes ?? EVENTBRIDGE_MAX_ENTRY_BYTES;
  }

  async assemble({ row, observation, event, resultVersion, content, resourceUnavailable }: EffectSpec): Promise<Effect> {
    const detailType = observation ? EffectEvent.JOB_RESULT_DECIDED : (event?.detailType ?? EffectEvent.WEBHOOK_RECEIVED);
    const { inboxName } = this.options;
    const base: EffectDetail = {
      schemaVersion: 1,
      inbox: inboxName,
      provider: row.provider,
      effectKey: observation
        ? jobEffectKey(inboxName, row.provider, observation)
        : event
          ? kindEffectKey(inboxName, row.provider, event)
          : eventEffectKey(inboxName, row.provider, row.eventId),
      eventKey: row.key,
      eventId: row.eventId,
      receivedAt: new Date(row.receivedAt).toISOString(),
      recovered: row.recovered,
      meta: row.meta,
      ...(observation
        ? {
            jobKey: observation.jobKey,
            ...(resultVersion !== undefined ? { resultVersion } : {}),
            winnerOrder: winnerOrder(observation),
            taskId: observation.taskId,
            status: observation.status,
            createdAt: observation.createdAt,
          }
        : {}),
      ...(!observation && event ? event.fields : {}),
      ...(resourceUnavailable ? { resourceUnavailable } : {}),
    };
    const names = (Object.keys(content) as ContentName[]).filter((name) => content[name] !== undefined);
    // Each piece inline when small; the rest by reference.
    const byRef = new Set(names.filter((name) => Buffer.byteLength(content[name]!.text) > this.inlineBytes));
    for (;;) {
      const detail = await this.detail(base, content, names, byRef);
      const effect: Effect = { key: base.effectKey, detailType, detail, detailJson: JSON.stringify(detail) };
      if (entrySize(effect) <= this.maxEntryBytes) return effect;
      // Still too large (a generous inline limit): the largest inline piece goes by reference.
      const largest = names.filter((name) => !byRef.has(name)).sort((a, b) => Buffer.byteLength(content[b]!.text) - Buffer.byteLength(content[a]!.text))[0];
      if (!largest) throw new ConfigurationError(`the ${detailType} effect exceeds ${this.maxEntryBytes} bytes without its content`);
      byRef.add(largest);
    }
  }

  private async detail(base: EffectDetail, content: EffectSpec['content'], names: ContentName[], byRef: ReadonlySet<ContentName>): Promise<EffectDetail> {
    const placed: Record<string, unknown> = {};
    for (const name of names) {
      const piece = content[name]!;
      if (byRef.has(name)) placed[`${name}Ref`] = await this.reference(piece);
      else placed[name] = parsedOrText(piece.text);
    }
    return { ...base, ...placed, ...(byRef.size > 0 && this.options.bodyBucket ? { bodyBucket: this.options.bodyBucket } : {}) };
  }

  private async reference(piece: EffectContent): Promise<string> {
    if (piece.ref !== undefined) return piece.ref;
    if (!this.options.bodies) throw new ConfigurationError("an effect's content is too large to send inline, and no body bucket is configured");
    // Keyed by digest: a retry writes the same bytes to the same key.
    return this.options.bodies.put(piece.objectKey, Buffer.from(piece.text, 'utf8'));
  }
}

/** The content pieces of a row's effect: the response (job winner) or the payload (event), and the resource. */
export function effectContent(
  row: StoredDelivery,
  body: Buffer,
  observation: JobObservation | undefined,
  responseRef: string | undefined,
  resource: string | undefined,
): EffectSpec['content'] {
  const content: Partial<Record<ContentName, EffectContent>> = {};
  if (observation) {
    content.response = { text: observation.response, ref: responseRef, objectKey: responseObjectKey(row.provider, sha256Hex(observation.response)) };
  } else {
    content.payload = { text: body.toString('utf8'), ref: row.bodyRef, objectKey: bodyObjectKey(row.provider, row.digest) };
  }
  if (resource !== undefined) {
    content.resource = { text: resource, objectKey: resourceObjectKey(row.provider, sha256Hex(resource)) };
  }
  return content;
}

/**
 * JSON text as its value; any other text as itself, and so JSON nested deeper than
 * `Limits.MAX_JSON_DEPTH`, which the detail could not be serialized with (a row stored before the
 * edge refused such bodies, a resource the provider's API returned).
 */
function parsedOrText(text: string): unknown {
  if (nestsDeeperThan(text, Limits.MAX_JSON_DEPTH)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * What the user's processing function receives: the shape of an EventBridge event (so one
 * function can serve as a rule's target too), with the effect key in `detail.effectKey`.
 */
export interface EffectInvocation {
  readonly source: typeof EffectEvent.SOURCE;
  readonly 'detail-type': Effect['detailType'];
  /** When the inbox admitted the row (deterministic across retries). */
  readonly time: string;
  readonly detail: EffectDetail;
}

export function invocationOf(effect: Effect): EffectInvocation {
  return { source: EffectEvent.SOURCE, 'detail-type': effect.detailType, time: effect.detail.receivedAt, detail: effect.detail };
}
