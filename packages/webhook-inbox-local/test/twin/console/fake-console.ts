/**
 * A console source the tests change between refreshes, and a snapshot that looks like a twin
 * after a few minutes of traffic: two inboxes, deliveries of every outcome, alarms in each state
 * and charts drawn from a dashboard body through the parser.
 */
import { MetricIdentity, parseDashboardWidgets, widgetSeries } from '../../../src/twin/console/dashboard-widgets';
import type { AlarmStateValue, ConsoleAlarm, ConsoleDelivery, ConsoleSnapshot, ConsoleSource, FlowAction } from '../../../src/twin/console/snapshot';
import { DeliveryStatus } from '../../../../../lib/contract';

export const RUNBOOK = 'https://runbook.example/webhook-inbox';

/** A mutable snapshot behind the page; `failure` makes the next snapshots fail with that message. */
export class FakeConsoleSource implements ConsoleSource {
  failure: string | undefined;

  constructor(public current: ConsoleSnapshot) {}

  async snapshot(): Promise<ConsoleSnapshot> {
    if (this.failure) throw new Error(this.failure);
    return { ...this.current, generatedAt: new Date().toISOString() };
  }

  setAlarmState(name: string, state: AlarmStateValue, reason: string): void {
    const updatedAt = new Date().toISOString();
    this.current = {
      ...this.current,
      alarms: this.current.alarms.map((alarm): ConsoleAlarm => (alarm.name === name ? { ...alarm, state, reason, updatedAt } : alarm)),
    };
  }

  /** The flow-control buttons pressed, in order; each changes the inbox's state as the twin's would. */
  readonly flowChanges: string[] = [];

  async changeFlow(inboxName: string, action: FlowAction): Promise<void> {
    this.flowChanges.push(`${inboxName} ${action}`);
    const flow = action === 'pause' ? { pausedSince: new Date().toISOString(), breaker: 'CLOSED' } : { pausedSince: null, breaker: 'CLOSED' };
    this.current = { ...this.current, inboxes: this.current.inboxes.map((inbox) => (inbox.name === inboxName ? { ...inbox, flow } : inbox)) };
  }

  /** Adds a delivery to the front of an inbox's recent deliveries. */
  addDelivery(inboxName: string, delivery: ConsoleDelivery): void {
    this.current = {
      ...this.current,
      inboxes: this.current.inboxes.map((inbox) => (inbox.name === inboxName ? { ...inbox, deliveries: [delivery, ...inbox.deliveries] } : inbox)),
    };
  }
}

/** A dashboard body in CloudWatch's notation, shorthand and a math expression included. */
export const SAMPLE_DASHBOARD_BODY = JSON.stringify({
  widgets: [
    { type: 'text', properties: { markdown: '# Webhook inbox answers' } },
    {
      type: 'metric',
      properties: {
        title: 'Deliveries by reason',
        stat: 'Sum',
        period: 60,
        metrics: [
          ['WebhookInbox', 'Accepted', 'Inbox', 'answers', { label: 'accepted', id: 'accepted' }],
          ['.', 'Duplicate', '.', '.', { label: 'duplicate' }],
          ['.', 'BadSignature', '.', '.', { label: 'bad_signature', id: 'bad' }],
          [{ expression: '100 * bad / (accepted + bad)', label: 'refused %', id: 'refused' }],
        ],
      },
    },
    {
      type: 'metric',
      properties: {
        title: 'Work queue',
        metrics: [
          ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', 'answers-work', { label: 'visible', stat: 'Maximum' }],
          ['...', 'answers-dead-letter', { label: 'dead-letter visible', stat: 'Maximum' }],
          ['.', 'ApproximateAgeOfOldestMessage', '.', 'answers-work', { label: 'oldest age (s)', stat: 'Maximum', yAxis: 'right' }],
        ],
      },
    },
  ],
});

const MINUTE = 60_000;

/** Points every period over the window: a smooth, distinct curve per metric, so the charts look alive. */
export function syntheticSeries(metric: MetricIdentity, _stat: string, periodSeconds: number, fromMs: number, toMs: number): [number, number][] {
  const seed = [...`${metric.metricName}${JSON.stringify(metric.dimensions)}`].reduce((sum, char) => (sum * 31 + char.charCodeAt(0)) % 997, 7);
  const scale = 1 + (seed % 9);
  const points: [number, number][] = [];
  const step = periodSeconds * 1000;
  for (let at = Math.ceil(fromMs / step) * step; at <= toMs; at += step) {
    const phase = at / (7 * MINUTE) + seed;
    points.push([at, Math.max(0, Math.round(scale * (1.2 + Math.sin(phase) + 0.5 * Math.sin(phase * 2.7))))]);
  }
  return points;
}

