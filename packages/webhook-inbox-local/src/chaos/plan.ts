/**
 * The plan of a fault-injection run, drawn up front from the seed: what each simulated provider
 * completes and when, which deliveries carry which fault, and when the store, the queue and the
 * endpoint go down. Everything here depends on the seed and the options only, never on timing,
 * so a run is repeatable from its seed (the interleaving of a live system still varies a little).
 */
import type { ThrottlingError } from '../faults/proxy';
import { Random } from '../providers/random';
import type { ChaosProfile } from './profile';

export interface PlannedTask {
  readonly idempotencyKey: string;
  /** When it is submitted, ms after the start. */
  readonly createAt: number;
  /** When it starts and finishes, ms after its creation. */
  readonly startAfter: number;
  readonly finishAfter: number;
  readonly status: 'COMPLETED' | 'FAILED';
}

export interface PlannedJob {
  readonly key: string;
  readonly tasks: readonly PlannedTask[];
  /** Its older tasks finish after its newest one: results arrive in reverse order of creation. */
  readonly reverse: boolean;
}

export interface PlannedEchonovaJob {
  readonly label: string;
  readonly createAt: number;
  readonly startAfter: number;
  readonly finishAfter: number;
  readonly status: 'completed' | 'failed';
}

export interface PlannedEvent {
  readonly label: string;
  readonly at: number;
  readonly missing: boolean;
  readonly poison: boolean;
}

export type Provider = 'answerline' | 'echonova' | 'standard-webhooks';

/** A batch at the simulated batch API: its requests, and how it ends. */
export interface PlannedBatch {
  readonly label: string;
  readonly size: number;
  /** When the app creates and records it, ms after the start. */
  readonly createAt: number;
  /** When part of its requests are processed, then when it ends, ms after its creation. */
  readonly partAfter: number;
  readonly endAfter: number;
  /** Share of its requests processed at `partAfter`. */
  readonly partShare: number;
  /** `ended`: every request processed; `canceled` or `expired`: the rest end so. */
  readonly end: 'ended' | 'canceled' | 'expired';
  /** Share of its requests that error once processed. */
  readonly erroredShare: number;
}

/** An Answerline task recorded with a short deadline that the provider never starts: its deadline passes unread. */
export interface PlannedDeadlineTask {
  readonly label: string;
  readonly at: number;
  /** Its deadline, ms after its submission. */
  readonly deadlineMs: number;
}
/** What AWS does and the emulators never do, injected through the fault proxies (`src/faults/proxy.ts`, docs/CHAOS.md). */
export type AwsFaultKind =
  | 'dynamodb_throttled'
  | 'sqs_throttled'
  | 'eventbridge_throttled'
  | 'unprocessed_items'
  | 'unprocessed_keys'
  | 'send_batch_entries_failed'
  | 'put_events_entries_failed'
  | 'index_lag';

/** One of AWS's faults: throttling (for a while, or a number of calls), partial batch results (a number of calls), or the indexes lagging for a while. */
export interface PlannedAwsFault {
  readonly kind: AwsFaultKind;
  /** When it starts, ms after the start. */
  readonly at: number;
  /** How long it lasts, real ms (throttling of the verifier and the reconciler); absent: to the end of the run, or as many calls as `calls`. */
  readonly ms?: number;
  /** How many calls it changes (the processor's throttling, partial batch results). */
  readonly calls?: number;
  /** The function whose calls it changes; absent: any. */
  readonly caller?: 'verifier' | 'processor' | 'reconciler';
  readonly operations: readonly string[];
  readonly error?: ThrottlingError;
  /** How far the indexes lag, ms. */
  readonly lagMs?: number;
}

/** Forged requests sent within one second, once a run. */
export const FORGED_FLOOD = 15;

/**
 * A flood of forged requests on a route of its own, at once, far past the route's allowance (its
 * throttle, from the template), while the other providers deliver on theirs. The allowance is
 * small: what it lets through still reaches the verifier, whose few instances the run shares.
 */
