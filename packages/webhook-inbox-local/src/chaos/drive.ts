/**
 * Drives a fault-injection run along its plan: the providers' work as the app submits it and the
 * providers finish it (with altered copies, concurrent copies and armed crashes), the batches, the
 * test deliveries, the adversary, the outages, the rate limits and AWS's own faults, each at its
 * plan time. The plan's clock stands still while the twin is behind (timeline.ts).
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsCall } from '../faults/proxy';
import type { LocalFaults } from '../aws/services';
import { DeliveryRecord, SignedRequest, sleep } from '../providers/sender';
import { floodRoute, sendAdversarial } from './adversary';
import type { AdversaryRecord, FaultKind } from './audit';
import { ROUTE_FLOOD, type AdversaryKind, type AwsFaultKind, type Provider } from './plan';
import type { ChaosRig } from './setup';
import { Timeline } from './timeline';

/** First attempts not done yet, across the providers, beyond which new work waits. */
const BACKLOG_LIMIT = 120;
/** Messages in the work queue beyond which new work waits. */
const QUEUE_DEPTH_LIMIT = 300;

/** The fault proxy each of AWS's faults is injected at. */
export const AWS_FAULT_PROXY: Record<AwsFaultKind, keyof LocalFaults> = {
  dynamodb_throttled: 'dynamodb',
  unprocessed_items: 'dynamodb',
  unprocessed_keys: 'dynamodb',
  index_lag: 'dynamodb',
  sqs_throttled: 'sqs',
  send_batch_entries_failed: 'sqs',
  eventbridge_throttled: 'eventBridge',
  put_events_entries_failed: 'eventBridge',
};

const ADVERSARY_FAULT: Record<AdversaryKind, FaultKind> = {
  stale: 'stale_timestamp',
  future: 'future_timestamp',
  forged: 'forged_signature',
  replay: 'replay',
};

export interface Driving {
  /** Resolves once the plan has run out and every provider is done sending. */
  readonly done: Promise<void>;
  /** The adversary's requests and how they were answered, as they come. */
  readonly adversary: readonly AdversaryRecord[];
  /** Starts nothing more and stops watching (once the inbox has settled). */
  stop(): void;
}

/** The plan's clock: an action at a plan time, and one a real delay after another. */
interface Schedule {
  at(ms: number, action: () => Promise<unknown> | unknown): void;
  later<T>(ms: number, action: () => Promise<T> | T): Promise<T>;
}

export function startDriving(rig: ChaosRig): Driving {
  const { senders, state } = rig;
  const t0 = Date.now();
  // The plan's clock stands still while the providers cannot get their first attempts out, or the
  // work queue is deep: the pace adapts to the machine instead of piling up a backlog that the
  // sweep would only enqueue again.
  const timeline = new Timeline(
    () => senders.reduce((sum, sender) => sum + sender.unsent, 0) > BACKLOG_LIMIT || state.queueDepth > QUEUE_DEPTH_LIMIT,
    (error) => state.errors.push(`${(error as Error).name}: ${(error as Error).message}`),
  );
  const schedule: Schedule = {
    at: (ms, action) => timeline.at(ms, action),
    later: (ms, action) => sleep(ms).then(action),
  };
  const depth = sampleQueueDepth(rig);
  const recent = new RecentDeliveries(rig);
  scheduleResults(rig, schedule, recent);
  scheduleBatches(rig, schedule);
  scheduleProviderSide(rig, schedule);
  const adversary = scheduleAdversary(rig, schedule, recent);
  scheduleOutages(rig, schedule);
  scheduleAwsFaults(rig, schedule);
  const watchers = [depth, ...watch(rig, timeline, t0)];
  let stopped = false;
  // GitHub and Stripe send through the plan's window, a tenth of its results each, a third of them into outages.
  const providerLogs = rig.providerLogs.drive(
    Math.max(10, Math.round(rig.plan.deliveries / 10)),
    1 / 3,
    rig.plan.windowMs / Math.max(10, Math.round(rig.plan.deliveries / 10)),
    () => stopped,
  );
  const done = (async () => {
    await timeline.run();
    await providerLogs;
    await Promise.all(senders.map((sender) => sender.idle()));
    rig.log(`chaos: providers done after ${((Date.now() - t0) / 1000).toFixed(0)} s; waiting for the inbox to settle`);
  })();
  return {
    done,
    adversary,
    stop: () => {
      stopped = true;
      watchers.forEach((watcher) => clearInterval(watcher));
      timeline.stop();
    },
  };
}

