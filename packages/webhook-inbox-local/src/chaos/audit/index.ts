/**
 * The auditor of a fault-injection run. It trusts only the providers' own records (what each
 * completed, every attempt, final states, the task stores the APIs served) and checks the inbox
 * against them:
 *
 * - every completed result stored exactly once: one inbox row per event id, none missing (lost),
 *   none that no provider completed (a test delivery, a forgery, a stale or replayed request);
 * - processed exactly once: every result row PROCESSED, at most one `processed` log line per row,
 *   each effect key dispatched once, except the documented same-key repeat after a worker died
 *   after sending (counted apart);
 * - the right winner per job, recomputed from the provider's record: the most recently created
 *   COMPLETED task wins, a FAILED task never replaces a COMPLETED one;
 * - no altered body accepted: each row's digest is the provider's original (or, for a row fed by
 *   polling, a body the provider's API served), every altered copy quarantined;
 * - poison rows DEAD with their message in the DLQ (dead-lettered, not lost);
 * - missing resources settled as unavailable, with no effect;
 * - every request of every batch (the batch API's own record) stored as exactly one row with one
 *   `BatchChildSettled` effect naming its terminal state, and each batch one `BatchSettled`;
 * - a submission whose deadline passed unread settled unavailable, with its `ResourceUnavailable`
 *   event, and the near-deadline alarm raised;
 * - no secret, body or signature in any line of the twin's logs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MetricName } from '../../../../../lib/contract';
import { logReference } from '../../../../../lambda/shared/runtime/digest';
import type { AnswerlineTask } from '../../providers/answerline/simulator';
import type { EchonovaJob, EchonovaWebhook } from '../../providers/echonova/simulator';
import { DeliveryRecord, isSuccess } from '../../providers/sender';
import type { StandardWebhooksEvent } from '../../providers/standard-webhooks/simulator';
import type { AdversaryKind, Plan, Provider } from '../plan';

/** The failure modes a run injects; each must occur at least once. */
export const FAULT_KINDS = [
  'crash_after_write',
  'concurrent_duplicate',
  'poison_delivery',
  'store_outage',
  'queue_outage',
  'reverse_order',
  'test_delivery',
  'altered_duplicate',
  'stale_timestamp',
  'future_timestamp',
  'forged_signature',
  'replay',
  'worker_crash',
  'long_outage',
  'endpoint_unavailable_answers',
  'webhook_disabled',
  'missing_resource',
  'rate_limited_poll',
  'batch_canceled',
  'batch_expired',
  'batch_api_error',
  'deadline_unread',
  'dynamodb_throttled',
  'sqs_throttled',
  'eventbridge_throttled',
  'unprocessed_items',
  'unprocessed_keys',
  'send_batch_entries_failed',
  'put_events_entries_failed',
  'index_lag',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number] | 'worker_timeout' | 'webhook_reenabled';

export interface AdversaryRecord {
  readonly kind: AdversaryKind;
  readonly provider: Provider;
  /** The inbox key the request names. */
  readonly eventKey: string;
  readonly status?: number;
  /** The phase of the run it was sent in (`calm`, `store_down`, ...). */
  readonly during: string;
}

export interface InboxRow {
  readonly key: string;
  readonly status: string;
  readonly digest: string;
  readonly recovered: boolean;
  readonly outcome?: string;
  /** Claims the row has used, and the last failure's name (what an operator would read). */
  readonly attempts?: number;
  readonly lastError?: string;
}

export interface DispatchedEffect {
  readonly detailType: string;
  readonly effectKey: string;
  readonly eventKey: string;
  readonly jobKey?: string;
  readonly taskId?: string;
  readonly status?: string;
  /** A batch's effects: the batch, the request (child) and its terminal state, or the batch's outcome. */
  readonly batchId?: string;
  readonly customId?: string;
  readonly childState?: string;
  readonly batchOutcome?: string;
  readonly recovered: boolean;
}

/** A batch as the batch API recorded it: each request's terminal state (`none` while unprocessed). */
export interface BatchRecord {
  readonly provider: string;
  readonly batchId: string;
  readonly requests: readonly { readonly customId: string; readonly state: string }[];
}