export const ROUTE_FLOOD = { provider: 'flooded', requests: 300, throttle: { rateLimit: 1, burstLimit: 5 } } as const;

export type AdversaryKind = 'stale' | 'future' | 'forged' | 'replay';

export interface Window {
  readonly at: number;
  readonly ms: number;
}

export interface Plan {
  readonly seed: number;
  readonly deliveries: number;
  readonly profile: ChaosProfile;
  /** When the last planned result is created, ms after the start. */
  readonly windowMs: number;
  readonly answerlineJobs: readonly PlannedJob[];
  readonly echonovaJobs: readonly PlannedEchonovaJob[];
  readonly events: readonly PlannedEvent[];
  /** Answerline dashboard test deliveries. */
  readonly tests: readonly { label: string; at: number }[];
  /** Altered duplicates, by provider: the index of the result they alter, sent once its delivery is final. */
  readonly altered: readonly { provider: Provider; index: number }[];
  readonly adversary: readonly { kind: AdversaryKind; provider: Provider; at: number; label: string }[];
  /** When the flood of `ROUTE_FLOOD` goes out, ms after the start. */
  readonly routeFloodAt: number;
  readonly storeOutage: Window;
  readonly queueOutage: Window;
  readonly longOutage: Window;
  /** The processing's downstream (the effect target, EventBridge's PutEvents from the processor) fails every row; real ms. */
  readonly downstreamOutage: Window;
  /** 429 Too Many Requests injected into a task API. */
  readonly rateLimits: readonly { provider: 'answerline' | 'echonova'; at: number; times: number }[];
  /** Labels of result deliveries whose first attempt is sent as concurrent identical copies, and how many. */
  readonly concurrentCopies: ReadonlyMap<string, number>;
  /** Labels of result deliveries whose first attempt kills the verifier right after its inbox write. */
  readonly crashAfterWrite: ReadonlySet<string>;
  /** One processor invocation in this many dies mid-batch. */
  readonly workerCrashEvery: number;
  readonly batches: readonly PlannedBatch[];
  /** Failures injected into the batch API (500, 429), each for `times` requests. */
  readonly batchApiFaults: readonly { at: number; status: number; times: number }[];
  readonly deadlineTasks: readonly PlannedDeadlineTask[];
  /** AWS's own faults, by when they start. */
  readonly awsFaults: readonly PlannedAwsFault[];
}

/** Share of the result deliveries per provider. */
const SHARES = { answerline: 0.45, echonova: 0.25, standardWebhooks: 0.3 };

