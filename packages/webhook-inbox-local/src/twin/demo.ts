/**
 * The twin's demo: signed deliveries as Answerline, Echonova and Amazon SNS send them, with the
 * awkward cases mixed in (duplicates, a test delivery, a forged signature, two results for one job
 * in reverse order, SNS's subscription confirmation and a topic not served), then a summary read
 * back from the tables.
 */
import { createPrivateKey, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AdapterKind, DeliveryStatus, InboxAttr, InboxItemKind } from '../../../../lib/contract';
import { scanItems } from '../../../../lambda/shared/stores/dynamo';
import { DynamoDbRejectionStore } from '../../../../lambda/shared/stores/rejection-store';
import { LOCAL_REGION } from '../aws/local-aws';
import { echonovaHeaders, standardWebhooksHeaders, unixSeconds } from '../providers/signing';
import { SnsMessageFields, snsHeaders, snsMessage, SnsMessageOptions } from '../aws/sns/stand-in';
import type { LocalProvider } from '../aws/cloudformation/run-stack';
import type { Twin } from './inbox-twin';
import { LOCAL_AWS } from './twin';

type Log = (line: string) => void;

/** The HTTP API's request id header: the rejection record carries the same id. */
const REQUEST_ID_HEADER = 'apigw-requestid';
/** The verifier stamps a record with its own clock: the window around the request allows for a second either side. */
const CLOCK_SLACK_MS = 1_000;
/** Why a refusal may leave no record (docs/REJECTIONS.md); on a busy machine, most often the time budget. */
const NO_RECORD_WHY = 'the verifier samples and limits its records of refusals and gives one up past its time budget (a busy machine); the answer is the same';
/** How long the demo waits for the alarms to settle: a one-minute period to complete, and the evaluation after it. */
const SETTLE_MS = 75_000;
/** Records of one provider read back: the demo refuses only a few requests. */
const REJECTION_LOOKUP_LIMIT = 100;

