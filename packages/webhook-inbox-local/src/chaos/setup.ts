/**
 * What a fault-injection run sets up before it drives anything: the fake provider APIs the inbox
 * polls, the twin (the twin's own app, with compressed timing, polling against those APIs, and the
 * adversary's hands in its verifier and processor), the clients the run reads the inbox with, the
 * simulated providers and the app that records their submissions.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { InvocationTimeoutError, SandboxCrashedError } from '../aws/lambda/host';
import { FakeAnswerlineApi } from '../providers/answerline/fake-api';
import { ANSWERLINE, SimulatedAnswerline } from '../providers/answerline/simulator';
import { SimulatedApp } from '../providers/app';
import { FakeEchonovaApi } from '../providers/echonova/fake-api';
import { ECHONOVA, SimulatedEchonova } from '../providers/echonova/simulator';
import { FakeBatch, FakeMessageBatchesApi } from '../providers/message-batches/fake-api';
import { ProviderLogSenders } from './provider-logs';
import { Random } from '../providers/random';
import { RetryingSender, SenderHooks, SimulatedProviderOptions } from '../providers/sender';
import { signatureTokens } from '../providers/signing';
import { FakeResponsesApi } from '../providers/standard-webhooks/fake-api';
import { SimulatedStandardWebhooks, STANDARD_WEBHOOKS } from '../providers/standard-webhooks/simulator';
import { startTwin, Twin, TwinOptions } from '../twin/inbox-twin';
import { InvocationFault, LOCAL_AWS } from '../twin/twin';
import type { ChaosProfile } from './profile';
import { ROUTE_FLOOD, type Plan, type Provider } from './plan';
import { FaultCounter, receiveKey, RunState, signatureOf, workKey } from './state';

/** The inbox's name for the simulated batch API. */
export const BATCHES = 'batches';

/** The AWS operations after which an execution environment is killed (`X-Amz-Target`). */
const PUT_ITEM = 'DynamoDB_20120810.PutItem';
const UPDATE_ITEM = 'DynamoDB_20120810.UpdateItem';
const PUT_EVENTS = 'AWSEvents.PutEvents';
/** A batch's rows completed together: a crash right after leaves rows processed and their messages undeleted. */
const BATCH_WRITE_ITEM = 'DynamoDB_20120810.BatchWriteItem';
const API_KEY_SECRETS = {
  answerline: 'chaos/answerline/api-key',
  echonova: 'chaos/echonova/api-key',
  standardWebhooks: 'chaos/standard-webhooks/api-key',
  batches: 'chaos/batches/api-key',
};

type ApiKeys = Readonly<Record<keyof typeof API_KEY_SECRETS, string>>;

/** The providers' APIs the inbox polls (and the resource API its authoritative read fetches). */
export interface FakeApis {
  readonly answerline: FakeAnswerlineApi;
  readonly echonova: FakeEchonovaApi;
  readonly responses: FakeResponsesApi;
  readonly batches: FakeMessageBatchesApi;
}

/** Everything a run drives and reads. */
export interface ChaosRig {
  readonly plan: Plan;
  readonly profile: ChaosProfile;
  readonly random: Random;
  readonly log: (line: string) => void;
  /** The providers' signing secrets and the APIs' keys: no log line may carry one. */
  readonly secrets: Readonly<Record<Provider, string>>;
  readonly apiKeys: ApiKeys;
  readonly apis: FakeApis;
  readonly twin: Twin;
  /** The operator's clients of the twin's DynamoDB and SQS. */
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly answerline: SimulatedAnswerline;
  readonly echonova: SimulatedEchonova;
  readonly standardWebhooks: SimulatedStandardWebhooks;
  readonly senders: readonly RetryingSender[];
  /** GitHub and Stripe, recovered from their own logs. */
  readonly providerLogs: ProviderLogSenders;
  readonly app: SimulatedApp;
  readonly faults: FaultCounter;
  readonly state: RunState;
  /** The batches the app submitted, as the batch API holds them. */
  readonly submittedBatches: FakeBatch[];
  /** Answerline tasks the app recorded with a short deadline and the provider never started. */
  readonly deadlineTaskIds: string[];
  /** Stops everything the rig started; again, nothing. */
  stop(): Promise<void>;
}