export function makePlan(seed: number, deliveries: number, profile: ChaosProfile): Plan {
  const random = new Random(seed).stream('plan');
  const fullRateMs = Math.max(Math.round((deliveries / profile.ratePerSecond) * 1000), minimumWindowMs(profile));
  // The faults, in order: store down, queue down, the endpoint down for longer than the retry
  // window, then the downstream down for longer than a row's retry budget.
  const storeOutage = { at: Math.round(fullRateMs * 0.15), ms: profile.storeOutageMs };
  const queueOutage = { at: Math.max(Math.round(fullRateMs * 0.3), storeOutage.at + storeOutage.ms + 3_000), ms: profile.queueOutageMs };
  const longOutage = { at: Math.max(Math.round(fullRateMs * 0.5), queueOutage.at + queueOutage.ms + 3_000), ms: profile.longOutageMs };
  // Not before the rows the queue outage stranded came due and were enqueued again: a row the
  // breaker defers is enqueued again later, its clock restarted, which is not what stranded it.
  const downstreamOutage = {
    at: Math.max(
      Math.round(fullRateMs * 0.7),
      longOutage.at + longOutage.ms + 3_000,
      queueOutage.at + queueOutage.ms + profile.sweepAfterSeconds * 1000 + 5_000,
    ),
    ms: profile.downstreamOutageMs,
  };
  // Results keep coming until the downstream is back: rows stored during the outage wait too.
  const windowMs = Math.max(fullRateMs, downstreamOutage.at + downstreamOutage.ms);
  const awsFaults = planAwsFaults(windowMs, [storeOutage, queueOutage, longOutage, downstreamOutage]);
  // The store throttling the verifier answers 503 like an outage: nothing that must be answered otherwise is sent then.
  const storeThrottled = awsFaults
    .filter((fault) => fault.kind === 'dynamodb_throttled' && fault.caller === 'verifier')
    .map((fault) => ({ at: fault.at, ms: fault.ms! }));
  const inOutage = (t: number) =>
    [storeOutage, queueOutage, longOutage, downstreamOutage, ...storeThrottled].some((w) => t >= w.at - 500 && t <= w.at + w.ms + 1_500);
  /** A time outside the outages, within the first `share` of the window. */
  const calmTime: CalmTime = (share = 1) => {
    for (;;) {
      const t = Math.round(random.between(500, windowMs * share));
      if (!inOutage(t)) return t;
    }
  };

  const answerlineTasks = Math.round(deliveries * SHARES.answerline);
  const echonovaCount = Math.round(deliveries * SHARES.echonova);
  const eventCount = deliveries - answerlineTasks - echonovaCount;
  // Poison rows are Standard Webhooks events whose authoritative read has no resource id: an
  // Answerline body that processing could not read is refused at the edge, never stored.
  const poisonEvents = Math.max(3, Math.round(deliveries * 0.0015));

  const answerlineJobs = planAnswerlineJobs(random, answerlineTasks, windowMs, profile);
  const echonovaJobs: PlannedEchonovaJob[] = Array.from({ length: echonovaCount }, (_, i) => {
    const startAfter = Math.round(random.between(20, 200));
    return {
      label: `en-${i}`,
      createAt: Math.round(random.between(0, windowMs)),
      startAfter,
      finishAfter: startAfter + Math.round(random.between(0.02, 0.5) * profile.echonovaRunMs),
      status: random.chance(0.85) ? 'completed' : 'failed',
    };
  });
  const events: PlannedEvent[] = Array.from({ length: eventCount }, (_, i) => {
    // Poison goes early: it takes maxReceiveCount visibility timeouts to reach the DLQ.
    const poison = i < poisonEvents;
    return { label: `sw-${i}`, at: poison ? calmTime(0.4) : Math.round(random.between(0, windowMs)), missing: !poison && random.chance(0.03), poison };
  });
  const tests = Array.from({ length: Math.max(3, Math.round(deliveries * 0.003)) }, (_, i) => ({ label: `test-${i}`, at: calmTime() }));

  const alteredPer = Math.max(1, Math.round(deliveries * 0.001));
  const altered: { provider: Provider; index: number }[] = [];
  for (let i = 0; i < alteredPer; i++) {
    altered.push({ provider: 'answerline', index: random.int(answerlineJobs.length) });
    altered.push({ provider: 'echonova', index: random.int(echonovaJobs.length) });
    altered.push({ provider: 'standard-webhooks', index: poisonEvents + random.int(events.length - poisonEvents) });
  }
  const adversary = planAdversary(deliveries, windowMs, calmTime);
  const rateLimits: Plan['rateLimits'] = [
    // When the deliveries that died in the long outage come due for polling.
    ...[0.2, 0.5, 0.8].map((share) => ({
      provider: 'answerline' as const,
      at: longOutage.at + profile.polling.answerline.horizon * 1000 + Math.round(longOutage.ms * share),
      times: 2,
    })),
    { provider: 'echonova', at: longOutage.at + profile.polling.echonova.horizon * 1000 + Math.round(longOutage.ms * 0.5), times: 2 },
  ];
  const { concurrentCopies, crashAfterWrite } = planFaultyFirstAttempts(seed, answerlineJobs, echonovaJobs, events);
  const { batches, batchApiFaults } = planBatches(seed, deliveries, calmTime);
  // Well inside the run, and shorter than the deadline warning: counted near its deadline from its first check.
  const deadlineTasks: PlannedDeadlineTask[] = [{ label: 'deadline-0', at: calmTime(0.3), deadlineMs: 12_000 }];

  return {
    seed,
    deliveries,
    profile,
    windowMs,
    answerlineJobs,
    echonovaJobs,
    events,
    tests,
    altered,
    adversary,
    routeFloodAt: calmTime(0.5),
    storeOutage,
    queueOutage,
    longOutage,
    downstreamOutage,
    rateLimits,
    concurrentCopies,
    crashAfterWrite,
    // Some sixty crashes in a default run, a dozen in a small one (each costs a cold start).
    workerCrashEvery: Math.min(100, Math.max(20, Math.round(deliveries / 150))),
    batches,
    batchApiFaults,
    deadlineTasks,
    awsFaults,
  };
}