/** Everything the run collected; the providers' records are the reference. */
export interface Evidence {
  readonly plan: Plan;
  readonly faults: Partial<Record<FaultKind, number>>;
  /** Every delivery of every provider, as the providers recorded them. */
  readonly deliveries: readonly DeliveryRecord[];
  /** HTTP requests the providers made. */
  readonly attempts: number;
  readonly answerlineTasks: readonly AnswerlineTask[];
  readonly echonovaJobs: readonly EchonovaJob[];
  readonly events: readonly StandardWebhooksEvent[];
  readonly echonovaWebhook: EchonovaWebhook;
  readonly adversary: readonly AdversaryRecord[];
  /** Altered copies not sent because their original was never delivered. */
  readonly alteredSkipped: number;
  readonly rows: readonly InboxRow[];
  readonly quarantined: readonly { key: string; digest: string; count: number }[];
  readonly submissions: readonly { key: string; state: string }[];
  readonly results: readonly { key: string; taskId: string; status: string }[];
  /** The inbox keys of the messages found in the DLQ. */
  readonly deadLettered: readonly string[];
  readonly effects: readonly DispatchedEffect[];
  /** The `ResourceUnavailable` events the reconciler put on the bus. */
  readonly unavailable: readonly { readonly submissionKey: string; readonly effectKey: string; readonly reason: string }[];
  readonly batches: readonly BatchRecord[];
  /** Answerline tasks the app recorded with a short deadline and the provider never started. */
  readonly deadlineTaskIds: readonly string[];
  /** Rows whose processing was interrupted after it may have sent the effect: their invocation died, or reported them failed. */
  readonly interruptedRows: ReadonlySet<string>;
  /** Rows whose processor invocation died (a crash or a timeout). */
  readonly killedRows: ReadonlySet<string>;
  /** Digests of the bodies each provider's task API served, by task id. */
  readonly servedDigests: Readonly<Record<string, ReadonlyMap<string, ReadonlySet<string>> | undefined>>;
  readonly rateLimitedPolls: number;
  readonly logDir: string;
  readonly sensitive: { readonly texts: readonly string[]; readonly signatureTokens: ReadonlySet<string> };
  readonly appStats: Readonly<Record<string, number>>;
  readonly hostStats: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Calls the IAM gateway refused (each function's role policy from the template), and how many it judged, by principal. */
  readonly iam: { readonly denials: readonly { principal: string; message: string }[]; readonly evaluated: Readonly<Record<string, number>> };
  /**
   * The functions' AWS calls through the fault proxies: those made, by `<service>.<operation>`, and
   * those changed, by `<kind> <service>.<operation>` (`throttled dynamodb.PutItem`, …).
   */
  readonly awsCalls: { readonly made: Readonly<Record<string, number>>; readonly changed: Readonly<Record<string, number>> };
  /** Kinds of AWS's faults planned on calls no function made this run: nothing to change. */
  readonly uncalled: readonly FaultKind[];
  /** Every alarm state change of the template's alarms, as the twin evaluated them. */
  readonly alarms: readonly { readonly logicalId: string; readonly to: string; readonly at: number }[];
  readonly errors: readonly string[];
  elapsedMs: number;
}

export const PROVIDERS: readonly Provider[] = ['answerline', 'echonova', 'standard-webhooks'];
/** The batch API's column: its rows are keyed `batches#…`. */
const BATCHES = 'batches';
type Source = Provider | typeof BATCHES;
const SOURCES: readonly Source[] = [...PROVIDERS, BATCHES];
export type Column = Source | 'total';

export interface ChaosReport {
  readonly seed: number;
  readonly deliveries: number;
  readonly elapsedMs: number;
  readonly faults: Readonly<Record<string, number>>;
  /** Figures by provider and in total, in display order. */
  readonly figures: ReadonlyArray<{ readonly name: string; readonly values: Readonly<Record<Column, number>> }>;
  /** The handlers' own metrics (their EMF log lines), summed over the run. */
  readonly metrics: Readonly<Record<string, number>>;
  readonly violations: readonly string[];
  /** Fault kinds that could not be injected: no function made the calls they change. */
  readonly uncalled: readonly string[];
  readonly notes: readonly string[];
}

const EXAMPLES = 5;
/** Refused requests that must page: the signature alarm's default threshold, which the run's flood exceeds within one period. */
const SIGNATURE_FLOOD_PAGES = 10;
/** The documented at-least-once case: a worker interrupted after sending; consumers dedupe by the key. */
const REPEATED = 'effects repeated after an interrupted attempt (same key)';

export function audit(evidence: Evidence): ChaosReport {
  const violations: string[] = [];
  const notes: string[] = [];
  const figures = new Figures();
  const violation = (what: string, examples: readonly string[] = []) =>
    violations.push(examples.length ? `${what} (e.g. ${examples.slice(0, EXAMPLES).join(', ')})` : what);

  const rows = new Map(evidence.rows.map((row) => [row.key, row]));
  const providerOf = (key: string) => key.slice(0, key.indexOf('#')) as Provider;
  const sourceOf = (key: string) => key.slice(0, key.indexOf('#')) as Source;

  // --- What the providers completed --------------------------------------------------------------
  const originals = new Map<string, DeliveryRecord>();
  for (const name of [
    'deliveries (provider messages)',
    '  results',
    '  poison results',
    '  test deliveries',
    '  altered copies',
    '  delivered at the provider',
    '  dead at the provider',
    '  skipped at the provider',
  ]) {
    figures.ensure(name);
  }
  for (const delivery of evidence.deliveries) {
    const provider = delivery.provider as Provider;
    figures.add('deliveries (provider messages)', provider);
    figures.add(
      `  ${delivery.kind === 'result' ? 'results' : delivery.kind === 'poison' ? 'poison results' : delivery.kind === 'test' ? 'test deliveries' : 'altered copies'}`,
      provider,
    );
    figures.add(`  ${delivery.state} at the provider`, provider);
    if (delivery.kind === 'result' || delivery.kind === 'poison') originals.set(delivery.eventKey, delivery);
  }
  figures.set('attempts (HTTP requests, adversary included)', 'total', evidence.attempts);

  // --- Stored exactly once ---------------------------------------------------------------------------
  const lost = [...originals.keys()].filter((key) => !rows.has(key));
  for (const key of lost) figures.add('lost', providerOf(key));
  figures.ensure('lost');
  if (lost.length) violation(`${lost.length} completed results have no inbox row (lost)`, lost);
  // A batch's rows are judged from the batch API's record below.
  const unexpected = evidence.rows.filter((row) => !originals.has(row.key) && sourceOf(row.key) !== BATCHES);
  for (const row of unexpected) figures.add('rows no provider completed', providerOf(row.key));
  figures.ensure('rows no provider completed');
  if (unexpected.length)
    violation(
      `${unexpected.length} inbox rows match no completed result (a test, forged, stale or replayed request stored)`,
      unexpected.map((row) => row.key),
    );

  // --- Bodies: the provider's original, or what its API served ---------------------------------------
  const alteredAccepted: string[] = [];
  const notProcessed: string[] = [];
  const poisonNotDead: string[] = [];
  const deadLettered = new Set(evidence.deadLettered);
  for (const [key, original] of originals) {
    const row = rows.get(key);
    if (!row) continue;
    const provider = providerOf(key);
    if (row.recovered) {
      figures.add('recovered by polling', provider);
      const served = evidence.servedDigests[provider]?.get(taskIdOf(provider, key));
      if (!served?.has(row.digest)) alteredAccepted.push(key);
    } else if (row.digest !== original.digest) {
      alteredAccepted.push(key);
    }
    if (original.kind === 'poison') {
      if (row.status === 'DEAD' && deadLettered.has(key)) figures.add('dead-lettered poison rows', provider);
      else poisonNotDead.push(`${key}: ${row.status}${deadLettered.has(key) ? '' : ', not in the DLQ'}`);
    } else if (row.status === 'PROCESSED') {
      figures.add('processed', provider);
    } else {
      const killed = evidence.killedRows.has(key) ? ', in a killed invocation' : '';
      notProcessed.push(`${key}: ${row.status} after ${row.attempts ?? 0} attempts (last error: ${row.lastError ?? 'none'}${killed})`);
    }
  }
  for (const name of ['processed', 'recovered by polling', 'dead-lettered poison rows']) figures.ensure(name);
  for (const key of alteredAccepted) figures.add('altered bodies accepted', providerOf(key));
  figures.ensure('altered bodies accepted');
  if (alteredAccepted.length) violation(`${alteredAccepted.length} rows hold a body the provider never sent`, alteredAccepted);
  if (notProcessed.length) violation(`${notProcessed.length} result rows are not PROCESSED`, notProcessed);
  if (poisonNotDead.length) violation(`${poisonNotDead.length} poison rows did not end DEAD in the DLQ`, poisonNotDead);
  const dlqOthers = evidence.deadLettered.filter((key) => originals.get(key)?.kind !== 'poison');
  if (dlqOthers.length) notes.push(`${dlqOthers.length} DLQ messages of healthy rows (a message that died while its row was recovered by the sweep)`);

  // Given up by the provider (dead after every attempt, or skipped by a disabled webhook): only polling brings them back.
  for (const original of originals.values()) {
    if (original.state === 'dead' || original.state === 'skipped') {
      figures.add('results the provider gave up on', original.provider as Provider);
      if (rows.has(original.eventKey) && !rows.get(original.eventKey)!.recovered)
        figures.add('  stored before the provider gave up', original.provider as Provider);
    }
  }
  figures.ensure('results the provider gave up on');

  // --- Altered duplicates: the first body kept, the altered one quarantined ---------------------------
  const quarantined = new Map(evidence.quarantined.map((item) => [`${item.key} ${item.digest}`, item]));
  const alteredDigests = new Set<string>();
  const notQuarantined: string[] = [];
  for (const altered of evidence.deliveries.filter((delivery) => delivery.kind === 'altered')) {
    alteredDigests.add(`${altered.eventKey} ${altered.digest}`);
    if (altered.state !== 'delivered') continue;
    // A row fed by polling answers any later copy as a duplicate (its bytes were never the delivery's): documented.
    if (rows.get(altered.eventKey)?.recovered) {
      notes.push(`altered copy of ${altered.eventKey} answered as a duplicate: its row was fed by polling`);
      continue;
    }
    if (!quarantined.has(`${altered.eventKey} ${altered.digest}`)) notQuarantined.push(altered.eventKey);
  }
  for (const item of evidence.quarantined) figures.add('quarantined', providerOf(item.key));
  figures.ensure('quarantined');
  if (notQuarantined.length) violation(`${notQuarantined.length} altered duplicates were not quarantined`, notQuarantined);
  const falseQuarantine = evidence.quarantined.filter((item) => !alteredDigests.has(`${item.key} ${item.digest}`));
  if (falseQuarantine.length)
    violation(
      `${falseQuarantine.length} quarantined copies are not altered ones (a retry or concurrent copy was taken for an altered body)`,
      falseQuarantine.map((item) => item.key),
    );

  // --- Test deliveries and the adversary -----------------------------------------------------------------
  // A test delivery verifies and gets a 2xx; a 4xx would be a real one refused (5xx: an outage, retried).
  const tests = evidence.deliveries.filter((delivery) => delivery.kind === 'test');
  const refusedTests = tests.filter((delivery) => delivery.attempts.some((a) => a.status !== undefined && a.status >= 400 && a.status <= 499));
  if (refusedTests.length)
    violation(
      `${refusedTests.length} test deliveries were refused with a 4xx`,
      refusedTests.map((d) => d.eventKey),
    );
  const deadTests = tests.filter((delivery) => delivery.state !== 'delivered').length;
  if (deadTests) notes.push(`${deadTests} test deliveries died in an outage (nothing stored, as for any test delivery)`);
  const refused = new Set(['stale', 'future', 'forged']);
  const wrongAnswers: string[] = [];
  let inconclusive = 0;
  for (const record of evidence.adversary) {
    if (record.during !== 'calm' && (record.status === undefined || record.status >= 500)) {
      inconclusive++;
      continue;
    }
    const ok = refused.has(record.kind) ? record.status === 400 : isSuccess(record.status);
    if (!ok) wrongAnswers.push(`${record.kind} ${record.eventKey} → ${record.status ?? 'no answer'}`);
  }
  if (inconclusive) notes.push(`${inconclusive} adversarial requests were sent during an outage and answered 5xx`);
  if (wrongAnswers.length) violation(`${wrongAnswers.length} stale, forged or replayed requests got the wrong answer`, wrongAnswers);

  // --- The right winner per job --------------------------------------------------------------------------
  const results = new Map(evidence.results.map((item) => [item.key, item]));
  const winners = new Map<string, Candidate & { provider: Provider; jobKey: string }>();
  const offer = (provider: Provider, jobKey: string, taskId: string, status: 'COMPLETED' | 'FAILED', createdAt: string) => {
    const candidate = { provider, jobKey, taskId, status, createdMs: Date.parse(createdAt) };
    const key = `${provider}#${jobKey}`;
    const current = winners.get(key);
    if (!current || outranks(candidate, current)) winners.set(key, candidate);
  };
  for (const task of evidence.answerlineTasks) {
    if (task.status !== 'COMPLETED' && task.status !== 'FAILED') continue;
    offer('answerline', task.jobKey, task.id, task.status, task.createdAt);
  }
  for (const job of evidence.echonovaJobs) {
    if (job.status !== 'completed' && job.status !== 'failed') continue;
    offer('echonova', job.jobId, job.jobId, job.status === 'completed' ? 'COMPLETED' : 'FAILED', job.createdAt);
  }
  const wrongWinners: string[] = [];
  for (const [key, winner] of winners) {
    const stored = results.get(key);
    if (!stored || stored.taskId !== winner.taskId || stored.status !== winner.status) {
      wrongWinners.push(`${key}: stored ${stored ? `${stored.taskId}/${stored.status}` : 'nothing'}, rule says ${winner.taskId}/${winner.status}`);
      figures.add('wrong winners', winner.provider);
    }
  }
  figures.ensure('wrong winners');
  figures.set('jobs decided', 'answerline', [...winners.values()].filter((w) => w.provider === 'answerline').length);
  figures.set('jobs decided', 'echonova', [...winners.values()].filter((w) => w.provider === 'echonova').length);
  if (wrongWinners.length) violation(`${wrongWinners.length} jobs have the wrong winner`, wrongWinners);
  const reversed = reverseOrderJobs(evidence.answerlineTasks);
  figures.set('jobs whose results arrived in reverse order', 'answerline', reversed);

  // --- Effects: once per intent --------------------------------------------------------------------------
  const byEffectKey = groupBy(evidence.effects, (effect) => effect.effectKey);
  const twice: string[] = [];
  for (const [, copies] of byEffectKey) {
    if (copies.length < 2) continue;
    const provider = sourceOf(copies[0].eventKey);
    if (copies.every((copy) => evidence.interruptedRows.has(copy.eventKey))) figures.add(REPEATED, provider, copies.length - 1);
    else {
      twice.push(copies[0].eventKey);
      figures.add('processed twice', provider, copies.length - 1);
    }
  }
  // Read once: the effects, metrics and leak checks all scan the same files.
  const logs = readLogs(evidence.logDir);
  // A row completed twice logs `processed` twice.
  const processedLines = countLinesByEvent(logs, 'processed');
  for (const key of originals.keys()) {
    const lines = processedLines.get(logReference(key)) ?? 0;
    if (lines > 1) {
      twice.push(`${key} (${lines} completions)`);
      figures.add('processed twice', providerOf(key), lines - 1);
    }
  }
  figures.ensure('processed twice');
  figures.ensure(REPEATED);
  if (twice.length) violation(`${twice.length} rows were processed twice`, twice);

  const effectsByEventKey = groupBy(evidence.effects, (effect) => effect.eventKey);
  const winnerEffects = new Set(
    evidence.effects.filter((e) => e.jobKey !== undefined).map((e) => `${providerOf(e.eventKey)}#${e.jobKey} ${e.taskId} ${e.status}`),
  );
  const missingEffects: string[] = [];
  for (const [key, winner] of winners) {
    if (!winnerEffects.has(`${key} ${winner.taskId} ${winner.status}`)) missingEffects.push(key);
  }
  const unavailableWrong: string[] = [];
  for (const event of evidence.events) {
    if (event.poison || !event.delivery) continue;
    const key = event.delivery.eventKey;
    const row = rows.get(key);
    const sent = effectsByEventKey.get(key) ?? [];
    if (event.missing) {
      if (row && (row.outcome !== 'unavailable' || sent.length > 0)) unavailableWrong.push(`${key}: outcome ${row.outcome ?? 'none'}, ${sent.length} effects`);
      else if (row) figures.add('missing resources settled unavailable', 'standard-webhooks');
    } else if (row && sent.length === 0) {
      missingEffects.push(key);
    }
  }
  figures.ensure('missing resources settled unavailable');
  const poisonEffects = [...originals.values()].filter((o) => o.kind === 'poison' && effectsByEventKey.has(o.eventKey)).map((o) => o.eventKey);
  if (missingEffects.length) violation(`${missingEffects.length} decided results never had their effect dispatched`, missingEffects);
  if (unavailableWrong.length)
    violation(`${unavailableWrong.length} deliveries of missing resources were not settled as unavailable without effect`, unavailableWrong);
  if (poisonEffects.length) violation(`${poisonEffects.length} poison rows caused an effect`, poisonEffects);
  for (const effect of evidence.effects) figures.add('effects dispatched', sourceOf(effect.eventKey));
  figures.ensure('effects dispatched');
  const wrongFlag = evidence.effects
    .filter((effect) => rows.has(effect.eventKey) && rows.get(effect.eventKey)!.recovered !== effect.recovered)
    .map((e) => e.eventKey);
  if (wrongFlag.length) violation(`${wrongFlag.length} effects say recovered when their row was delivered, or the reverse`, wrongFlag);

  // --- The handlers' own count: what an operator's dashboard would show ------------------------------------
  const metrics = emfTotals(logs);
  const counted = (name: string) => metrics[name] ?? 0;
  // A batch's rows are counted as its children and its summary (below), not as recovered results.
  const recoveredRows = evidence.rows.filter((row) => row.recovered && sourceOf(row.key) !== BATCHES).length;
  if (counted(MetricName.RECOVERED) !== recoveredRows)
    violation(`the reconciler counted ${counted(MetricName.RECOVERED)} results recovered by polling, the inbox holds ${recoveredRows}`);
  // A row's dead-letter count goes out with its log line, right after the DEAD write: only an
  // invocation that died in between (a crash or timeout of that very batch) loses both.
  const deadLines = countLinesByEvent(logs, 'processing failed; dead-lettered');
  const deadLineTotal = [...deadLines.values()].reduce((sum, n) => sum + n, 0);
  if (counted(MetricName.DEAD_LETTERED) !== deadLineTotal)
    violation(`the processor counted ${counted(MetricName.DEAD_LETTERED)} rows dead-lettered but logged ${deadLineTotal}`);
  const poisonKeys = [...originals.values()].filter((o) => o.kind === 'poison').map((o) => o.eventKey);
  const uncounted = poisonKeys.filter((key) => !deadLines.has(logReference(key)));
  const uncountedUnexplained = uncounted.filter((key) => !evidence.killedRows.has(key));
  if (uncountedUnexplained.length) violation(`${uncountedUnexplained.length} poison rows died without the processor counting them`, uncountedUnexplained);
  if (uncounted.length > uncountedUnexplained.length)
    notes.push(`${uncounted.length - uncountedUnexplained.length} poison rows died in an invocation killed before it counted them`);
  const quarantineCount = evidence.quarantined.reduce((sum, item) => sum + item.count, 0);
  if (counted(MetricName.QUARANTINED) !== quarantineCount)
    notes.push(`the verifier counted ${counted(MetricName.QUARANTINED)} quarantined copies, the quarantine items ${quarantineCount}`);

  // --- Batches: every request of every batch once, one effect each, one summary per batch -------------------
  // Stated here from the batch API's own record and the documented row keys
  // (`<provider>#<batchId>:<customId>`, both URI-escaped; the summary `…:~batch`).
  const batchProblems: string[] = [];
  const childEffects = groupBy(
    evidence.effects.filter((e) => e.detailType === 'BatchChildSettled'),
    (e) => `${e.batchId} ${e.customId}`,
  );
  const summaryEffects = groupBy(
    evidence.effects.filter((e) => e.detailType === 'BatchSettled'),
    (e) => String(e.batchId),
  );
  /** Effects of one intent: exactly one key, sent once, or again only after an interrupted attempt (at least once, documented). */
  const once = (copies: readonly DispatchedEffect[] | undefined, rowKey: string) =>
    copies !== undefined && new Set(copies.map((c) => c.effectKey)).size === 1 && (copies.length === 1 || evidence.interruptedRows.has(rowKey));
  for (const batch of evidence.batches) {
    const prefix = `${batch.provider}#${encodeURIComponent(batch.batchId)}:`;
    const batchRows = evidence.rows.filter((row) => row.key.startsWith(prefix));
    const summaryKey = `${prefix}~batch`;
    for (const request of batch.requests) {
      figures.add('batch requests (children)', BATCHES);
      const key = `${prefix}${encodeURIComponent(request.customId)}`;
      const row = rows.get(key);
      if (request.state === 'none') batchProblems.push(`${key}: never reached a terminal state at the provider`);
      else if (!row) batchProblems.push(`${key}: no row`);
      else if (row.status !== 'PROCESSED') batchProblems.push(`${key}: ${row.status}`);
      else if ((processedLines.get(logReference(key)) ?? 0) > 1) batchProblems.push(`${key}: ${processedLines.get(logReference(key))} completions`);
      else if (!once(childEffects.get(`${batch.batchId} ${request.customId}`), key))
        batchProblems.push(`${key}: ${childEffects.get(`${batch.batchId} ${request.customId}`)?.length ?? 0} BatchChildSettled effects`);
      else if (childEffects.get(`${batch.batchId} ${request.customId}`)![0].childState !== request.state)
        batchProblems.push(`${key}: effect says ${childEffects.get(`${batch.batchId} ${request.customId}`)![0].childState}, the provider ${request.state}`);
      else figures.add('  stored once with one BatchChildSettled', BATCHES);
    }
    // Exactly one row per request and the summary: no request stored under a second key, none the batch does not hold.
    if (batchRows.length !== batch.requests.length + 1)
      batchProblems.push(`${prefix}*: ${batchRows.length} rows for ${batch.requests.length} requests and a summary`);
    // The outcome rule, stated here: succeeded when every request succeeded, failed when none did, partial otherwise.
    const succeeded = batch.requests.filter((request) => request.state === 'succeeded').length;
    const outcome = succeeded === batch.requests.length ? 'succeeded' : succeeded === 0 ? 'failed' : 'partial';
    const summaries = summaryEffects.get(batch.batchId);
    if (rows.get(summaryKey)?.status !== 'PROCESSED') batchProblems.push(`${summaryKey}: ${rows.get(summaryKey)?.status ?? 'no row'}`);
    else if (!once(summaries, summaryKey)) batchProblems.push(`${summaryKey}: ${summaries?.length ?? 0} BatchSettled effects`);
    else if (summaries![0].batchOutcome !== outcome) batchProblems.push(`${summaryKey}: outcome ${summaries![0].batchOutcome}, the rule says ${outcome}`);
    else figures.add(`batches settled once (${outcome})`, BATCHES);
  }
  figures.ensure('batch requests (children)');
  if (batchProblems.length) violation(`${batchProblems.length} batch requests or summaries not stored and settled exactly once`, batchProblems);
  const childRows = evidence.rows.filter((row) => sourceOf(row.key) === BATCHES && !row.key.endsWith(':~batch')).length;
  if (counted(MetricName.BATCH_CHILDREN_RECORDED) !== childRows)
    violation(`the reconciler counted ${counted(MetricName.BATCH_CHILDREN_RECORDED)} batch children recorded, the inbox holds ${childRows}`);
  if (counted(MetricName.BATCHES_SETTLED) !== evidence.batches.length)
    violation(`the reconciler counted ${counted(MetricName.BATCHES_SETTLED)} batches settled, the batch API ended ${evidence.batches.length}`);

  // --- Deadlines: a resource gone unread is announced, never left waiting ---------------------------------------
  // Stated here: a submission recorded with a deadline the provider never met ends UNAVAILABLE, with
  // one ResourceUnavailable event (one key; at least once) for an operator to decide.
  const submissionStates = new Map(evidence.submissions.map((s) => [s.key, s.state]));
  const unavailableByKey = groupBy(evidence.unavailable, (event) => event.submissionKey);
  const deadlineProblems: string[] = [];
  for (const taskId of evidence.deadlineTaskIds) {
    const key = `ledger:answerline#${taskId}`;
    const announced = unavailableByKey.get(key) ?? [];
    if (submissionStates.get(key) !== 'UNAVAILABLE') deadlineProblems.push(`${key}: ${submissionStates.get(key) ?? 'not recorded'}`);
    else if (new Set(announced.map((event) => event.effectKey)).size !== 1) deadlineProblems.push(`${key}: ${announced.length} ResourceUnavailable events`);
    else figures.add('deadlines passed unread, announced once', 'answerline');
  }
  figures.ensure('deadlines passed unread, announced once');
  if (deadlineProblems.length)
    violation(`${deadlineProblems.length} submissions past their deadline were not settled unavailable with one event`, deadlineProblems);
  const strayUnavailable = evidence.unavailable.filter(
    (event) => !evidence.deadlineTaskIds.some((taskId) => event.submissionKey === `ledger:answerline#${taskId}`),
  );
  if (strayUnavailable.length)
    notes.push(
      `${strayUnavailable.length} other ResourceUnavailable events: ${strayUnavailable
        .map((e) => `${e.submissionKey} ${e.reason}`)
        .slice(0, EXAMPLES)
        .join(', ')}`,
    );

  // --- Logs: no secret, no body, no signature ----------------------------------------------------------------
  const leaks = scanLogs(evidence.logDir, evidence.sensitive, logs);
  figures.set('log lines with a secret, body or signature', 'total', leaks.length);
  if (leaks.length) violation(`${leaks.length} log lines carry a secret, a body or a signature`, leaks);

  // --- IAM: every call a function made was one its role's policy allows ----------------------------------------
  figures.set(
    'AWS calls judged by the IAM gateway',
    'total',
    Object.values(evidence.iam.evaluated).reduce((sum, n) => sum + n, 0),
  );
  figures.set('AWS calls denied (a grant the template lacks)', 'total', evidence.iam.denials.length);
  if (evidence.iam.denials.length)
    violation(
      `${evidence.iam.denials.length} AWS calls were denied by the functions' own role policies`,
      evidence.iam.denials.map((denial) => denial.message),
    );

  // --- Alarms: what an operator must be paged for, they are ----------------------------------------------
  // Stated here by the alarms' construct ids: a dead delivery, a flood of refused signatures, a
  // submission past its horizon without a result, each pages once the handlers counted it.
  const alarmed = new Set(evidence.alarms.filter((change) => change.to === 'ALARM').map((change) => change.logicalId));
  const paged = (constructId: string) => [...alarmed].some((logicalId) => logicalId.includes(constructId));
  const refusedSignatures = counted(MetricName.AUTHENTICATION_FAILED);
  const mustPage: ReadonlyArray<readonly [string, boolean, string]> = [
    ['DeadDeliveries', counted(MetricName.DEAD_LETTERED) > 0, `${counted(MetricName.DEAD_LETTERED)} rows were dead-lettered`],
    [
      'SignatureFailures',
      refusedSignatures >= SIGNATURE_FLOOD_PAGES,
      `${refusedSignatures} requests were refused at the authenticity check, a flood among them`,
    ],
    ['OverdueSubmissions', counted(MetricName.OVERDUE) > 0, 'the reconciler counted overdue submissions'],
    [
      'SubmissionsNearDeadline',
      evidence.deadlineTaskIds.length > 0 || counted(MetricName.NEAR_DEADLINE) > 0,
      'a submission was recorded with a deadline shorter than the warning margin and its provider never answered',
    ],
  ];
  for (const [alarm, due, why] of mustPage) {
    figures.set(`alarm ${alarm} reached ALARM`, 'total', paged(alarm) ? 1 : 0);
    if (due && !paged(alarm)) violation(`the ${alarm} alarm never reached ALARM though ${why}`);
  }
  const pages = evidence.alarms.filter((change) => change.to === 'ALARM');
  notes.push(`alarms: ${pages.map((change) => `${change.logicalId} → ALARM`).join(', ') || 'none reached ALARM'}`);

  // --- The run itself --------------------------------------------------------------------------------------
  if (evidence.errors.length) violation(`${evidence.errors.length} errors in the run's own actions`, evidence.errors);
  // Counted from the records rather than at injection: realized reverse arrivals, disables, 429s served.
  const derived: Partial<Record<FaultKind, number>> = {
    reverse_order: reversed,
    webhook_disabled: evidence.echonovaWebhook.disabledAt.length,
    rate_limited_poll: evidence.rateLimitedPolls,
  };
  const faults: Record<string, number> = {};
  for (const kind of [...FAULT_KINDS, 'worker_timeout', 'webhook_reenabled'] as const) faults[kind] = derived[kind] ?? evidence.faults[kind] ?? 0;
  const notInjected = FAULT_KINDS.filter((kind) => faults[kind] === 0);
  if (notInjected.length) notes.push(`fault kinds not injected this run: ${notInjected.join(', ')}`);
  if (evidence.uncalled.length) notes.push(`no function made the calls these fault kinds change: ${evidence.uncalled.join(', ')}`);
  const listed = (counts: Readonly<Record<string, number>>) =>
    Object.entries(counts)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ');
  if (Object.keys(evidence.awsCalls.changed).length) notes.push(`AWS calls the fault proxies changed: ${listed(evidence.awsCalls.changed)}`);
  if (Object.keys(evidence.awsCalls.made).length) notes.push(`AWS calls the functions made through them: ${listed(evidence.awsCalls.made)}`);
  if (evidence.alteredSkipped) notes.push(`${evidence.alteredSkipped} altered copies not sent: their original was never delivered`);
  const states = new Map<string, number>();
  for (const submission of evidence.submissions) states.set(submission.state, (states.get(submission.state) ?? 0) + 1);
  notes.push(`submissions: ${[...states].map(([name, count]) => `${name} ${count}`).join(', ') || 'none'}; app: ${JSON.stringify(evidence.appStats)}`);
  notes.push(
    `hosts: ${Object.entries(evidence.hostStats)
      .map(([name, stats]) => `${name} ${JSON.stringify(stats)}`)
      .join('; ')}`,
  );

  return {
    seed: evidence.plan.seed,
    deliveries: evidence.plan.deliveries,
    elapsedMs: evidence.elapsedMs,
    faults,
    figures: figures.rows(),
    metrics,
    violations,
    uncalled: evidence.uncalled,
    notes,
  };
}

export interface Candidate {
  readonly taskId: string;
  readonly status: 'COMPLETED' | 'FAILED';
  readonly createdMs: number;
}

/**
 * The conflict rule, stated here on its own: a COMPLETED result outranks a FAILED one whatever
 * their creation times, then the later created wins, then (a tie) the greater task id.
 */
export function outranks(a: Candidate, b: Candidate): boolean {
  const rank = (candidate: Candidate) => (candidate.status === 'COMPLETED' ? 1 : 0);
  return (rank(a) - rank(b) || a.createdMs - b.createdMs || (a.taskId > b.taskId ? 1 : a.taskId < b.taskId ? -1 : 0)) > 0;
}

/** The task id behind an inbox key of a polled provider. */
function taskIdOf(provider: Provider, key: string): string {
  const eventId = key.slice(provider.length + 1);
  // Echonova keys a job's final event by `<escaped jobId>:job` (echonovaJobEventKey).
  return provider === 'echonova' ? decodeURIComponent(eventId.replace(/:job$/, '')) : eventId;
}

/** Jobs with several tasks whose older task's result reached the inbox after a newer one's. */
function reverseOrderJobs(tasks: readonly AnswerlineTask[]): number {
  const byJob = groupBy(
    tasks.filter((task) => task.delivery),
    (task) => task.jobKey,
  );
  let reversed = 0;
  for (const jobTasks of byJob.values()) {
    if (jobTasks.length < 2) continue;
    const arrival = (task: AnswerlineTask) => task.delivery!.attempts.find((a) => isSuccess(a.status))?.at;
    const ordered = [...jobTasks].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const times = ordered.map(arrival);
    if (times.some((t, i) => i > 0 && t !== undefined && times[i - 1] !== undefined && t < times[i - 1]!)) reversed++;
  }
  return reversed;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

interface LogFile {
  /** The file's name within the folder. */
  readonly name: string;
  readonly lines: readonly string[];
}

/** The lines of each `.log` file in the folder (none when it does not exist). */
function readLogs(logDir: string): LogFile[] {
  let names: string[];
  try {
    names = readdirSync(logDir).filter((name) => name.endsWith('.log'));
  } catch {
    return [];
  }
  return names.map((name) => ({ name, lines: readFileSync(join(logDir, name), 'utf8').split('\n') }));
}

/** Every metric of the handlers' embedded-metric-format lines, summed (per-provider documents add up to the inbox's). */
function emfTotals(logs: readonly LogFile[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const { lines } of logs) {
    for (const line of lines) {
      // A log line may be the document too (the verifier's delivery line): any JSON line with `_aws`.
      if (!line.startsWith('{') || !line.includes('"_aws"')) continue;
      const document = JSON.parse(line) as { _aws: { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> } } & Record<string, unknown>;
      for (const { Name } of document._aws.CloudWatchMetrics.flatMap((entry) => entry.Metrics)) {
        totals[Name] = (totals[Name] ?? 0) + Number(document[Name] ?? 0);
      }
    }
  }
  return totals;
}

/** The metrics the report shows, in order. */
const REPORTED_METRICS = [
  MetricName.ACCEPTED,
  MetricName.DUPLICATE,
  MetricName.QUARANTINED,
  MetricName.TEST_DELIVERY,
  MetricName.BAD_SIGNATURE,
  MetricName.STALE_TIMESTAMP,
  MetricName.STORE_ERROR,
  MetricName.ENQUEUE_FAILED,
  MetricName.SWEPT,
  MetricName.PROCESSED,
  MetricName.PROCESSING_FAILED,
  MetricName.DEAD_LETTERED,
  MetricName.WINNER_CHANGED,
  MetricName.EFFECTS_DISPATCHED,
  MetricName.EFFECT_FAILURES,
  MetricName.RESOURCE_UNAVAILABLE,
  MetricName.RECOVERED,
  MetricName.POLL_RATE_LIMITED,
  MetricName.POLL_ERRORS,
  MetricName.BATCH_CHILDREN_RECORDED,
  MetricName.BATCHES_SETTLED,
  MetricName.NEAR_DEADLINE,
];

/** The processor's log lines with `message`, by event reference. */
function countLinesByEvent(logs: readonly LogFile[], message: string): Map<string, number> {
  const counts = new Map<string, number>();
  const marker = `"message":${JSON.stringify(message)}`;
  for (const { lines } of logs.filter((file) => /processor\.log$/i.test(file.name))) {
    for (const line of lines) {
      if (!line.includes(marker)) continue;
      const ref = /"eventRef":"([^"]+)"/.exec(line)?.[1];
      if (ref) counts.set(ref, (counts.get(ref) ?? 0) + 1);
    }
  }
  return counts;
}