/** A twin a few minutes into a run, its deliveries ending `nowMs`. */
export function representativeSnapshot(nowMs: number, dashboards: ConsoleSnapshot['dashboards'] = sampleDashboards(nowMs)): ConsoleSnapshot {
  const at = (secondsAgo: number) => new Date(nowMs - secondsAgo * 1000).toISOString();
  const hook = (provider: string) => `http://127.0.0.1:4010/hooks/${provider}`;
  return {
    generatedAt: at(0),
    inboxes: [
      {
        name: 'answers',
        providers: [
          { name: 'answerline', url: hook('answerline') },
          { name: 'stripe', url: hook('stripe') },
        ],
        deliveries: [
          { at: at(2), provider: 'answerline', status: 202, reason: 'accepted', requestId: 'req-7f3a91' },
          { at: at(9), provider: 'stripe', status: 401, reason: 'bad_signature', requestId: 'req-2c8d04' },
          { at: at(14), provider: 'answerline', status: 200, reason: 'duplicate', requestId: 'req-91be55' },
          { at: at(31), provider: 'stripe', status: 202, reason: 'accepted', requestId: 'req-0d4471' },
          { at: at(47), provider: 'answerline', status: 400, reason: 'stale_timestamp', requestId: 'req-5a19c2' },
          { at: at(63), provider: 'answerline', status: 503, reason: 'store_error', requestId: 'req-e6f0b8' },
          { at: at(80), provider: 'stripe', status: 413, reason: 'too_large', requestId: 'req-33aa7e' },
        ],
        rowsByStatus: { [DeliveryStatus.RECEIVED]: 1, [DeliveryStatus.PROCESSING]: 2, [DeliveryStatus.PROCESSED]: 118, FAILED: 1, [DeliveryStatus.DEAD]: 2 },
        deadLetter: { queue: 'answers-dead-letter', depth: 2 },
        flow: { pausedSince: null, breaker: 'CLOSED' },
      },
      {
        name: 'billing',
        providers: [{ name: 'github', url: hook('github') }],
        deliveries: [{ at: at(20), provider: 'github', status: 202, reason: 'accepted', requestId: 'req-b1d2e3' }],
        rowsByStatus: { PROCESSED: 12 },
        deadLetter: { queue: 'billing-dead-letter', depth: 0 },
      },
    ],
    alarms: [
      alarm(
        'answers-DeadLetterQueueDepth',
        'ALARM',
        'Threshold Crossed: 1 datapoint [2.0] was greater than or equal to the threshold (1.0).',
        at(40),
        'dead-deliveries',
      ),
      alarm(
        'answers-SignatureFailures',
        'OK',
        'Threshold Crossed: no datapoint was greater than or equal to the threshold (5.0).',
        at(600),
        'signature-failures',
      ),
      alarm(
        'answers-OldestMessageAge',
        'OK',
        'Threshold Crossed: 1 datapoint [3.0] was not greater than or equal to the threshold (900.0).',
        at(600),
        'oldest-message-age',
      ),
      alarm('answers-ReconcilerNotRunning', 'INSUFFICIENT_DATA', 'Insufficient Data: no datapoint in the last hour yet.', at(300), 'reconciler-not-running'),
      alarm(
        'billing-DeadLetterQueueDepth',
        'OK',
        'Threshold Crossed: no datapoint was greater than or equal to the threshold (1.0).',
        at(600),
        'dead-deliveries',
      ),
    ],
    dashboards,
  };
}

/** An inbox's alarm, named as CloudFormation names it (`answers-DeadLetterQueueDepth`): its label is the construct id in camel case, its owner the inbox. */
function alarm(name: string, state: AlarmStateValue, reason: string, updatedAt: string, section: string): ConsoleAlarm {
  const [inbox, id] = name.split('-');
  return {
    name,
    label: id.charAt(0).toLowerCase() + id.slice(1),
    owner: inbox.charAt(0).toUpperCase() + inbox.slice(1),
    state,
    reason,
    updatedAt,
    runbook: `${RUNBOOK}#${section}`,
  };
}

function sampleDashboards(nowMs: number): ConsoleSnapshot['dashboards'] {
  return [{ name: 'answers', widgets: widgetSeries(parseDashboardWidgets(SAMPLE_DASHBOARD_BODY), syntheticSeries, nowMs, 30 * MINUTE) }];
}