/** A time outside the outages, within the first `share` of the window (each call draws from the plan's stream). */
type CalmTime = (share?: number) => number;

/** Answerline's jobs of one to three tasks, some whose results arrive in reverse order of creation. */
function planAnswerlineJobs(random: Random, answerlineTasks: number, windowMs: number, profile: ChaosProfile): PlannedJob[] {
  const answerlineJobs: PlannedJob[] = [];
  let planned = 0;
  for (let i = 0; planned < answerlineTasks; i++) {
    const roll = random.next();
    const size = Math.min(roll < 0.7 ? 1 : roll < 0.9 ? 2 : 3, answerlineTasks - planned);
    const key = `job-${i}`;
    const start = Math.round(random.between(0, windowMs));
    const reverse = size > 1 && random.chance(0.3);
    const tasks: PlannedTask[] = [];
    let createAt = start;
    for (let k = 0; k < size; k++) {
      const newest = k === size - 1;
      const startAfter = Math.round(random.between(20, 200));
      const finishAfter = startAfter + Math.round(random.between(0.05, 0.6) * profile.answerlineRunMs);
      // The newest task completes most often; an older one failed (hence the resubmission) or completed too.
      const status = random.chance(newest ? 0.85 : 0.35) ? 'COMPLETED' : 'FAILED';
      tasks.push({ idempotencyKey: k === 0 ? key : `${key}-r${k}`, createAt, startAfter, finishAfter, status });
      createAt += Math.round(random.between(150, 600));
    }
    if (reverse) {
      // The older tasks finish after the newest one: their results arrive last.
      const newest = tasks[size - 1];
      const newestDone = newest.createAt + newest.finishAfter;
      for (let k = 0; k < size - 1; k++) {
        const task = tasks[k];
        tasks[k] = { ...task, finishAfter: newestDone - task.createAt + Math.round((size - 1 - k) * random.between(800, 1_500)) };
      }
    }
    answerlineJobs.push({ key, tasks, reverse });
    planned += size;
  }
  return answerlineJobs;
}

/** Stale, future, forged and replayed requests at calm times, and a flood of forgeries within a second. */
function planAdversary(deliveries: number, windowMs: number, calmTime: CalmTime): Plan['adversary'] {
  const adversary: Array<Plan['adversary'][number]> = [];
  const providers: Provider[] = ['answerline', 'echonova', 'standard-webhooks'];
  const adversaryCounts: Record<AdversaryKind, number> = {
    stale: Math.max(3, Math.round(deliveries * 0.002)),
    future: Math.max(3, Math.round(deliveries * 0.001)),
    forged: Math.max(3, Math.round(deliveries * 0.002)),
    replay: Math.max(3, Math.round(deliveries * 0.003)),
  };
  for (const kind of Object.keys(adversaryCounts) as AdversaryKind[]) {
    for (let i = 0; i < adversaryCounts[kind]; i++) {
      // Replays repeat something already delivered: not in the first tenth of the run.
      const at = kind === 'replay' ? Math.max(calmTime(), Math.round(windowMs * 0.1)) : calmTime();
      adversary.push({ kind, provider: providers[i % providers.length], at, label: `${kind}-${i}` });
    }
  }
  // A flood of forgeries within a second, more than an operator would see by chance: it must page.
  const floodAt = calmTime();
  for (let i = 0; i < FORGED_FLOOD; i++)
    adversary.push({ kind: 'forged', provider: providers[i % providers.length], at: floodAt + i * 50, label: `flood-${i}` });
  return adversary;
}