interface Delivery {
  readonly label: string;
  /** Forged: refused at the authenticity check, which leaves a rejection record when its budget allows. */
  readonly forged?: boolean;
  readonly provider: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

export interface DemoSummary {
  readonly answers: Record<string, number>;
  readonly processed: number;
  readonly winners: Array<{ job: string; taskId: string; status: string }>;
  /**
   * The forged deliveries refused at the authenticity check, and how many left a rejection record
   * (the verifier gives up on one past its budget, on a busy machine, and still answers).
   */
  readonly forged: { readonly refused: number; readonly recorded: number };
  /** The alarms once settled after the demo, by the names the runbook uses: those in ALARM, and how many are OK. */
  readonly alarms: { readonly ok: number; readonly firing: readonly string[] };
  /** AWS calls the functions made, as the IAM gateway judged them; absent without it. */
  readonly iam?: { readonly judged: number; readonly denied: number };
}

export async function runDemo(twin: Twin, log: Log): Promise<DemoSummary> {
  const deliveries = buildDeliveries(twin);
  // The reconciler's first run, as its schedule makes it within a rate of a deploy: until a run is
  // counted, the reconciler-not-running alarm rightly says it has not run.
  log('demo: running the reconciler once, as its schedule does after a deploy');
  await twin.reconcileNow();
  const answers: Record<string, number> = {};
  const forged = { refused: 0, recorded: 0 };
  const dynamodb = new DynamoDBClient({ endpoint: twin.endpoints.dynamodb, ...LOCAL_AWS });
  const rejections = new DynamoDbRejectionStore(dynamodb, twin.names.inboxTable);
  log(`demo: sending ${deliveries.length} deliveries`);
  try {
    for (const delivery of deliveries) {
      const sentAt = Date.now();
      // As a provider sends: a redirect is an answer (a failed attempt), never followed.
      const response = await fetch(twin.urls[delivery.provider], { method: 'POST', headers: delivery.headers, body: delivery.body, redirect: 'manual' });
      const { result = `http_${response.status}` } = (await response.json().catch(() => ({}))) as { result?: string };
      answers[result] = (answers[result] ?? 0) + 1;
      log(`  ${String(response.status).padEnd(4)}${result.padEnd(15)}${delivery.provider.padEnd(11)}${delivery.label}`);
      if (delivery.forged && response.status >= 400) {
        forged.refused += 1;
        const requestId = response.headers.get(REQUEST_ID_HEADER) ?? '';
        const records = await rejections.list(delivery.provider, sentAt - CLOCK_SLACK_MS, Date.now() + CLOCK_SLACK_MS, REJECTION_LOOKUP_LIMIT);
        if (records.some((record) => record.requestId === requestId)) {
          forged.recorded += 1;
          log(`        rejection record written (request ${requestId}): npx webhook-inbox quarantine --rejected --config ${twin.opsConfigPath}`);
        } else {
          log(`        no rejection record: ${NO_RECORD_WHY}`);
        }
      }
    }
    const accepted = answers.accepted ?? 0;
    let processed = 0;
    for (let waited = 0; waited < 60_000; waited += 250) {
      processed = (await scanItems(dynamodb, { TableName: twin.names.inboxTable })).filter(
        (item) => item[InboxAttr.SK]?.S === InboxItemKind.DELIVERY && item[InboxAttr.STATUS]?.S === DeliveryStatus.PROCESSED,
      ).length;
      if (processed >= accepted) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    log(`demo: ${processed} of ${accepted} accepted deliveries processed`);
    const winners = (await scanItems(dynamodb, { TableName: twin.names.resultsTable }))
      .map((item) => ({ job: item.pk!.S!, taskId: item.taskId!.S!, status: item.status!.S! }))
      .sort((a, b) => a.job.localeCompare(b.job));
    const alarms = await settledAlarms(twin, log);
    const iam = twin.iam && { judged: [...twin.iam.gateway.evaluated.values()].reduce((sum, n) => sum + n, 0), denied: twin.iam.gateway.denials.length };
    return { answers, processed, winners, forged, alarms, ...(iam ? { iam } : {}) };
  } finally {
    dynamodb.destroy();
  }
}

export function formatSummary(summary: DemoSummary): string {
  const lines = ['', 'Summary', '-------'];
  for (const [reason, count] of Object.entries(summary.answers).sort()) lines.push(`  ${reason.padEnd(16)}${count}`);
  lines.push(`  ${'processed'.padEnd(16)}${summary.processed}`);
  // Only providers with jobs have winners (SNS has none).
  if (summary.winners.length > 0) lines.push('', 'Winners (one result per job, decided by rule)');
  for (const winner of summary.winners) lines.push(`  ${winner.job.padEnd(36)}${winner.status.padEnd(11)}${winner.taskId}`);
  if (summary.forged.refused > 0) {
    const missing = summary.forged.refused - summary.forged.recorded;
    lines.push(
      '',
      `Forged deliveries: ${summary.forged.refused} refused, ${summary.forged.recorded} left a rejection record` +
        (missing > 0 ? `; ${missing} without one: ${NO_RECORD_WHY}` : ''),
    );
  }
  lines.push(
    '',
    summary.alarms.firing.length === 0
      ? `Alarms: all ${summary.alarms.ok} OK`
      : `Alarms: in ALARM ${summary.alarms.firing.join(', ')}; ${summary.alarms.ok} OK`,
  );
  if (summary.iam) lines.push('', `IAM: ${summary.iam.judged} AWS calls judged against each function's role policy, ${summary.iam.denied} denied`);
  return lines.join('\n');
}

/**
 * The alarms once every one is out of INSUFFICIENT_DATA and none waits for a period to complete
 * (an alarm is judged on completed periods only: the reconciler's run clears its alarm when its
 * minute is complete), or as they are after SETTLE_MS of the twin's time.
 */
async function settledAlarms(twin: Twin, log: Log): Promise<DemoSummary['alarms']> {
  const { monitor } = twin.template;
  const started = Date.now();
  const unsettled = () => monitor.alarmStates().filter(({ state }) => state !== 'OK');
  if (unsettled().length > 0)
    log(
      `demo: waiting for the alarms to judge a completed period (${unsettled()
        .map(({ label }) => label)
        .join(', ')})…`,
    );
  while (unsettled().length > 0 && Date.now() - started < SETTLE_MS) await new Promise((resolve) => setTimeout(resolve, 500));
  const states = monitor.alarmStates();
  return { ok: states.filter(({ state }) => state === 'OK').length, firing: states.filter(({ state }) => state === 'ALARM').map(({ label }) => label) };
}

function buildDeliveries(twin: Twin): Delivery[] {
  const deliveries: Delivery[] = [];
  if (twin.secrets.answerline) {
    const secret = twin.secrets.answerline;
    const sign = (label: string, body: string, key = secret) => answerline(label, body, key);
    const tasks = Array.from({ length: 8 }, (_, i) => task(`tsk_${randomUUID().slice(0, 8)}`, `report-${i + 1}`, 'COMPLETED', hoursAgo(3)));
    for (const body of tasks) deliveries.push(sign('result', body));
    deliveries.push(sign('retry of a delivered result (duplicate)', tasks[0]), sign('retry of a delivered result (duplicate)', tasks[1]));
    deliveries.push(sign('dashboard test delivery', JSON.stringify({ test: true, task: { id: 'tsk_test' } })));
    deliveries.push({ ...sign('forged: signed with the wrong secret', tasks[2], `whsec_${Buffer.from('not the secret').toString('base64')}`), forged: true });
    // One job, resubmitted after a failure: the newer COMPLETED result arrives first, the older FAILED one last.
    deliveries.push(
      sign('job "summary": resubmission -r1, COMPLETED, created later, arrives first', task('tsk_summary_r1', 'summary-r1', 'COMPLETED', hoursAgo(1))),
      sign('job "summary": original, FAILED, created earlier, arrives last', task('tsk_summary', 'summary', 'FAILED', hoursAgo(2))),
    );
  }
  if (twin.secrets.echonova) {
    const secret = twin.secrets.echonova;
    const jobs = Array.from({ length: 3 }, (_, i) =>
      JSON.stringify({ jobId: `job_${randomUUID().slice(0, 8)}`, status: 'completed', createdAt: hoursAgo(i + 1), audioUrl: 'https://example.invalid/a.mp3' }),
    );
    for (const body of jobs) deliveries.push(echonova('job.completed', body, secret));
    deliveries.push(echonova('job.completed', jobs[0], secret, 'retry of a delivered job (duplicate)'));
  }
  for (const provider of twin.inbox.providers.filter((candidate) => candidate.adapter === AdapterKind.SNS)) {
    deliveries.push(...snsDeliveries(provider, twin.endpoints.sns));
  }
  return deliveries;
}

/** A topic of another account: SNS signs its messages as it signs every topic's. */
const FOREIGN_TOPIC_ARN = `arn:aws:sns:${LOCAL_REGION}:111111111111:someone-elses-topic`;

/** SNS's side of a subscription, signed by the twin's SNS stand-in: confirm it, then notify. */
function snsDeliveries(provider: LocalProvider, origin: string): Delivery[] {
  const signer = { signingKey: createPrivateKey(provider.secret) };
  const topicArn = provider.topicArns![0];
  const sns = (label: string, options: Partial<SnsMessageOptions>, alter: (fields: SnsMessageFields) => SnsMessageFields = (fields) => fields): Delivery => {
    const fields = alter(snsMessage(signer, { topicArn, origin, ...options }));
    return { label, provider: provider.name, body: JSON.stringify(fields), headers: snsHeaders(fields) };
  };
  const notifications = [
    sns('notification', { message: JSON.stringify({ order: 'A-1001', status: 'shipped' }) }),
    sns('notification with a Subject', { subject: 'Order shipped', message: JSON.stringify({ order: 'A-1002', status: 'shipped' }) }),
    sns('notification, SignatureVersion 1', { signatureVersion: '1', message: JSON.stringify({ order: 'A-1003', status: 'delivered' }) }),
  ];
  return [
    sns('subscription confirmation (confirmed at its SubscribeURL, never stored)', { type: 'SubscriptionConfirmation' }),
    ...notifications,
    { ...notifications[0], label: 'retry of a delivered notification (duplicate)' },
    sns('a topic this inbox does not serve (SNS signs every topic)', { topicArn: FOREIGN_TOPIC_ARN }),
    {
      ...sns('forged: the message changed after SNS signed it', {}, (fields) => ({
        ...fields,
        Message: JSON.stringify({ order: 'A-1001', status: 'refunded' }),
      })),
      forged: true,
    },
  ];
}

function answerline(label: string, body: string, secret: string): Delivery {
  // Signed as the simulated providers sign, never with the verifier's own code.
  return { label, provider: 'answerline', body, headers: standardWebhooksHeaders(secret, `msg_${randomUUID()}`, unixSeconds(), Buffer.from(body)) };
}

function echonova(event: string, body: string, secret: string, label = event): Delivery {
  return { label, provider: 'echonova', body, headers: echonovaHeaders(secret, event, unixSeconds(), Buffer.from(body)) };
}

function task(id: string, idempotencyKey: string, status: string, createdAt: string): string {
  const response = status === 'COMPLETED' ? { result: { answer: `answer for ${idempotencyKey}` } } : { error: { code: 'MODEL_ERROR' } };
  return JSON.stringify({ task: { id, status, idempotencyKey, createdAt }, credits: { charged: 1 }, response });
}

function hoursAgo(hours: number): string {
  return new Date(Date.now() - hours * 3_600_000).toISOString();
}