const CONTENT_MARK = /pii_[0-9a-f]{16}/;
const BASE64_MAC = /[A-Za-z0-9+/]{43}=/g;
const HEX_MAC = /\b[0-9a-f]{64}\b/g;

/** Lines (as `file:line: what`, never the content) that carry a secret, a body or a signature. */
export function scanLogs(logDir: string, sensitive: Evidence['sensitive'], logs: readonly LogFile[] = readLogs(logDir)): string[] {
  const leaks: string[] = [];
  for (const { name, lines } of logs) {
    lines.forEach((line, index) => {
      const where = `${name}:${index + 1}`;
      if (CONTENT_MARK.test(line)) leaks.push(`${where}: body content`);
      else if (sensitive.texts.some((text) => text.length >= 16 && line.includes(text))) leaks.push(`${where}: a secret or API key`);
      else if (/"(x-)?webhook-signature"\s*:/i.test(line)) leaks.push(`${where}: a signature header`);
      else if ([...(line.match(BASE64_MAC) ?? []), ...(line.match(HEX_MAC) ?? [])].some((token) => sensitive.signatureTokens.has(token)))
        leaks.push(`${where}: a signature`);
    });
  }
  return leaks;
}

/** Figures by provider, with a total, in the order first seen. */
class Figures {
  private readonly table = new Map<string, Record<Column, number>>();