/** Result deliveries whose first attempt goes out as concurrent copies, or kills the verifier right after its write. */
function planFaultyFirstAttempts(
  seed: number,
  answerlineJobs: readonly PlannedJob[],
  echonovaJobs: readonly PlannedEchonovaJob[],
  events: readonly PlannedEvent[],
): Pick<Plan, 'concurrentCopies' | 'crashAfterWrite'> {
  // Labels of result deliveries (`answerline:<key>`, `echonova:<label>`, `standard-webhooks:<label>`), in plan order.
  const resultLabels = [
    ...answerlineJobs.flatMap((job) => job.tasks.map((task) => `answerline:${task.idempotencyKey}`)),
    ...echonovaJobs.map((job) => `echonova:${job.label}`),
    ...events.filter((event) => !event.poison).map((event) => `standard-webhooks:${event.label}`),
  ];
  const pickLabels = (share: number, minimum: number, stream: string) => {
    const pool = new Random(seed).stream(stream).shuffle([...resultLabels]);
    return pool.slice(0, Math.max(minimum, Math.round(resultLabels.length * share)));
  };
  const concurrentCopies = new Map(pickLabels(0.02, 3, 'concurrent').map((label, i) => [label, 2 + (i % 2)] as const));
  const crashAfterWrite = new Set(pickLabels(0.007, 5, 'crash-after-write'));
  return { concurrentCopies, crashAfterWrite };
}

/**
 * Batches: one large enough for several result pages (100 a page), one ended in two steps, one
 * cancelled part-way and one expired part-way; and failures of the batch API while they are read.
 */
function planBatches(seed: number, deliveries: number, calmTime: CalmTime): Pick<Plan, 'batches' | 'batchApiFaults'> {
  const batchRandom = new Random(seed).stream('batches');
  const ends: PlannedBatch['end'][] = ['ended', 'ended', 'canceled', 'expired'];
  const sizes = [Math.max(120, Math.round(deliveries * 0.04)), Math.max(30, Math.round(deliveries * 0.02)), 20, 15];
  const batches: PlannedBatch[] = ends.map((end, i) => ({
    label: `batch-${i}`,
    size: sizes[i],
    createAt: calmTime(0.3),
    partAfter: Math.round(batchRandom.between(1_000, 3_000)),
    endAfter: Math.round(batchRandom.between(4_000, 8_000)),
    partShare: end === 'ended' && i === 0 ? 1 : batchRandom.between(0.3, 0.6),
    end,
    erroredShare: batchRandom.between(0.05, 0.2),
  }));
  // While the results are being read: a 500 then a 429 for a few requests each.
  const batchApiFaults = batches.slice(0, 2).flatMap((batch, i) => [{ at: batch.createAt + batch.endAfter + 300, status: i === 0 ? 500 : 429, times: 2 }]);
  return { batches, batchApiFaults };
}

