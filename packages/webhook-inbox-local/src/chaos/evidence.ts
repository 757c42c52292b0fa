/**
 * The evidence of a fault-injection run, gathered once the inbox has settled: the providers' own
 * records, the inbox's rows, quarantined copies, submissions and results, the DLQ, the effects put
 * on the bus, the batch API's record, what the fault proxies changed and the IAM gateway judged,
 * and the alarms' state changes.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { scanItems } from '../../../../lambda/shared/stores/dynamo';
import { rowDigestOf } from '../../../../lambda/shared/stores/inbox';
import { EffectEvent, FlowAttr, FlowControlKey, InboxAttr, InboxItemKind, ResultAttr } from '../../../../lib/contract';
import type { RecordedEvent } from '../aws/eventbridge/stand-in';
import type { FaultProxy } from '../faults/proxy';
import { ANSWERLINE } from '../providers/answerline/simulator';
import { ECHONOVA } from '../providers/echonova/simulator';
import type { AdversaryRecord, DispatchedEffect, Evidence, FaultKind, InboxRow } from './audit/evidence';
import { drainQueue } from './drain';
import { AWS_FAULT_PROXY } from './drive';
import type { PlannedAwsFault } from './plan';
import { BATCHES, ChaosRig } from './setup';

type Item = Record<string, AttributeValue>;

export async function gatherEvidence(rig: ChaosRig, adversary: readonly AdversaryRecord[]): Promise<Evidence> {
  const { plan, twin, dynamodb, state, faults, senders, answerline, echonova, standardWebhooks, apis, secrets, apiKeys } = rig;
  const items = await scanItems(dynamodb, {
    TableName: twin.names.inboxTable,
    ProjectionExpression:
      '#pk, #sk, #status, #digest, #recovered, #outcome, #count, #state, #attempts, #lastError, #receivedAt, #since, #processedAt, #breaker, #openings',
    ExpressionAttributeNames: {
      '#processedAt': InboxAttr.PROCESSED_AT,
      '#breaker': FlowAttr.BREAKER,
      '#openings': FlowAttr.OPENINGS,
      '#attempts': InboxAttr.ATTEMPTS,
      '#lastError': InboxAttr.LAST_ERROR,
      '#receivedAt': InboxAttr.RECEIVED_AT,
      '#since': InboxAttr.PENDING_SINCE,
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
  state.deadLettered.push(...(await drainQueue(rig.sqs, twin.deadLetterQueueUrl)));
  const uncalled = countAwsFaults(rig);
  const proxies = twin.faults;
  return {
    plan,
    faults: faults.counts,
    deliveries: senders.flatMap((sender) => sender.deliveries),
    attempts: senders.reduce((sum, sender) => sum + sender.stats.requests, 0),
    answerlineTasks: [...answerline.tasks.values()],
    echonovaJobs: [...echonova.jobs.values()],
    events: [...standardWebhooks.events.values()],
    echonovaWebhook: echonova.webhook,
    adversary,
    routeFlood: state.routeFlood,
    alteredSkipped: state.alteredSkipped,
    rows: items.filter((item) => item[InboxAttr.SK]?.S === InboxItemKind.DELIVERY).map(inboxRow),
    quarantined: items
      .filter((item) => item[InboxAttr.SK]?.S?.startsWith(InboxItemKind.QUARANTINE_PREFIX))
      .map((item) => ({ key: item[InboxAttr.PK].S!, digest: item[InboxAttr.DIGEST]?.S ?? '', count: Number(item[InboxAttr.COUNT]?.N ?? 0) })),
    submissions: items
      .filter((item) => item[InboxAttr.SK]?.S === InboxItemKind.SUBMISSION)
      .map((item) => ({ key: item[InboxAttr.PK].S!, state: item[InboxAttr.STATE]?.S ?? '' })),
    results: results.map((item) => ({ key: item[ResultAttr.PK].S!, taskId: item[ResultAttr.TASK_ID]?.S ?? '', status: item[ResultAttr.STATUS]?.S ?? '' })),
    deadLettered: state.deadLettered,
    effects: twin.eventBridge.events.filter((event) => event.detailType !== EffectEvent.RESOURCE_UNAVAILABLE).map(dispatchedEffect),
    unavailable: twin.eventBridge.events
      .filter((event) => event.detailType === EffectEvent.RESOURCE_UNAVAILABLE)
      .map((event) => ({
        submissionKey: String(event.detail.submissionKey),
        effectKey: String(event.detail.effectKey),
        reason: String(event.detail.reason),
      })),
    batches: rig.submittedBatches.map((batch) => ({
      provider: BATCHES,
      batchId: batch.id,
      requests: batch.requests.map((request) => ({ customId: request.customId, state: request.state ?? 'none' })),
    })),
    deadlineTaskIds: rig.deadlineTaskIds,
    interruptedRows: state.interruptedRows,
    killedRows: state.killedRows,
    receivedAt: state.receivedAt,
    providerLogs: rig.providerLogs.record(),
    servedDigests: {
      [ANSWERLINE]: apis.answerline.servedDigests,
      [ECHONOVA]: apis.echonova.servedDigests,
    },
    rateLimitedPolls: [apis.answerline, apis.echonova, apis.batches].reduce((sum, api) => sum + api.requests.filter((r) => r.status === 429).length, 0),
    logDir: twin.logDir,
    sensitive: {
      texts: [
        ...Object.values(secrets),
        ...Object.values(secrets).map((secret) => secret.replace(/^whsec_/, '')),
        ...Object.values(apiKeys),
        ...rig.providerLogs.sensitive,
      ],
      signatureTokens: state.signatureTokens,
    },
    appStats: rig.app.stats,
    hostStats: { verifier: twin.hosts.verifier.stats, processor: twin.hosts.processor.stats, reconciler: twin.hosts.reconciler.stats },
    iam: { denials: twin.iam?.gateway.denials ?? [], evaluated: Object.fromEntries(twin.iam?.gateway.evaluated ?? []) },
    uncalled,
    awsCalls: {
      changed: { ...proxies.dynamodb.injected, ...proxies.sqs.injected, ...proxies.eventBridge.injected },
      made: { ...proxies.dynamodb.calls, ...proxies.sqs.calls, ...proxies.eventBridge.calls },
    },
    alarms: (twin.template.monitor.evaluate(), twin.template.monitor.notifications).map(({ logicalId, to, at }) => ({ logicalId, to, at })),
    ...(state.downstreamOutage?.upAt !== undefined ? { downstreamOutage: { downAt: state.downstreamOutage.downAt, upAt: state.downstreamOutage.upAt } } : {}),
    ...flowItem(items),
    ...(state.queueOutage?.upAt !== undefined ? { queueOutage: { downAt: state.queueOutage.downAt, upAt: state.queueOutage.upAt } } : {}),
    errors: state.errors,
    elapsedMs: 0,
  };
}

/**
 * Counts what the fault proxies changed, by the calls they changed (each attempt of the SDK is
 * one); the kinds of AWS's faults planned on calls no function made, which had nothing to change
 * (the processor completes a batch in one request only with a third of its lease to spare, which a
 * compressed timeout may never leave).
 */