  add(name: string, provider: Source, n = 1): void {
    const row = this.row(name);
    row[provider] += n;
    row.total += n;
  }

  set(name: string, column: Column, value: number): void {
    const row = this.row(name);
    if (column !== 'total') row.total += value - row[column];
    row[column] = value;
  }

  ensure(name: string): void {
    this.row(name);
  }

  rows(): Array<{ name: string; values: Record<Column, number> }> {
    return [...this.table].map(([name, values]) => ({ name, values }));
  }

  private row(name: string): Record<Column, number> {
    let row = this.table.get(name);
    if (!row) {
      row = { answerline: 0, echonova: 0, 'standard-webhooks': 0, batches: 0, total: 0 };
      this.table.set(name, row);
    }
    return row;
  }
}

/** The report as a text table. */
export function formatReport(report: ChaosReport): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const width = Math.max(...report.figures.map((f) => f.name.length), 40) + 2;
  const header = `${'figure'.padEnd(width)}${['answerline', 'echonova', 'std-webhooks', 'batches', 'total'].map((c) => c.padStart(13)).join('')}`;
  const lines = [
    `chaos run: seed ${report.seed}, ${n(report.deliveries)} result deliveries planned, ${(report.elapsedMs / 1000).toFixed(1)} s`,
    '',
    header,
    '-'.repeat(header.length),
    ...report.figures.map(
      (f) =>
        `${f.name.padEnd(width)}${([...SOURCES, 'total'] as Column[]).map((c) => (f.values[c] === 0 && c !== 'total' ? '·' : n(f.values[c])).padStart(13)).join('')}`,
    ),
    '',
    'faults injected',
    '---------------',
    ...Object.entries(report.faults).map(([kind, count]) => `${kind.replace(/_/g, ' ').padEnd(width)}${n(count).padStart(13)}`),
    '',
    'metrics the handlers emitted',
    '----------------------------',
    ...REPORTED_METRICS.map((name) => `${name.padEnd(width)}${n(report.metrics[name] ?? 0).padStart(13)}`),
    '',
    `elapsed ${(report.elapsedMs / 1000).toFixed(1)} s`,
    ...(report.notes.length ? ['', 'notes', ...report.notes.map((note) => `  - ${note}`)] : []),
    '',
    report.violations.length ? `VIOLATIONS (${report.violations.length})` : 'violations: none',
    ...report.violations.map((v) => `  ✗ ${v}`),
  ];
  return lines.join('\n');
}
