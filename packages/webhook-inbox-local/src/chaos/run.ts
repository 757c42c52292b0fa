/**
 * The fault-injection run (`npm run chaos`, and a small fixed-seed run in `npm test`): the local
 * twin, with compressed timing and polling against the fake provider APIs, receives the
 * deliveries of three simulated providers (Answerline, Echonova, a Standard Webhooks sender with
 * an authoritative read) while every failure mode the design lists (docs/DESIGN.md#failure-modes) is injected; then the auditor
 * checks, from each provider's own record of what it completed, that nothing was lost, nothing
 * was processed twice, every job has the right winner, no altered body was accepted and no log
 * line carries a secret, a body or a signature.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { scanItems } from '../../../../lambda/shared/stores/dynamo';
import { EffectEvent, InboxAttr, InboxItemKind, ResultAttr } from '../../../../lib/contract';
import { decodeWorkMessage } from '../../../../lambda/shared/stores/work-queue';
import { rowDigestOf } from '../../../../lambda/shared/stores/inbox-store';
import { FakeAnswerlineApi } from '../providers/answerline/fake-api';
import { FakeEchonovaApi } from '../providers/echonova/fake-api';
import { FakeBatch, FakeMessageBatchesApi } from '../providers/message-batches/fake-api';
import { FakeResponsesApi } from '../providers/standard-webhooks/fake-api';
import { InvocationTimeoutError, SandboxCrashedError } from '../aws/lambda/host';
import { ANSWERLINE, SimulatedAnswerline } from '../providers/answerline/simulator';
import { SimulatedApp } from '../providers/app';
import { ECHONOVA, echonovaJobEventKey, SimulatedEchonova } from '../providers/echonova/simulator';
import { Random } from '../providers/random';
import { DeliveryRecord, RetryingSender, SenderHooks, SignedRequest, SimulatedProviderOptions, sleep } from '../providers/sender';
import { signatureTokens, unixSeconds } from '../providers/signing';
import { SimulatedStandardWebhooks, STANDARD_WEBHOOKS } from '../providers/standard-webhooks/simulator';
import { InvocationFault, LOCAL_AWS, startTwin, Twin } from '../twin/twin';
import type { AwsCall, FaultProxy } from '../faults/proxy';
import type { LocalFaults } from '../aws/services';
import { AdversaryRecord, audit, ChaosReport, Evidence, FaultKind } from './audit';
import { AdversaryKind, AwsFaultKind, chaosProfile, makePlan, PlannedAwsFault, Provider } from './plan';
import { Timeline } from './timeline';

export interface ChaosOptions {
  readonly seed: number;
  /** Result deliveries the three providers complete (tests, altered copies and forgeries come on top). */
  readonly deliveries: number;
  /** Compresses time further (the providers' schedules, the outages, the twin's timeouts). @default 1 */
  readonly speed?: number;
  /** Result deliveries per second at most (the run slows down when the twin falls behind). @default 70 (40 when speed ≥ 2) */
  readonly ratePerSecond?: number;
  /** Where the twin writes its logs and ops config. @default a new temporary folder, removed afterwards unless keepState */
  readonly stateDir?: string;
  readonly keepState?: boolean;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
  /** How long to wait for the inbox to settle after the providers are done. @default 180 s */
  readonly drainTimeoutMs?: number;
}