/**
 * AWS's own faults. Throttling of the verifier and the reconciler lasts a while, in a calm
 * stretch of its own (outside the outages and the other throttling), long enough that calls
 * exhaust the SDK's attempts (DynamoDB's throttling retries wait up to 1, 2 and 4 s) and the
 * handlers' own handling runs. The processor's runs out of time within a few seconds (its timeout
 * is compressed), so its throttling and every partial batch result are counted in calls: as many
 * calls in a row as the SDK attempts, whenever they come, so that a few batches and no healthy
 * row more than once are hit. The indexes lag for the whole run, far less than `sweepAfter`
 * (docs/DESIGN.md#invariant-5 says why that bounds it).
 */
function planAwsFaults(windowMs: number, outages: readonly Window[]): PlannedAwsFault[] {
  const [, queueOutage] = outages;
  const windows: Omit<PlannedAwsFault, 'at'>[] = [
    { kind: 'dynamodb_throttled', caller: 'verifier', operations: ['PutItem'], ms: 2_000, error: 'ProvisionedThroughputExceededException' },
    { kind: 'sqs_throttled', caller: 'verifier', operations: ['SendMessage'], ms: 2_500, error: 'RequestThrottled' },
    {
      kind: 'dynamodb_throttled',
      caller: 'reconciler',
      operations: ['Query', 'BatchGetItem', 'GetItem', 'UpdateItem', 'PutItem'],
      ms: 3_000,
      error: 'ThrottlingException',
    },
  ];
  const taken: Window[] = [...outages];
  const gap = 3_000;
  /** The first time from `share` of the window on whose stretch of `ms` meets no outage and no other throttling. */
  const calmStretch = (share: number, ms: number): number => {
    let at = Math.round(windowMs * share);
    while (taken.some((w) => at < w.at + w.ms + gap && at + ms + gap > w.at)) at += 250;
    taken.push({ at, ms });
    return at;
  };
  const share = (n: number) => Math.round(windowMs * n);
  // Longer than a reconciler run and the schedule between two (a lag is seen only by the next query), far shorter than sweepAfter.
  const lagMs = 5_000;
  const faults: PlannedAwsFault[] = [
    ...windows.map((fault, i) => ({ ...fault, at: calmStretch(0.1 + (0.8 * i) / windows.length, fault.ms!) })),
    { kind: 'dynamodb_throttled', at: share(0.2), caller: 'processor', operations: ['UpdateItem'], calls: 4, error: 'ProvisionedThroughputExceededException' },
    { kind: 'dynamodb_throttled', at: share(0.4), caller: 'processor', operations: ['BatchWriteItem'], calls: 4, error: 'ThrottlingException' },
    { kind: 'eventbridge_throttled', at: share(0.65), caller: 'processor', operations: ['PutEvents'], calls: 3, error: 'ThrottlingException' },
    {
      kind: 'sqs_throttled',
      at: queueOutage.at + queueOutage.ms,
      caller: 'reconciler',
      operations: ['SendMessage', 'SendMessageBatch'],
      calls: 3,
      error: 'ThrottlingException',
    },
    { kind: 'unprocessed_items', at: 0, operations: ['BatchWriteItem'], calls: 10 },
    { kind: 'unprocessed_keys', at: share(0.35), operations: ['BatchGetItem'], calls: 5 },
    // The sweep enqueues many rows at once after the queue was down: some entries of those batches are refused.
    { kind: 'send_batch_entries_failed', at: queueOutage.at + queueOutage.ms, operations: ['SendMessageBatch'], calls: 3 },
    { kind: 'put_events_entries_failed', at: share(0.55), operations: ['PutEvents'], calls: 5 },
    // For the whole run: what a lag changes shows only when a query comes within it after a write.
    { kind: 'index_lag', at: 0, operations: ['Query'], lagMs },
  ];
  return faults.sort((a, b) => a.at - b.at);
}

/** Room for the first three outages one after the other, with calm between them (the downstream's comes after, and the window reaches its end). */
function minimumWindowMs(profile: ChaosProfile): number {
  return Math.round((profile.storeOutageMs + profile.queueOutageMs + profile.longOutageMs + 8_000) / 0.7);
}