export interface SetUpOptions {
  readonly seed: number;
  readonly plan: Plan;
  readonly stateDir: string;
  readonly log: (line: string) => void;
}

export async function setUp({ seed, plan, stateDir, log }: SetUpOptions): Promise<ChaosRig> {
  const profile = plan.profile;
  const random = new Random(seed);
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
  log(`chaos: seed ${seed}, ${plan.deliveries} deliveries, window ${(plan.windowMs / 1000).toFixed(0)} s, state in ${stateDir}`);
  const faults = new FaultCounter();
  const state = new RunState();
  const apis: FakeApis = {
    answerline: new FakeAnswerlineApi(apiKeys.answerline),
    echonova: new FakeEchonovaApi(apiKeys.echonova),
    responses: new FakeResponsesApi(apiKeys.standardWebhooks),
    batches: new FakeMessageBatchesApi(apiKeys.batches),
  };
  apis.answerline.servedDigests = new Map();
  apis.echonova.servedDigests = new Map();
  await Promise.all(Object.values(apis).map((api) => api.start()));
  const providerLogs = await ProviderLogSenders.start(random);
  const stopApis = () => Promise.all([...Object.values(apis).map((api) => api.stop()), providerLogs.stop()]);
  let twin: Twin;
  try {
    const options = twinOptions(plan, apis, apiKeys, secrets, stateDir);
    twin = await startTwin({
      ...options,
      providers: [...options.providers!, ...providerLogs.providers],
      recovery: providerLogs.recovery,
      extraSecrets: { ...options.extraSecrets, ...providerLogs.secrets },
      interceptors: adversaryInterceptors(plan, state, faults),
    });
    providerLogs.bind(twin);
  } catch (error) {
    await stopApis();
    throw error;
  }
  const endpoints = twin.endpoints;
  const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, ...LOCAL_AWS });
  // The app records submissions under a role granted grantRecordSubmission, as docs/SUBMISSION-LEDGER.md shows.
  const appDynamodb = twin.iam
    ? new DynamoDBClient({ endpoint: twin.iam.endpoint, region: LOCAL_AWS.region, credentials: twin.iam.credentials.app! })
    : dynamodb;
  const sqs = new SQSClient({ endpoint: endpoints.sqs, ...LOCAL_AWS, useQueueUrlAsEndpoint: false });

  // Every provider: its endpoint, secret and random stream, its pace, 12 delivery workers, the run's hooks.
  const providerOptions = (provider: Provider, factor: number): SimulatedProviderOptions => ({
    url: twin.urls[provider],
    secret: secrets[provider],
    random: random.stream(provider),
    factor,
    concurrency: 12,
    hooks: senderHooks(state, faults),
  });
  const answerline = new SimulatedAnswerline({ ...providerOptions(ANSWERLINE, profile.factors.answerline), api: apis.answerline });
  const echonova = new SimulatedEchonova({ ...providerOptions(ECHONOVA, profile.factors.echonova), api: apis.echonova });
  const standardWebhooks = new SimulatedStandardWebhooks({
    ...providerOptions(STANDARD_WEBHOOKS, profile.factors.standardWebhooks),
    resources: apis.responses,
  });
  const senders = [answerline.sender, echonova.sender, standardWebhooks.sender];
  const app = new SimulatedApp({
    dynamodb: appDynamodb,
    tableName: twin.names.inboxTable,
    horizonSeconds: { [ANSWERLINE]: profile.polling.answerline.horizon, [ECHONOVA]: profile.polling.echonova.horizon },
    answerline,
    echonova,
    batches: { api: apis.batches, provider: BATCHES },
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    senders.forEach((sender) => sender.close());
    await twin.stop();
    if (appDynamodb !== dynamodb) appDynamodb.destroy();
    dynamodb.destroy();
    sqs.destroy();
    await stopApis();
  };
  return {
    plan,
    profile,
    random,
    log,
    secrets,
    apiKeys,
    apis,
    twin,
    dynamodb,
    sqs,
    answerline,
    echonova,
    standardWebhooks,
    senders,
    providerLogs,
    app,
    faults,
    state,
    submittedBatches: [],
    deadlineTaskIds: [],
    stop,
  };
}