/** The AWS operations after which an execution environment is killed (`X-Amz-Target`). */
const PUT_ITEM = 'DynamoDB_20120810.PutItem';
const UPDATE_ITEM = 'DynamoDB_20120810.UpdateItem';
const PUT_EVENTS = 'AWSEvents.PutEvents';
/** A batch's rows completed together: a crash right after leaves rows processed and their messages undeleted. */
const BATCH_WRITE_ITEM = 'DynamoDB_20120810.BatchWriteItem';
/** First attempts not done yet, across the providers, beyond which new work waits. */
const BACKLOG_LIMIT = 120;
/** Messages in the work queue beyond which new work waits. */
const QUEUE_DEPTH_LIMIT = 300;
const API_KEY_SECRETS = {
  answerline: 'chaos/answerline/api-key',
  echonova: 'chaos/echonova/api-key',
  standardWebhooks: 'chaos/standard-webhooks/api-key',
  batches: 'chaos/batches/api-key',
};
/** The inbox's name for the simulated batch API. */
export const BATCHES = 'batches';

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const profile = chaosProfile(options.speed ?? 1, options.ratePerSecond);
  const plan = makePlan(options.seed, options.deliveries, profile);
  const random = new Random(options.seed);
  const secrets = {
    answerline: `whsec_${random.stream('secret/answerline').bytes(32).toString('base64')}`,
    echonova: random.stream('secret/echonova').hex(64),
    'standard-webhooks': `whsec_${random.stream('secret/standard-webhooks').bytes(32).toString('base64')}`,
  };
  const apiKeys = {
    answerline: `al_${random.stream('key/answerline').hex(32)}`,
    echonova: `en_${random.stream('key/echonova').hex(32)}`,
    standardWebhooks: `sk_${random.stream('key/standard-webhooks').hex(32)}`,
    batches: `mb_${random.stream('key/batches').hex(32)}`,
  };
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'webhook-inbox-chaos-'));
  log(`chaos: seed ${options.seed}, ${options.deliveries} deliveries, window ${(plan.windowMs / 1000).toFixed(0)} s, state in ${stateDir}`);

  const faults = new FaultCounter();
  const state = new RunState();
  const answerlineApi = new FakeAnswerlineApi(apiKeys.answerline);
  const echonovaApi = new FakeEchonovaApi(apiKeys.echonova);
  const responsesApi = new FakeResponsesApi(apiKeys.standardWebhooks);
  const batchesApi = new FakeMessageBatchesApi(apiKeys.batches);
  answerlineApi.servedDigests = new Map();
  echonovaApi.servedDigests = new Map();
  await Promise.all([answerlineApi.start(), echonovaApi.start(), responsesApi.start(), batchesApi.start()]);
  const submittedBatches: FakeBatch[] = [];
  const deadlineTaskIds: string[] = [];

  let twin: Twin | undefined;
  const senders: RetryingSender[] = [];
  let dynamodb: DynamoDBClient | undefined;
  let appDynamodb: DynamoDBClient | undefined;
  let sqs: SQSClient | undefined;
  try {
    twin = await startTwin({
      port: 0,
      providers: [ANSWERLINE, ECHONOVA, STANDARD_WEBHOOKS, { name: BATCHES, preset: 'message-batches' }],
      secrets,
      stateDir,
      timing: {
        processorTimeoutSeconds: profile.processorTimeoutSeconds,
        reconcilerTimeoutSeconds: profile.reconcilerTimeoutSeconds,
        sweepAfterSeconds: profile.sweepAfterSeconds,
        reconcileEverySeconds: profile.reconcileEverySeconds,
      },
      maxReceiveCount: profile.maxReceiveCount,
      verifierConcurrency: 4,
      processorConcurrency: 3,
      sweepBatchSize: 500,
      pollBatchSize: 300,
      polling: [
        {
          provider: ANSWERLINE,
          taskUrlTemplate: answerlineApi.taskUrlTemplate,
          apiKeySecretId: API_KEY_SECRETS.answerline,
          horizonSeconds: profile.polling.answerline.horizon,
          recheckSeconds: profile.polling.answerline.recheck,
          timeoutMs: 5_000,
        },
        {
          provider: ECHONOVA,
          taskUrlTemplate: echonovaApi.jobUrlTemplate,
          apiKeySecretId: API_KEY_SECRETS.echonova,
          horizonSeconds: profile.polling.echonova.horizon,
          recheckSeconds: profile.polling.echonova.recheck,
          timeoutMs: 5_000,
        },
        {
          provider: BATCHES,
          taskUrlTemplate: batchesApi.batchUrlTemplate,
          apiKeySecretId: API_KEY_SECRETS.batches,
          horizonSeconds: profile.polling.batches.horizon,
          recheckSeconds: profile.polling.batches.recheck,
          timeoutMs: 5_000,
        },
      ],
      authoritativeReads: {
        [STANDARD_WEBHOOKS]: { urlTemplate: responsesApi.urlTemplate, idJsonPath: 'data.id', apiKeySecretId: API_KEY_SECRETS.standardWebhooks },
      },
      extraSecrets: {
        [API_KEY_SECRETS.answerline]: apiKeys.answerline,
        [API_KEY_SECRETS.echonova]: apiKeys.echonova,
        [API_KEY_SECRETS.standardWebhooks]: apiKeys.standardWebhooks,
        [API_KEY_SECRETS.batches]: apiKeys.batches,
      },
      interceptors: {
        verifier: async (event, invoke) => {
          if (state.endpointDown) {
            faults.add('endpoint_unavailable_answers');
            return { statusCode: 503, headers: { 'content-type': 'application/json' }, body: '{"message":"Service Unavailable"}' };
          }
          const signature = signatureOf(event.headers);
          if (signature && state.armedWrites.delete(signature)) {
            try {
              return await invoke({ crashAfter: { target: PUT_ITEM } });
            } catch (error) {
              if (error instanceof SandboxCrashedError) faults.add('crash_after_write');
              throw error;
            }
          }
          return invoke();
        },
        processor: async (event, invoke) => {
          const index = state.processorInvocations++;
          const keys = event.Records.map((record) => workKey(record.body)).filter((key): key is string => key !== undefined);
          let fault: InvocationFault | undefined;
          if (index % plan.workerCrashEvery === plan.workerCrashEvery - 1) state.workerCrashDue = true;
          // Crashes are independent events: one never lands on a row a crash already killed (its
          // redelivery comes back within a few batches), else a row of `maxReceiveCount: 3` could
          // die of the adversary's cadence rather than of anything the system did. The crash waits
          // for the next batch instead.
          if (state.workerCrashDue && !keys.some((key) => state.killedRows.has(key))) {
            state.workerCrashDue = false;
            const n = state.workerCrashesArmed++;
            fault =
              n % 3 === 0
                ? { crashAfter: { target: UPDATE_ITEM, count: 1 + ((n * 7) % Math.max(1, 2 * event.Records.length)) } }
                : { crashAfter: { target: n % 3 === 1 ? PUT_EVENTS : BATCH_WRITE_ITEM } };
          }
          try {
            const response = await invoke(fault);
            // A row reported failed may have sent its effect before failing (its completion failed): a retry repeats it.
            const failed = new Set((response?.batchItemFailures ?? []).map((item) => item.itemIdentifier));
            for (const record of event.Records) {
              const key = failed.has(record.messageId) ? workKey(record.body) : undefined;
              if (key) state.interruptedRows.add(key);
            }
            return response;
          } catch (error) {
            for (const key of keys) state.interruptedRows.add(key);
            if (error instanceof SandboxCrashedError || error instanceof InvocationTimeoutError) {
              for (const key of keys) state.killedRows.add(key);
              faults.add(fault && error instanceof SandboxCrashedError ? 'worker_crash' : 'worker_timeout');
            }
            throw error;
          }
        },
      },
    });
    const endpoints = twin.endpoints;
    dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, ...LOCAL_AWS });
    // The app records submissions under a role granted grantRecordSubmission, as the README shows.
    appDynamodb = twin.iam ? new DynamoDBClient({ endpoint: twin.iam.endpoint, region: LOCAL_AWS.region, credentials: twin.iam.credentials.app! }) : dynamodb;
    sqs = new SQSClient({ endpoint: endpoints.sqs, ...LOCAL_AWS, useQueueUrlAsEndpoint: false });

    // What every provider's sender reports: the signature of each attempt (no log line may carry
    // one), the attempt to capture for replays, the concurrent copies and the armed crashes.
    const hooks = (): SenderHooks => ({
      copiesOf: (delivery, attempt) => (attempt === 1 ? (state.copies.get(delivery.id) ?? 1) : 1),
      beforeAttempt: (delivery, attempt, request) => {
        for (const token of signatureTokens(request.headers)) state.signatureTokens.add(token);
        state.lastRequest.set(delivery.id, request);
        if (attempt === 1 && state.copies.has(delivery.id)) faults.add('concurrent_duplicate');
        if (attempt === 1 && state.crashOnFirstAttempt.delete(delivery.id)) {
          const signature = signatureOf(request.headers);
          if (signature) state.armedWrites.add(signature);
        }
      },
    });
    // Every provider: its endpoint, secret and random stream, its pace, 12 delivery workers, the run's hooks.
    const providerOptions = (provider: Provider, factor: number): SimulatedProviderOptions => ({
      url: twin!.urls[provider],
      secret: secrets[provider],
      random: random.stream(provider),
      factor,
      concurrency: 12,
      hooks: hooks(),
    });
    const answerline = new SimulatedAnswerline({ ...providerOptions(ANSWERLINE, profile.factors.answerline), api: answerlineApi });
    const echonova = new SimulatedEchonova({ ...providerOptions(ECHONOVA, profile.factors.echonova), api: echonovaApi });
    const standardWebhooks = new SimulatedStandardWebhooks({
      ...providerOptions(STANDARD_WEBHOOKS, profile.factors.standardWebhooks),
      resources: responsesApi,
    });
    senders.push(answerline.sender, echonova.sender, standardWebhooks.sender);
    const app = new SimulatedApp({
      dynamodb: appDynamodb,
      tableName: twin.names.inboxTable,
      horizonSeconds: { [ANSWERLINE]: profile.polling.answerline.horizon, [ECHONOVA]: profile.polling.echonova.horizon },
      answerline,
      echonova,
      batches: { api: batchesApi, provider: BATCHES },
    });

    // --- The timeline -------------------------------------------------------------------------
    const t0 = Date.now();
    // The plan's clock stands still while the providers cannot get their first attempts out, or the
    // work queue is deep: the pace adapts to the machine instead of piling up a backlog that the
    // sweep would only enqueue again.
    const timeline = new Timeline(
      () => senders.reduce((sum, sender) => sum + sender.unsent, 0) > BACKLOG_LIMIT || state.queueDepth > QUEUE_DEPTH_LIMIT,
      (error) => state.errors.push(`${(error as Error).name}: ${(error as Error).message}`),
    );
    const at = (ms: number, action: () => Promise<unknown> | unknown) => timeline.at(ms, action);
    const later = <T>(ms: number, action: () => Promise<T> | T): Promise<T> => sleep(ms).then(action);
    const depth = setInterval(() => {
      sqs!
        .send(
          new GetQueueAttributesCommand({
            QueueUrl: twin!.workQueueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        )
        .then((out) => {
          state.queueDepth = Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
        })
        .catch(() => undefined);
    }, 1_000);
    const recent = new Map<Provider, { eventKey: string; request: SignedRequest }[]>();
    const remember = (provider: Provider, delivery: DeliveryRecord) => {
      const request = state.lastRequest.get(delivery.id);
      state.lastRequest.delete(delivery.id);
      if (delivery.state !== 'delivered' || delivery.kind !== 'result' || !request) return delivery;
      const list = recent.get(provider) ?? [];
      list.push({ eventKey: delivery.eventKey, request });
      if (list.length > 100) list.shift();
      recent.set(provider, list);
      return delivery;
    };
    const alteredOf = new Map<string, number>();
    for (const entry of plan.altered) alteredOf.set(`${entry.provider}:${entry.index}`, (alteredOf.get(`${entry.provider}:${entry.index}`) ?? 0) + 1);
    const sendAltered = async (provider: Provider, index: number, original: DeliveryRecord, send: () => Promise<DeliveryRecord>) => {
      for (let i = 0; i < (alteredOf.get(`${provider}:${index}`) ?? 0); i++) {
        if (original.state !== 'delivered') {
          state.alteredSkipped++;
          continue;
        }
        await sleep(300);
        faults.add('altered_duplicate');
        await send();
      }
    };
    const arm = (label: string, delivery: () => DeliveryRecord | undefined) => {
      // The first attempt leaves after this tick: its record exists, its request is not signed yet.
      const record = delivery();
      if (!record) return;
      const copies = plan.concurrentCopies.get(label);
      if (copies) state.copies.set(record.id, copies);
      if (plan.crashAfterWrite.has(label)) state.crashOnFirstAttempt.add(record.id);
    };

    plan.answerlineJobs.forEach((job, index) => {
      job.tasks.forEach((planned, k) => {
        at(planned.createAt, async () => {
          const task = await app.submitAnswerline(planned.idempotencyKey);
          await later(planned.startAfter, () => answerline.startTask(task.id));
          const delivery = await later(planned.finishAfter - planned.startAfter, () => {
            const done = answerline.finishTask(task.id, planned.status);
            arm(`answerline:${planned.idempotencyKey}`, () => task.delivery);
            return done;
          });
          remember('answerline', delivery);
          if (k === job.tasks.length - 1) await sendAltered('answerline', index, delivery, () => answerline.sendAltered(task.id));
        });
      });
    });
    plan.echonovaJobs.forEach((planned, index) => {
      at(planned.createAt, async () => {
        const job = await app.submitEchonova(planned.label);
        await later(planned.startAfter, () => echonova.startJob(job.jobId));
        const delivery = await later(planned.finishAfter - planned.startAfter, () => {
          const done = echonova.finishJob(job.jobId, planned.status);
          arm(`echonova:${planned.label}`, () => job.delivery);
          return done;
        });
        remember('echonova', delivery);
        await sendAltered('echonova', index, delivery, () => echonova.sendAltered(job.jobId));
      });
    });
    plan.events.forEach((planned, index) => {
      at(planned.at, async () => {
        const { event, delivered: done } = standardWebhooks.emit(planned.label, { missing: planned.missing, poison: planned.poison });
        arm(`standard-webhooks:${planned.label}`, () => event.delivery);
        if (planned.poison) faults.add('poison_delivery');
        if (planned.missing) faults.add('missing_resource');
        const delivery = await done;
        remember('standard-webhooks', delivery);
        await sendAltered('standard-webhooks', index, delivery, () => standardWebhooks.sendAltered(event.id));
      });
    });
    plan.batches.forEach((planned) => {
      at(planned.createAt, async () => {
        const r = random.stream(`batch/${planned.label}`);
        const customIds = Array.from({ length: planned.size }, (_, i) => `${planned.label}-req-${i}`);
        const batch = await app.submitBatch(
          customIds,
          customIds.filter(() => r.chance(planned.erroredShare)),
        );
        submittedBatches.push(batch);
        await later(planned.partAfter, () => batchesApi.finish(batch.id, customIds.slice(0, Math.round(planned.size * planned.partShare))));
        await later(planned.endAfter - planned.partAfter, () => {
          if (planned.end === 'canceled') {
            faults.add('batch_canceled');
            batchesApi.cancel(batch.id);
          } else if (planned.end === 'expired') {
            faults.add('batch_expired');
            batchesApi.expire(batch.id);
          } else batchesApi.end(batch.id);
        });
      });
    });
    for (const fault of plan.batchApiFaults) {
      at(fault.at, () => {
        faults.add('batch_api_error', fault.times);
        batchesApi.inject(fault.status, { times: fault.times, ...(fault.status === 429 ? { retryAfterSeconds: 1 } : {}) });
      });
    }
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
    const adversary: AdversaryRecord[] = [];
    for (const entry of plan.adversary) {
      at(entry.at, async () => {
        const record = await adversarySend(entry.kind, entry.provider, entry.label);
        if (record) {
          adversary.push(record);
          faults.add(ADVERSARY_FAULT[entry.kind]);
        }
      });
    }
    const adversarySend = async (kind: AdversaryKind, provider: Provider, label: string): Promise<AdversaryRecord | undefined> => {
      const sender = provider === 'answerline' ? answerline.sender : provider === 'echonova' ? echonova.sender : standardWebhooks.sender;
      if (kind === 'replay') {
        // A captured delivery sent again as it was, within the timestamp tolerance: a duplicate.
        let eventKey: string | undefined;
        const outcome = await sender.sendOnce(() => {
          const candidates = recent.get(provider) ?? [];
          const captured = candidates[random.stream(`replay/${label}`).int(candidates.length)];
          eventKey = captured?.eventKey;
          return captured?.request ?? { headers: {}, body: Buffer.alloc(0) };
        });
        return eventKey ? { kind, provider, eventKey, status: outcome.status, during: state.phase() } : undefined;
      }
      // Never delivered ids: signed with a timestamp 400 s off, or with a wrong secret.
      const r = random.stream(`adversary/${label}`);
      const wrongSecret = provider === 'echonova' ? r.hex(64) : `whsec_${r.bytes(32).toString('base64')}`;
      const secret = kind === 'forged' ? wrongSecret : undefined;
      const id = `${kind}_${r.hex(12)}`;
      const content = `pii_${r.hex(16)}`;
      const eventKey =
        provider === 'answerline' ? `${ANSWERLINE}#tsk_${id}` : provider === 'echonova' ? echonovaJobEventKey(`job_${id}`) : `${STANDARD_WEBHOOKS}#wh_${id}`;
      const outcome = await sender.sendOnce(() => {
        const now = unixSeconds();
        const timestamp = kind === 'stale' ? now - 400 : kind === 'future' ? now + 400 : now;
        let request: SignedRequest;
        if (provider === 'answerline') {
          const body = Buffer.from(
            JSON.stringify({
              task: { id: `tsk_${id}`, status: 'COMPLETED', idempotencyKey: `${kind}-${label}`, createdAt: new Date().toISOString() },
              response: { result: { answer: content } },
            }),
          );
          request = answerline.signAt(`msg_${r.hex(24)}`, timestamp, body, secret);
        } else if (provider === 'echonova') {
          const body = Buffer.from(
            JSON.stringify({ jobId: `job_${id}`, status: 'completed', createdAt: new Date().toISOString(), result: { transcript: content } }),
          );
          request = echonova.signAt('job.completed', timestamp, body, secret);
        } else {
          const body = Buffer.from(
            JSON.stringify({ object: 'event', id: `wh_${id}`, type: 'response.completed', created_at: now, data: { id: `resp_${r.hex(24)}` } }),
          );
          request = standardWebhooks.signAt(`wh_${id}`, timestamp, body, secret);
        }
        for (const token of signatureTokens(request.headers)) state.signatureTokens.add(token);
        return request;
      });
      return { kind, provider, eventKey, status: outcome.status, during: state.phase() };
    };

    // Outages: the functions' store, their queue, then the endpoint itself for longer than the retry window.
    const reenable = () => {
      if (echonova.enableWebhook()) faults.add('webhook_reenabled');
    };
    // Each outage lasts its length in real time, whatever the plan's clock does meanwhile.
    at(plan.storeOutage.at, async () => {
      faults.add('store_outage');
      state.storeDown = true;
      twin!.faults.dynamodb.takeDown();
      log(`chaos: store down for ${plan.storeOutage.ms} ms`);
      await sleep(plan.storeOutage.ms);
      twin!.faults.dynamodb.restore();
      state.storeDown = false;
      await later(profile.reenableAfterMs, reenable);
    });
    at(plan.queueOutage.at, async () => {
      faults.add('queue_outage');
      state.queueDown = true;
      twin!.faults.sqs.takeDown();
      log(`chaos: queue down for ${plan.queueOutage.ms} ms`);
      await sleep(plan.queueOutage.ms);
      twin!.faults.sqs.restore();
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
    for (const limit of plan.rateLimits) {
      at(limit.at, () => (limit.provider === 'answerline' ? answerlineApi : echonovaApi).rateLimit({ times: limit.times, retryAfterSeconds: 1 }));
    }
    // AWS's own faults, through the fault proxies between the functions and the services; each
    // function is told apart by its role's access key.
    const callers = twin.iam?.credentials;
    for (const fault of plan.awsFaults) {
      at(fault.at, async () => {
        const proxy = twin!.faults[AWS_FAULT_PROXY[fault.kind]];
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
    // The operator watches the webhook: one disabled outside an outage is enabled again.
    const watch = setInterval(() => {
      if (!echonova.webhook.enabled && !state.anyOutage()) reenable();
    }, 5_000);
    const progress = setInterval(() => {
      const sent = senders.reduce((sum, sender) => sum + sender.deliveries.length, 0);
      const outstanding = senders.reduce((sum, sender) => sum + sender.outstanding, 0);
      log(
        `chaos: +${((Date.now() - t0) / 1000).toFixed(0)} s (plan ${(timeline.planMs / 1000).toFixed(0)} s)  ${sent} deliveries queued, ${outstanding} pending at the providers, ${state.queueDepth} in the work queue, ${twin!.eventBridge.events.length} effects`,
      );
    }, 10_000);
    state.phase = () =>
      state.endpointDown
        ? 'endpoint_down'
        : state.storeDown
          ? 'store_down'
          : state.queueDown
            ? 'queue_down'
            : state.storeThrottled
              ? 'store_throttled'
              : 'calm';
    state.anyOutage = () => state.endpointDown || state.storeDown || state.queueDown;

    try {
      await timeline.run();
      await Promise.all(senders.map((sender) => sender.idle()));
      log(`chaos: providers done after ${((Date.now() - t0) / 1000).toFixed(0)} s; waiting for the inbox to settle`);

      // --- Drain: every completed result stored and settled ------------------------------------
      const deadline = Date.now() + (options.drainTimeoutMs ?? 180_000);
      let lastWaiting = '';
      for (;;) {
        // A cancelled batch ends at the poll after its cancellation: its rows are expected from then on.
        const expected = expectedKeys(senders);
        for (const key of batchRowKeys(submittedBatches)) expected.set(key, 'result');
        const rows = await scanDeliveryStates(dynamodb, twin.names.inboxTable);
        // A message reaches the DLQ at the receive after its last failure: collect them as they come.
        state.deadLettered.push(...(await drainQueue(sqs, twin.deadLetterQueueUrl)));
        const inDlq = new Set(state.deadLettered);
        const missing = [...expected.keys()].filter((key) => !rows.has(key)).length;
        const unsettled = [...expected].filter(([key, kind]) => {
          const status = rows.get(key);
          return kind === 'poison' ? status !== 'DEAD' || !inDlq.has(key) : status !== 'PROCESSED';
        });
        if (missing === 0 && unsettled.length === 0) break;
        const waiting = `${missing} results not stored yet, ${unsettled.length} rows not settled (${[...new Set(unsettled.map(([key, kind]) => `${kind} ${rows.get(key) ?? 'absent'}`))].join(', ')})`;
        if (waiting !== lastWaiting) log(`chaos: waiting: ${waiting}`);
        lastWaiting = waiting;
        if (Date.now() > deadline) {
          log(`chaos: gave up waiting: ${waiting}`);
          break;
        }
        await sleep(3_000);
      }
    } finally {
      clearInterval(watch);
      clearInterval(progress);
      clearInterval(depth);
      timeline.stop();
    }
    // Let in-flight work finish what it started: one more reconciler run waits behind the one in
    // progress (one environment), so every run's metrics are flushed.
    await twin.reconcileNow().catch(() => undefined);
    await sleep(1_000);

    // --- Evidence -----------------------------------------------------------------------------
    const items = await scanItems(dynamodb, {
      TableName: twin.names.inboxTable,
      ProjectionExpression: '#pk, #sk, #status, #digest, #recovered, #outcome, #count, #state',
      ExpressionAttributeNames: {
        '#pk': InboxAttr.PK,
        '#sk': InboxAttr.SK,
        '#status': InboxAttr.STATUS,
        '#digest': InboxAttr.DIGEST,
        '#recovered': InboxAttr.RECOVERED,
        '#outcome': InboxAttr.OUTCOME,
        '#count': InboxAttr.COUNT,
        '#state': InboxAttr.STATE,
      },
    });
    const results = await scanItems(dynamodb, {
      TableName: twin.names.resultsTable,
      ProjectionExpression: '#pk, #taskId, #status',
      ExpressionAttributeNames: { '#pk': ResultAttr.PK, '#taskId': ResultAttr.TASK_ID, '#status': ResultAttr.STATUS },
    });
    state.deadLettered.push(...(await drainQueue(sqs, twin.deadLetterQueueUrl)));
    // What the fault proxies changed, by the calls they changed (each attempt of the SDK is one).
    const proxies = twin.faults;
    const refused = (proxy: FaultProxy, operation: string) => proxy.injected[`entries refused ${operation}`] ?? 0;
    faults.add('dynamodb_throttled', proxies.dynamodb.injectedOf('throttled'));
    faults.add('sqs_throttled', proxies.sqs.injectedOf('throttled'));
    faults.add('eventbridge_throttled', proxies.eventBridge.injectedOf('throttled'));
    faults.add('unprocessed_items', refused(proxies.dynamodb, 'dynamodb.BatchWriteItem'));
    faults.add('unprocessed_keys', refused(proxies.dynamodb, 'dynamodb.BatchGetItem'));
    faults.add('send_batch_entries_failed', refused(proxies.sqs, 'sqs.SendMessageBatch'));
    faults.add('put_events_entries_failed', refused(proxies.eventBridge, 'events.PutEvents'));
    faults.add('index_lag', proxies.dynamodb.injectedOf('index lagged'));
    // A fault on calls no function made has nothing to change (the processor completes a batch in
    // one request only with a third of its lease to spare, which a compressed timeout may never leave).
    const made = (fault: PlannedAwsFault) =>
      Object.entries(proxies[AWS_FAULT_PROXY[fault.kind]].calls).some(([name, count]) => count > 0 && fault.operations.some((op) => name.endsWith(`.${op}`)));
    const uncalled = [...new Set(plan.awsFaults.map((fault) => fault.kind))].filter((kind) =>
      plan.awsFaults.filter((fault) => fault.kind === kind).every((fault) => !made(fault)),
    );
    const evidence: Evidence = {
      plan,
      faults: faults.counts,
      deliveries: senders.flatMap((sender) => sender.deliveries),
      attempts: senders.reduce((sum, sender) => sum + sender.stats.requests, 0),
      answerlineTasks: [...answerline.tasks.values()],
      echonovaJobs: [...echonova.jobs.values()],
      events: [...standardWebhooks.events.values()],
      echonovaWebhook: echonova.webhook,
      adversary,
      alteredSkipped: state.alteredSkipped,
      rows: items
        .filter((item) => item[InboxAttr.SK]?.S === InboxItemKind.DELIVERY)
        .map((item) => ({
          key: item[InboxAttr.PK].S!,
          status: item[InboxAttr.STATUS]?.S ?? '',
          digest: rowDigestOf(item),
          recovered: item[InboxAttr.RECOVERED]?.BOOL === true,
          outcome: item[InboxAttr.OUTCOME]?.S,
          attempts: Number(item[InboxAttr.ATTEMPTS]?.N ?? 0),
          lastError: item[InboxAttr.LAST_ERROR]?.S,
        })),
      quarantined: items
        .filter((item) => item[InboxAttr.SK]?.S?.startsWith(InboxItemKind.QUARANTINE_PREFIX))
        .map((item) => ({ key: item[InboxAttr.PK].S!, digest: item[InboxAttr.DIGEST]?.S ?? '', count: Number(item[InboxAttr.COUNT]?.N ?? 0) })),
      submissions: items
        .filter((item) => item[InboxAttr.SK]?.S === InboxItemKind.SUBMISSION)
        .map((item) => ({ key: item[InboxAttr.PK].S!, state: item[InboxAttr.STATE]?.S ?? '' })),
      results: results.map((item) => ({ key: item[ResultAttr.PK].S!, taskId: item[ResultAttr.TASK_ID]?.S ?? '', status: item[ResultAttr.STATUS]?.S ?? '' })),
      deadLettered: state.deadLettered,
      effects: twin.eventBridge.events
        .filter((event) => event.detailType !== EffectEvent.RESOURCE_UNAVAILABLE)
        .map((event) => ({
          detailType: event.detailType,
          effectKey: String(event.detail.effectKey),
          eventKey: String(event.detail.eventKey),
          ...(event.detail.jobKey !== undefined
            ? { jobKey: String(event.detail.jobKey), taskId: String(event.detail.taskId), status: String(event.detail.status) }
            : {}),
          ...(event.detail.batchId !== undefined ? { batchId: String(event.detail.batchId) } : {}),
          ...(event.detail.customId !== undefined ? { customId: String(event.detail.customId), childState: String(event.detail.childState) } : {}),
          ...(event.detail.batchOutcome !== undefined ? { batchOutcome: String(event.detail.batchOutcome) } : {}),
          recovered: event.detail.recovered === true,
        })),
      unavailable: twin.eventBridge.events
        .filter((event) => event.detailType === EffectEvent.RESOURCE_UNAVAILABLE)
        .map((event) => ({
          submissionKey: String(event.detail.submissionKey),
          effectKey: String(event.detail.effectKey),
          reason: String(event.detail.reason),
        })),
      batches: submittedBatches.map((batch) => ({
        provider: BATCHES,
        batchId: batch.id,
        requests: batch.requests.map((request) => ({ customId: request.customId, state: request.state ?? 'none' })),
      })),
      deadlineTaskIds,
      interruptedRows: state.interruptedRows,
      killedRows: state.killedRows,
      servedDigests: {
        [ANSWERLINE]: answerlineApi.servedDigests,
        [ECHONOVA]: echonovaApi.servedDigests,
      },
      rateLimitedPolls: [answerlineApi, echonovaApi, batchesApi].reduce((sum, api) => sum + api.requests.filter((r) => r.status === 429).length, 0),
      logDir: twin.logDir,
      sensitive: {
        texts: [...Object.values(secrets), ...Object.values(secrets).map((secret) => secret.replace(/^whsec_/, '')), ...Object.values(apiKeys)],
        signatureTokens: state.signatureTokens,
      },
      appStats: app.stats,
      hostStats: { verifier: twin.hosts.verifier.stats, processor: twin.hosts.processor.stats, reconciler: twin.hosts.reconciler.stats },
      iam: { denials: twin.iam?.gateway.denials ?? [], evaluated: Object.fromEntries(twin.iam?.gateway.evaluated ?? []) },
      uncalled,
      awsCalls: {
        changed: { ...proxies.dynamodb.injected, ...proxies.sqs.injected, ...proxies.eventBridge.injected },
        made: { ...proxies.dynamodb.calls, ...proxies.sqs.calls, ...proxies.eventBridge.calls },
      },
      alarms: (twin.template.monitor.evaluate(), twin.template.monitor.notifications).map(({ logicalId, to, at }) => ({ logicalId, to, at })),
      errors: state.errors,
      elapsedMs: 0,
    };
    await stopAll();
    evidence.elapsedMs = Date.now() - started;
    return audit(evidence);
  } finally {
    await stopAll();
    if (!options.keepState && !options.stateDir) rmSync(stateDir, { recursive: true, force: true });
  }

  async function stopAll(): Promise<void> {
    senders.splice(0).forEach((sender) => sender.close());
    const stopping = twin;
    twin = undefined;
    if (stopping) await stopping.stop();
    if (appDynamodb !== dynamodb) appDynamodb?.destroy();
    dynamodb?.destroy();
    sqs?.destroy();
    appDynamodb = undefined;
    dynamodb = undefined;
    sqs = undefined;
    await Promise.all([answerlineApi.stop(), echonovaApi.stop(), responsesApi.stop(), batchesApi.stop()]);
  }
}

/** The fault proxy each of AWS's faults is injected at. */
const AWS_FAULT_PROXY: Record<AwsFaultKind, keyof LocalFaults> = {
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

class FaultCounter {
  readonly counts: Partial<Record<FaultKind, number>> = {};

  add(kind: FaultKind, n = 1): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + n;
  }
}

/** What the run knows while it runs. */
class RunState {
  endpointDown = false;
  storeDown = false;
  queueDown = false;
  /** The store throttles the verifier: its answers are 503 as in an outage. */
  storeThrottled = false;
  processorInvocations = 0;
  workerCrashesArmed = 0;
  /** The crash cadence came round and no batch free of killed rows has taken the crash yet. */
  workerCrashDue = false;
  queueDepth = 0;
  alteredSkipped = 0;
  /** Signatures of attempts whose verifier invocation dies right after its inbox write. */
  readonly armedWrites = new Set<string>();
  /** Delivery ids whose first attempt is to be armed so. */
  readonly crashOnFirstAttempt = new Set<string>();
  /** Delivery ids whose first attempt goes out as this many identical concurrent copies. */
  readonly copies = new Map<string, number>();
  /** Inbox keys of rows whose processing was interrupted: their invocation died, or reported them failed. */
  readonly interruptedRows = new Set<string>();
  /** Inbox keys of rows whose processor invocation died (a crash or a timeout). */
  readonly killedRows = new Set<string>();
  readonly signatureTokens = new Set<string>();
  readonly lastRequest = new Map<string, SignedRequest>();
  /** Inbox keys of the messages taken from the DLQ. */
  readonly deadLettered: string[] = [];
  readonly errors: string[] = [];
  phase: () => string = () => 'calm';
  anyOutage: () => boolean = () => false;
}

/** The signature header of a request (either scheme): what pairs an armed attempt with its verifier invocation. */
function signatureOf(headers: Readonly<Record<string, string | undefined>> | undefined): string | undefined {
  return headers?.['webhook-signature'] ?? headers?.['x-webhook-signature'];
}

/** The inbox key a work message carries; undefined for anything that is not one. */
function workKey(body: string): string | undefined {
  try {
    return decodeWorkMessage(body);
  } catch {
    return undefined;
  }
}

/** Every inbox key a completed result must end up under, with the kind of its delivery. */
function expectedKeys(senders: readonly RetryingSender[]): Map<string, 'result' | 'poison'> {
  const expected = new Map<string, 'result' | 'poison'>();
  for (const sender of senders) {
    for (const delivery of sender.deliveries) {
      if (delivery.kind === 'result' || delivery.kind === 'poison') expected.set(delivery.eventKey, delivery.kind);
    }
  }
  return expected;
}

/** The row keys a batch's requests and its summary are stored under (docs/providers/message-batches.md), once it has ended. */
function batchRowKeys(batches: readonly FakeBatch[]): string[] {
  const prefix = (batch: FakeBatch) => `${BATCHES}#${encodeURIComponent(batch.id)}:`;
  return batches
    .filter((batch) => batch.processingStatus === 'ended')
    .flatMap((batch) => [...batch.requests.map((request) => `${prefix(batch)}${encodeURIComponent(request.customId)}`), `${prefix(batch)}~batch`]);
}

/** The status of every delivery row, by key. */
async function scanDeliveryStates(client: DynamoDBClient, tableName: string): Promise<Map<string, string>> {
  const items = await scanItems(client, {
    TableName: tableName,
    ProjectionExpression: '#pk, #sk, #status',
    ExpressionAttributeNames: { '#pk': InboxAttr.PK, '#sk': InboxAttr.SK, '#status': InboxAttr.STATUS },
  });
  return new Map(
    items.filter((item) => item[InboxAttr.SK]?.S === InboxItemKind.DELIVERY).map((item) => [item[InboxAttr.PK].S!, item[InboxAttr.STATUS]?.S ?? '']),
  );
}

/** Every message in a queue (the DLQ), by the inbox key it carries; the queue is emptied. */
async function drainQueue(client: SQSClient, queueUrl: string): Promise<string[]> {
  const keys: string[] = [];
  for (let empty = 0; empty < 2;) {
    const out = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 600, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      empty++;
      continue;
    }
    for (const message of messages) {
      const key = workKey(message.Body ?? '');
      if (key) keys.push(key);
    }
    await client.send(
      new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle! })) }),
    );
  }
  return keys;
}