/** The work queue's depth, sampled every second: the plan's clock waits while it is deep. */
function sampleQueueDepth({ twin, sqs, state }: ChaosRig): NodeJS.Timeout {
  return setInterval(() => {
    sqs
      .send(
        new GetQueueAttributesCommand({
          QueueUrl: twin.workQueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      )
      .then((out) => {
        state.queueDepth = Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
      })
      .catch(() => undefined);
  }, 1_000);
}

/** The operator watching the webhook (one disabled outside an outage is enabled again), and the run's progress lines. */
function watch(rig: ChaosRig, timeline: Timeline, t0: number): NodeJS.Timeout[] {
  const { echonova, senders, state, twin, log } = rig;
  const watcher = setInterval(() => {
    if (!echonova.webhook.enabled && !state.anyOutage()) reenableWebhook(rig);
  }, 5_000);
  const progress = setInterval(() => {
    const sent = senders.reduce((sum, sender) => sum + sender.deliveries.length, 0);
    const outstanding = senders.reduce((sum, sender) => sum + sender.outstanding, 0);
    log(
      `chaos: +${((Date.now() - t0) / 1000).toFixed(0)} s (plan ${(timeline.planMs / 1000).toFixed(0)} s)  ${sent} deliveries queued, ${outstanding} pending at the providers, ${state.queueDepth} in the work queue, ${twin.eventBridge.events.length} effects`,
    );
  }, 10_000);
  return [watcher, progress];
}

/**
 * What the providers delivered lately (for replays), and the faults a result delivery carries: the
 * altered copies sent once it is final, and its first attempt's concurrent copies or armed crash.
 */
class RecentDeliveries {
  readonly byProvider = new Map<Provider, { eventKey: string; request: SignedRequest }[]>();
  private readonly alteredOf = new Map<string, number>();

  constructor(private readonly rig: ChaosRig) {
    for (const entry of rig.plan.altered)
      this.alteredOf.set(`${entry.provider}:${entry.index}`, (this.alteredOf.get(`${entry.provider}:${entry.index}`) ?? 0) + 1);
  }

  /** Keeps a delivered result's last request, for the adversary to replay. */
  remember(provider: Provider, delivery: DeliveryRecord): DeliveryRecord {
    const { state } = this.rig;
    const request = state.lastRequest.get(delivery.id);
    state.lastRequest.delete(delivery.id);
    if (delivery.state !== 'delivered' || delivery.kind !== 'result' || !request) return delivery;
    const list = this.byProvider.get(provider) ?? [];
    list.push({ eventKey: delivery.eventKey, request });
    if (list.length > 100) list.shift();
    this.byProvider.set(provider, list);
    return delivery;
  }

  /** Sends the altered copies the plan gives the `index`-th result of a provider, once the original was delivered. */
  async sendAltered(provider: Provider, index: number, original: DeliveryRecord, send: () => Promise<DeliveryRecord>): Promise<void> {
    for (let i = 0; i < (this.alteredOf.get(`${provider}:${index}`) ?? 0); i++) {
      if (original.state !== 'delivered') {
        this.rig.state.alteredSkipped++;
        continue;
      }
      await sleep(300);
      this.rig.faults.add('altered_duplicate');
      await send();
    }
  }

  /** Arms the first attempt of a delivery the plan names: concurrent copies, or a crash right after its write. */
  arm(label: string, delivery: () => DeliveryRecord | undefined): void {
    const { plan, state } = this.rig;
    // The first attempt leaves after this tick: its record exists, its request is not signed yet.
    const record = delivery();
    if (!record) return;
    const copies = plan.concurrentCopies.get(label);
    if (copies) state.copies.set(record.id, copies);
    if (plan.crashAfterWrite.has(label)) state.crashOnFirstAttempt.add(record.id);
  }
}

/** Each provider's results, as the app submits the work and the provider finishes it. */
function scheduleResults({ plan, app, answerline, echonova, standardWebhooks, faults }: ChaosRig, { at, later }: Schedule, recent: RecentDeliveries): void {
  plan.answerlineJobs.forEach((job, index) => {
    job.tasks.forEach((planned, k) => {
      at(planned.createAt, async () => {
        const task = await app.submitAnswerline(planned.idempotencyKey);
        await later(planned.startAfter, () => answerline.startTask(task.id));
        const delivery = await later(planned.finishAfter - planned.startAfter, () => {
          const done = answerline.finishTask(task.id, planned.status);
          recent.arm(`answerline:${planned.idempotencyKey}`, () => task.delivery);
          return done;
        });
        recent.remember('answerline', delivery);
        if (k === job.tasks.length - 1) await recent.sendAltered('answerline', index, delivery, () => answerline.sendAltered(task.id));
      });
    });
  });
  plan.echonovaJobs.forEach((planned, index) => {
    at(planned.createAt, async () => {
      const job = await app.submitEchonova(planned.label);
      await later(planned.startAfter, () => echonova.startJob(job.jobId));
      const delivery = await later(planned.finishAfter - planned.startAfter, () => {
        const done = echonova.finishJob(job.jobId, planned.status);
        recent.arm(`echonova:${planned.label}`, () => job.delivery);
        return done;
      });
      recent.remember('echonova', delivery);
      await recent.sendAltered('echonova', index, delivery, () => echonova.sendAltered(job.jobId));
    });
  });
  plan.events.forEach((planned, index) => {
    at(planned.at, async () => {
      const { event, delivered: done } = standardWebhooks.emit(planned.label, { missing: planned.missing, poison: planned.poison });
      recent.arm(`standard-webhooks:${planned.label}`, () => event.delivery);
      if (planned.poison) faults.add('poison_delivery');
      if (planned.missing) faults.add('missing_resource');
      const delivery = await done;
      recent.remember('standard-webhooks', delivery);
      await recent.sendAltered('standard-webhooks', index, delivery, () => standardWebhooks.sendAltered(event.id));
    });
  });
}

/** The batches as the app submits them and the batch API processes, cancels or expires them; the batch API's failures. */
function scheduleBatches({ plan, random, app, apis, faults, submittedBatches }: ChaosRig, { at, later }: Schedule): void {
  plan.batches.forEach((planned) => {
    at(planned.createAt, async () => {
      const r = random.stream(`batch/${planned.label}`);
      const customIds = Array.from({ length: planned.size }, (_, i) => `${planned.label}-req-${i}`);
      const batch = await app.submitBatch(
        customIds,
        customIds.filter(() => r.chance(planned.erroredShare)),
      );
      submittedBatches.push(batch);
      await later(planned.partAfter, () => apis.batches.finish(batch.id, customIds.slice(0, Math.round(planned.size * planned.partShare))));
      await later(planned.endAfter - planned.partAfter, () => {
        if (planned.end === 'canceled') {
          faults.add('batch_canceled');
          apis.batches.cancel(batch.id);
        } else if (planned.end === 'expired') {
          faults.add('batch_expired');
          apis.batches.expire(batch.id);
        } else apis.batches.end(batch.id);
      });
    });
  });
  for (const fault of plan.batchApiFaults) {
    at(fault.at, () => {
      faults.add('batch_api_error', fault.times);
      apis.batches.inject(fault.status, { times: fault.times, ...(fault.status === 429 ? { retryAfterSeconds: 1 } : {}) });
    });
  }
}

/** A submission whose deadline passes unread, and the providers' test deliveries. */
function scheduleProviderSide({ plan, app, answerline, faults, deadlineTaskIds }: ChaosRig, { at }: Schedule): void {
  for (const planned of plan.deadlineTasks) {
    at(planned.at, async () => {
      // Submitted and never started by the provider: its result is still unread at its deadline.
      const task = await app.submitAnswerline(planned.label, Date.now() + planned.deadlineMs);
      deadlineTaskIds.push(task.id);
      faults.add('deadline_unread');
    });
  }
  for (const test of plan.tests) {
    at(test.at, async () => {
      faults.add('test_delivery');
      await answerline.sendTestDelivery(test.label);
    });
  }
}

/** The adversary's stale, future, forged and replayed requests; the records fill as they are answered. */
function scheduleAdversary(rig: ChaosRig, { at }: Schedule, recent: RecentDeliveries): AdversaryRecord[] {
  const adversary: AdversaryRecord[] = [];
  for (const entry of rig.plan.adversary) {
    at(entry.at, async () => {
      const record = await sendAdversarial(rig, entry.kind, entry.provider, entry.label, recent.byProvider);
      if (record) {
        adversary.push(record);
        rig.faults.add(ADVERSARY_FAULT[entry.kind]);
      }
    });
  }
  at(rig.plan.routeFloodAt, async () => {
    rig.log(`chaos: ${ROUTE_FLOOD.requests} forged requests at once on /hooks/${ROUTE_FLOOD.provider}`);
    rig.faults.add('route_flood');
    rig.state.routeFlood.push(...(await floodRoute(rig)));
  });
  return adversary;
}

/** An Echonova webhook disabled by failures, enabled again by the operator. */
function reenableWebhook({ echonova, faults }: Pick<ChaosRig, 'echonova' | 'faults'>): void {
  if (echonova.enableWebhook()) faults.add('webhook_reenabled');
}

/**
 * The functions' store, their queue, the endpoint itself for longer than the retry window, then the
 * processing's downstream for longer than a row's retry budget; each outage lasts its length in real time, whatever the plan's clock does meanwhile. And 429s
 * from the providers' task APIs.
 */
function scheduleOutages(rig: ChaosRig, { at, later }: Schedule): void {
  const { plan, profile, twin, state, faults, apis, log } = rig;
  const reenable = () => reenableWebhook(rig);
  at(plan.storeOutage.at, async () => {
    faults.add('store_outage');
    state.storeDown = true;
    twin.faults.dynamodb.takeDown();
    log(`chaos: store down for ${plan.storeOutage.ms} ms`);
    await sleep(plan.storeOutage.ms);
    twin.faults.dynamodb.restore();
    state.storeDown = false;
    await later(profile.reenableAfterMs, reenable);
  });
  at(plan.queueOutage.at, async () => {
    faults.add('queue_outage');
    state.queueDown = true;
    state.queueOutage = { downAt: Date.now() };
    twin.faults.sqs.takeDown();
    log(`chaos: queue down for ${plan.queueOutage.ms} ms`);
    await sleep(plan.queueOutage.ms);
    twin.faults.sqs.restore();
    state.queueOutage.upAt = Date.now();
    state.queueDown = false;
  });
  at(plan.longOutage.at, async () => {
    faults.add('long_outage');
    state.endpointDown = true;
    log(`chaos: endpoint down for ${plan.longOutage.ms} ms (longer than the retry windows)`);
    await sleep(plan.longOutage.ms);
    state.endpointDown = false;
    await later(profile.reenableAfterMs, reenable);
  });
  at(plan.downstreamOutage.at, () => downstreamOutage(rig));
  for (const limit of plan.rateLimits) {
    at(limit.at, () => (limit.provider === 'answerline' ? apis.answerline : apis.echonova).rateLimit({ times: limit.times, retryAfterSeconds: 1 }));
  }
}

/**
 * The processing's downstream down: every PutEvents the processor makes (its effects, the one
 * thing each row needs from downstream) is answered EventBridge's own server error, for longer than
 * a row's retry budget; nothing else is changed (the reconciler's events go through).
 */
async function downstreamOutage({ plan, twin, state, faults, log }: ChaosRig): Promise<void> {
  const key = twin.iam?.credentials.processor?.accessKeyId;
  faults.add('downstream_outage');
  state.downstreamOutage = { downAt: Date.now() };
  const fault = twin.faults.eventBridge.fail({ operations: ['PutEvents'], ...(key ? { where: (call: AwsCall) => call.accessKeyId === key } : {}) });
  log(`chaos: the processing's downstream (PutEvents) fails every row for ${plan.downstreamOutage.ms} ms`);
  await sleep(plan.downstreamOutage.ms);
  fault.stop();
  state.downstreamOutage.upAt = Date.now();
  log(`chaos: the downstream is back after failing ${fault.injected} PutEvents calls`);
}

/** AWS's own faults, through the fault proxies between the functions and the services; each function is told apart by its role's access key. */
function scheduleAwsFaults({ plan, twin, state, log }: ChaosRig, { at }: Schedule): void {
  const callers = twin.iam?.credentials;
  for (const fault of plan.awsFaults) {
    at(fault.at, async () => {
      const proxy = twin.faults[AWS_FAULT_PROXY[fault.kind]];
      const key = fault.caller && callers?.[fault.caller]?.accessKeyId;
      const scope = { operations: fault.operations, ...(key ? { where: (call: AwsCall) => call.accessKeyId === key } : {}) };
      if (fault.kind === 'index_lag') {
        log(`chaos: the indexes lag ${fault.lagMs} ms behind their tables${fault.ms === undefined ? '' : ` for ${fault.ms} ms`}`);
        proxy.lagIndexes(fault.lagMs!);
        if (fault.ms === undefined) return;
        await sleep(fault.ms);
        proxy.lagIndexes(0);
      } else if (fault.error === undefined) {
        proxy.refuseEntries({ ...scope, calls: fault.calls });
      } else if (fault.ms === undefined) {
        proxy.throttle({ ...scope, calls: fault.calls, error: fault.error });
      } else {
        log(`chaos: ${fault.operations.join(', ')} of the ${fault.caller ?? 'functions'} throttled (${fault.error}) for ${fault.ms} ms`);
        const edge = fault.caller === 'verifier' && fault.kind === 'dynamodb_throttled';
        if (edge) state.storeThrottled = true;
        proxy.throttle({ ...scope, forMs: fault.ms, error: fault.error });
        await sleep(fault.ms!);
        if (edge) state.storeThrottled = false;
      }
    });
  }
}