/** The twin's own app as the run wants it: compressed timing, polling against the fake APIs, the authoritative read. */
function twinOptions(plan: Plan, apis: FakeApis, apiKeys: ApiKeys, secrets: Record<Provider, string>, stateDir: string): TwinOptions {
  const profile = plan.profile;
  return {
    port: 0,
    // A route no provider delivers on, for the forged flood (ROUTE_FLOOD), with a small allowance of its own.
    providers: [
      ANSWERLINE,
      ECHONOVA,
      STANDARD_WEBHOOKS,
      { name: BATCHES, preset: 'message-batches' },
      { name: ROUTE_FLOOD.provider, preset: 'standard-webhooks' },
    ],
    routeThrottles: { [ROUTE_FLOOD.provider]: ROUTE_FLOOD.throttle },
    secrets,
    stateDir,
    timing: {
      processorTimeoutSeconds: profile.processorTimeoutSeconds,
      reconcilerTimeoutSeconds: profile.reconcilerTimeoutSeconds,
      sweepAfterSeconds: profile.sweepAfterSeconds,
      reconcileEverySeconds: profile.reconcileEverySeconds,
    },
    maxReceiveCount: profile.maxReceiveCount,
    // The breaker's other settings are the construct's defaults.
    breakerCoolDownSeconds: profile.breakerCoolDownSeconds,
    verifierConcurrency: 4,
    processorConcurrency: 3,
    pollBatchSize: 300,
    polling: [
      {
        provider: ANSWERLINE,
        taskUrlTemplate: apis.answerline.taskUrlTemplate,
        apiKeySecretId: API_KEY_SECRETS.answerline,
        horizonSeconds: profile.polling.answerline.horizon,
        recheckSeconds: profile.polling.answerline.recheck,
        timeoutMs: 5_000,
      },
      {
        provider: ECHONOVA,
        taskUrlTemplate: apis.echonova.jobUrlTemplate,
        apiKeySecretId: API_KEY_SECRETS.echonova,
        horizonSeconds: profile.polling.echonova.horizon,
        recheckSeconds: profile.polling.echonova.recheck,
        timeoutMs: 5_000,
      },
      {
        provider: BATCHES,
        taskUrlTemplate: apis.batches.batchUrlTemplate,
        apiKeySecretId: API_KEY_SECRETS.batches,
        horizonSeconds: profile.polling.batches.horizon,
        recheckSeconds: profile.polling.batches.recheck,
        timeoutMs: 5_000,
      },
    ],
    authoritativeReads: {
      [STANDARD_WEBHOOKS]: { urlTemplate: apis.responses.urlTemplate, idJsonPath: 'data.id', apiKeySecretId: API_KEY_SECRETS.standardWebhooks },
    },
    extraSecrets: {
      [API_KEY_SECRETS.answerline]: apiKeys.answerline,
      [API_KEY_SECRETS.echonova]: apiKeys.echonova,
      [API_KEY_SECRETS.standardWebhooks]: apiKeys.standardWebhooks,
      [API_KEY_SECRETS.batches]: apiKeys.batches,
    },
  };
}

/**
 * The adversary's hands inside the twin: the verifier answers 503 while the endpoint is down and
 * dies right after the inbox write of an armed attempt; one processor invocation in
 * `workerCrashEvery` dies mid-batch.
 */
function adversaryInterceptors(plan: Plan, state: RunState, faults: FaultCounter): NonNullable<TwinOptions['interceptors']> {
  return {
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
      const startedAt = Date.now();
      for (const record of event.Records) state.receivedAt.set(receiveKey(record.messageId, record.attributes.ApproximateReceiveCount), startedAt);
      const keys = event.Records.map((record) => workKey(record.body)).filter((key): key is string => key !== undefined);
      let fault: InvocationFault | undefined;
      if (index % plan.workerCrashEvery === plan.workerCrashEvery - 1) state.workerCrashDue = true;
      // Crashes are independent events: one never lands on a row a crash already killed (its
      // redelivery comes back within a few batches), else a row of the run's tight budget could
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
  };
}

/**
 * What every provider's sender reports: the signature of each attempt (no log line may carry
 * one), the attempt to capture for replays, the concurrent copies and the armed crashes.
 */
function senderHooks(state: RunState, faults: FaultCounter): SenderHooks {
  return {
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
  };
}
