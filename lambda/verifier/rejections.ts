import { createHmac, randomUUID } from 'node:crypto';
import { Limits, MetricName } from '../../lib/contract';
import { sha256Hex } from '../shared/runtime/digest';
import { safeErrorFields } from '../shared/runtime/errors';
import { InboundRequest } from '../shared/runtime/http';
import { Telemetry } from '../shared/runtime/telemetry';
import { CallOptions, RejectionRecord, RejectionStore } from '../shared/stores/rejection-store';

/** How many records refused requests leave, and for how long. */
export interface RejectionPolicy {
  /** Records a minute per provider, across every verifier instance; 0: none. */
  readonly perMinute: number;
  /** Percent of refused requests considered for a record. */
  readonly samplePercent: number;
  readonly retentionSeconds: number;
  /** How long a minute's counter is kept after its minute. */
  readonly counterTtlSeconds: number;
  /** The most the record may add to the answer; its calls are aborted after it. */
  readonly budgetMs: number;
}

/** One refused request, as the verifier saw it and answered it. */
export interface Rejection {
  readonly provider: string;
  readonly reason: string;
  readonly httpStatus: number;
  readonly request: InboundRequest;
}

const MINUTE_MS = 60_000;

/** The request's header names, lower case, sorted, de-duplicated and bounded; never a value. */
export function headerNamesOf(headers: InboundRequest['headers']): { names: string[]; truncated: boolean } {
  const all = [...new Set(Object.keys(headers).map((name) => name.toLowerCase().slice(0, Limits.REJECTION_HEADER_NAME_CHARS)))].sort();
  return { names: all.slice(0, Limits.REJECTION_HEADER_NAMES), truncated: all.length > Limits.REJECTION_HEADER_NAMES };
}

/** `hmac-sha256:<hex>` of an address under the inbox's key: comparable between records, not reversible without the key. */
export function sourceHashOf(key: Buffer, sourceIp: string): string {
  return `hmac-sha256:${createHmac('sha256', key).update(sourceIp, 'utf8').digest('hex')}`;
}

/** The record of a refused request: what and why, never its content. */
export function rejectionRecordOf(rejection: Rejection, receivedAt: number, retentionSeconds: number, hashKey: Buffer | undefined): RejectionRecord {
  const { request } = rejection;
  const { names, truncated } = headerNamesOf(request.headers);
  return {
    provider: rejection.provider,
    reason: rejection.reason,
    httpStatus: rejection.httpStatus,
    receivedAt,
    requestId: request.requestId || randomUUID(),
    ...(hashKey ? { sourceHash: sourceHashOf(hashKey, request.sourceIp) } : {}),
    headerNames: names,
    headerNamesTruncated: truncated,
    bodyBytes: request.body.length,
    digest: sha256Hex(request.body),
    expiresAt: Math.floor(receivedAt / 1000) + retentionSeconds,
  };
}

/**
 * Leaves a bounded trace of requests refused at the authenticity check: sampled, then at most
 * `perMinute` records a minute per provider, counted in one conditional counter item per provider
 * and minute that every verifier instance shares. Once an instance finds a minute full it makes
 * no further call for that provider until the next minute. Every other refusal is counted
 * (`RejectionSuppressed`); a failed or slow write is counted (`RejectionRecordFailed`), never
 * thrown: the answer the provider gets is decided before and never changes.
 */
export class RejectionRecorder {
  /** Per provider, the minute (its start, epoch ms) this instance found full. */
  private readonly fullMinute = new Map<string, number>();
  private hashKey?: Buffer;

  constructor(
    private readonly store: RejectionStore,
    private readonly policy: RejectionPolicy,
    private readonly telemetry: Telemetry,
    private readonly now: () => number,
    private readonly random: () => number = Math.random,
  ) {}

  async record(rejection: Rejection): Promise<void> {
    const { provider } = rejection;
    const receivedAt = this.now();
    const minute = Math.floor(receivedAt / MINUTE_MS) * MINUTE_MS;
    if (this.policy.perMinute === 0) return;
    if (this.fullMinute.get(provider) === minute || this.random() * 100 >= this.policy.samplePercent) {
      this.telemetry.count(MetricName.REJECTION_SUPPRESSED, provider);
      return;
    }
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.policy.budgetMs);
    const options: CallOptions = { abortSignal: abort.signal };
    try {
      const counterExpiry = Math.floor((minute + MINUTE_MS) / 1000) + this.policy.counterTtlSeconds;
      if (!(await this.store.takeSlot(provider, minute, this.policy.perMinute, counterExpiry, options))) {
        this.fullMinute.set(provider, minute);
        this.telemetry.count(MetricName.REJECTION_SUPPRESSED, provider);
        return;
      }
      await this.store.put(rejectionRecordOf(rejection, receivedAt, this.policy.retentionSeconds, await this.key(options)), options);
      this.telemetry.count(MetricName.REJECTION_RECORDED, provider);
    } catch (error) {
      this.telemetry.count(MetricName.REJECTION_RECORD_FAILED, provider);
      this.telemetry.log('WARN', 'rejection record failed', { provider, ...safeErrorFields(error) });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The source-hash key, read once per instance; a record without a source hash when it cannot be read. */
  private async key(options: CallOptions): Promise<Buffer | undefined> {
    if (this.hashKey) return this.hashKey;
    try {
      this.hashKey = await this.store.sourceHashKey(options);
      return this.hashKey;
    } catch (error) {
      if (options.abortSignal?.aborted) throw error;
      this.telemetry.log('WARN', 'source-hash key unavailable', safeErrorFields(error));
      return undefined;
    }
  }
}