function countAwsFaults({ plan, twin, faults }: ChaosRig): FaultKind[] {
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
  const made = (fault: PlannedAwsFault) =>
    Object.entries(proxies[AWS_FAULT_PROXY[fault.kind]].calls).some(([name, count]) => count > 0 && fault.operations.some((op) => name.endsWith(`.${op}`)));
  return [...new Set(plan.awsFaults.map((fault) => fault.kind))].filter((kind) =>
    plan.awsFaults.filter((fault) => fault.kind === kind).every((fault) => !made(fault)),
  );
}

/** The flow-control item at the end of the run: where the breaker is, and how often it opened; nothing when it was never written. */
function flowItem(items: readonly Item[]): Pick<Evidence, 'breaker'> {
  const item = items.find((candidate) => candidate[InboxAttr.PK]?.S === FlowControlKey.PARTITION && candidate[InboxAttr.SK]?.S === FlowControlKey.SORT);
  if (!item) return {};
  return { breaker: { state: item[FlowAttr.BREAKER]?.S ?? '', openings: Number(item[FlowAttr.OPENINGS]?.N ?? 0) } };
}

function inboxRow(item: Item): InboxRow {
  return {
    key: item[InboxAttr.PK].S!,
    status: item[InboxAttr.STATUS]?.S ?? '',
    digest: rowDigestOf(item),
    recovered: item[InboxAttr.RECOVERED]?.BOOL === true,
    outcome: item[InboxAttr.OUTCOME]?.S,
    attempts: Number(item[InboxAttr.ATTEMPTS]?.N ?? 0),
    lastError: item[InboxAttr.LAST_ERROR]?.S,
    ...(item[InboxAttr.RECEIVED_AT]?.N !== undefined ? { receivedAt: Number(item[InboxAttr.RECEIVED_AT].N) } : {}),
    ...(item[InboxAttr.PENDING_SINCE]?.N !== undefined ? { pendingSince: Number(item[InboxAttr.PENDING_SINCE].N) } : {}),
    ...(item[InboxAttr.PROCESSED_AT]?.N !== undefined ? { processedAt: Number(item[InboxAttr.PROCESSED_AT].N) } : {}),
  };
}

function dispatchedEffect(event: RecordedEvent): DispatchedEffect {
  return {
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
  };
}
