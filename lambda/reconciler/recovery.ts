import { MetricName } from '../../lib/contract';
import { admitDelivery, AdmissionStores } from '../shared/admission';
import { ProviderAdapter } from '../shared/providers/adapter';
import { EntryOutcome, FeedRun, parsePosition, RecoveryFeed } from '../shared/providers/recovery/feed';
import { sha256Hex } from '../shared/runtime/digest';
import { safeErrorFields } from '../shared/runtime/errors';
import { Telemetry } from '../shared/runtime/telemetry';
import { RecoveryCursorStore } from '../shared/stores/recovery-cursor';

/** One provider recovered from its own event log. */
export interface RecoveredProvider {
  readonly provider: string;
  readonly adapter: ProviderAdapter;
  readonly feed: RecoveryFeed;
}

export interface RecoveryDependencies {
  readonly providers: readonly RecoveredProvider[];
  readonly cursors: RecoveryCursorStore;
  /** The longest one request to a provider may take: a run starts one only while this fits. */
  readonly requestTimeoutMs: number;
  /** Where admitted bodies go and how long rows are kept, as for a delivery. */
  readonly storage: Omit<AdmissionStores, 'inbox' | 'queue'>;
}

/** What one run recovered, by provider. */
export interface RecoveryReport {
  readonly provider: string;
  readonly outcome: FeedRun['outcome'] | 'skipped_gone';
  readonly recovered: number;
  readonly held: number;
  readonly redelivered: number;
  readonly unadmissible: number;
  readonly stalledSeconds: number;
  readonly cursorMoved: boolean;
}

/**
 * The recovery step of a reconciler run, provider after provider: the saved cursor is read, the
 * provider's log read from it (`RecoveryFeed`), what the inbox does not hold admitted through the
 * verifier's admission marked recovered, and the cursor moved, with a conditional write, only past
 * what was handled. Two runs at once: one moves the cursor, the other's write is refused and its
 * work is repeated by the next run, where admission finds the rows already there.
 *
 * `RecoveryStalledSeconds` goes out every run: how long since the provider's last complete run
 * (its alarm pages when polls fail, are rate limited or the hook is gone for longer than allowed).
 */
export async function recoverFromLogs(
  deps: RecoveryDependencies,
  context: { stores: AdmissionStores; telemetry: Telemetry; now: number; hasTime: () => boolean },
): Promise<RecoveryReport[]> {
  const reports: RecoveryReport[] = [];
  for (const provider of deps.providers) reports.push(await recoverOne(provider, deps, context));
  return reports;
}

async function recoverOne(
  { provider, adapter, feed }: RecoveredProvider,
  deps: RecoveryDependencies,
  context: { stores: AdmissionStores; telemetry: Telemetry; now: number; hasTime: () => boolean },
): Promise<RecoveryReport> {
  const { telemetry, now } = context;
  const cursor = await deps.cursors.read(provider, now);
  const stalled = (completedAt: number) => {
    const seconds = Math.max(0, Math.floor((now - completedAt) / 1000));
    telemetry.seconds(MetricName.RECOVERY_STALLED, provider, seconds);
    return seconds;
  };
  const empty = { recovered: 0, held: 0, redelivered: 0, unadmissible: 0 };
  if (cursor.gone === feed.target) {
    const stalledSeconds = stalled(cursor.completedAt);
    telemetry.log('WARN', 'recovery', { provider, outcome: 'skipped_gone', stalledSeconds });
    return { provider, outcome: 'skipped_gone', ...empty, stalledSeconds, cursorMoved: false };
  }
  const position = parsePosition(cursor.position);
  // What was admitted before a run fails part-way is in the inbox already: it is counted still.
  const admitted = { ...empty };
  const run = await feed
    .run({
      now,
      ...(position ? { position } : {}),
      hasTime: context.hasTime,
      admit: async (headers, body) => {
        const outcome = await admitRecovered(provider, adapter, headers, body, context);
        admitted[outcome] += 1;
        return outcome;
      },
    })
    .catch((error: unknown): FeedRun => {
      telemetry.log('WARN', 'recovery failed', { provider, ...safeErrorFields(error) });
      return { outcome: 'failed', counts: admitted, beyondRetention: false, detail: 'client_error' };
    });
  const completedAt = run.outcome === 'complete' ? now : undefined;
  const moved = await deps.cursors.write(provider, cursor.revision, {
    ...(run.position ? { position: JSON.stringify(run.position) } : {}),
    ...(completedAt !== undefined ? { completedAt } : {}),
    // A configuration naming another hook starts it afresh; one that answers again is no longer gone.
    gone: run.outcome === 'gone' ? feed.target : cursor.gone !== undefined ? null : undefined,
  });
  const stalledSeconds = stalled(moved && completedAt !== undefined ? completedAt : cursor.completedAt);
  if (run.counts.recovered > 0) telemetry.count(MetricName.RECOVERED, provider, run.counts.recovered);
  if (run.beyondRetention) telemetry.count(MetricName.RECOVERY_BEYOND_RETENTION, provider);
  const attention = run.outcome !== 'complete' || run.beyondRetention || run.counts.unadmissible > 0;
  telemetry.log(attention ? 'WARN' : 'INFO', 'recovery', {
    provider,
    outcome: run.outcome,
    ...run.counts,
    stalledSeconds,
    cursorMoved: moved,
    ...(run.beyondRetention ? { beyondRetention: true } : {}),
    ...(run.detail ? { detail: run.detail } : {}),
  });
  return { provider, outcome: run.outcome, ...run.counts, stalledSeconds, cursorMoved: moved };
}

/** A body the provider's log served, admitted as the verifier admits a delivery, marked recovered. */
async function admitRecovered(
  provider: string,
  adapter: ProviderAdapter,
  headers: Readonly<Record<string, string>>,
  body: Buffer,
  context: { stores: AdmissionStores; telemetry: Telemetry; now: number },
): Promise<EntryOutcome> {
  const admission = adapter.admit(headers, body);
  if (admission.kind === 'test' || admission.kind === 'handshake' || admission.kind === 'not_final') return 'held';
  if (admission.kind !== 'event') {
    context.telemetry.log('WARN', 'recovery unadmissible', { provider, kind: admission.kind, ...('detail' in admission ? { detail: admission.detail } : {}) });
    return 'unadmissible';
  }
  const admitted = await admitDelivery(context.stores, {
    provider,
    eventId: admission.eventId,
    body,
    digest: sha256Hex(body),
    meta: adapter.metadata(headers),
    now: context.now,
    jobRef: admission.jobRef,
    recovered: true,
    readsOriginal: false,
  });
  if (admitted.kind === 'exists') return 'held';
  if (admitted.enqueueError !== undefined) context.telemetry.count(MetricName.ENQUEUE_FAILED, provider);
  return 'recovered';
}
