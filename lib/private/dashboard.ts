import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { MetricName } from '../contract';
import type { IWebhookInbox } from '../inbox-interface';
import type { WebhookInboxDashboardOptions } from '../monitoring-options';
import { endpointApi, endpointApiKind } from './endpoint-api';

const FULL = 24;
const HALF = 12;
const THIRD = 8;
const HEIGHT = 6;

/**
 * The pipeline on one dashboard, in the order a delivery travels: what the endpoint answered,
 * the verifier, the work queue and its dead-letter queue, processing, the reconciler, effects,
 * signing secrets, and the state of every alarm. Internal: WebhookInbox creates it; it needs only
 * what `IWebhookInbox` offers.
 */
export function createInboxDashboard(
  scope: Construct,
  id: string,
  inbox: IWebhookInbox,
  alarms: cloudwatch.IAlarm[],
  options: WebhookInboxDashboardOptions = {},
): cloudwatch.Dashboard {
  const dashboard = new cloudwatch.Dashboard(scope, id, { dashboardName: options.dashboardName });
  dashboard.addWidgets(
    new cloudwatch.TextWidget({
      width: FULL,
      height: 2,
      markdown:
        `# Webhook inbox ${inbox.inboxName}\n` +
        'Deliveries → verifier → inbox table → work queue → processor → results; the reconciler sweeps stranded rows and polls overdue submissions. ' +
        'Each alarm names its section of the runbook, `docs/RUNBOOK.md` in cdk-webhook-inbox.',
    }),
  );
  if (alarms.length > 0) {
    dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms, width: FULL, height: 3 }));
  }
  for (const row of [deliveryRow(inbox), queueRow(inbox), processingRow(inbox), reconcilerRow(inbox), deadlineRow(inbox), functionRow(inbox)]) {
    dashboard.addWidgets(...row);
  }
  return dashboard;
}

/** What the endpoint answered: each reason the verifier counts, and the API's latency and errors. */
function deliveryRow(inbox: IWebhookInbox): cloudwatch.IWidget[] {
  const count = (name: string, label: string) => inbox.metric(name, { label });
  return [
    new cloudwatch.GraphWidget({
      title: 'Deliveries by reason',
      width: HALF,
      height: HEIGHT,
      stacked: true,
      left: [
        count(MetricName.ACCEPTED, 'accepted'),
        count(MetricName.DUPLICATE, 'duplicate'),
        count(MetricName.QUARANTINED, 'quarantined'),
        count(MetricName.TEST_DELIVERY, 'test'),
        count(MetricName.NOT_FINAL, 'not_final'),
        count(MetricName.FILTERED, 'filtered'),
        count(MetricName.BAD_SIGNATURE, 'bad_signature'),
        count(MetricName.STALE_TIMESTAMP, 'stale_timestamp'),
        count(MetricName.MALFORMED, 'malformed'),
        count(MetricName.TOO_LARGE, 'too_large'),
        count(MetricName.STORE_ERROR, 'store_error'),
        count(MetricName.SECRET_UNAVAILABLE, 'secret_unavailable'),
      ],
    }),
    new cloudwatch.GraphWidget({
      title: `Endpoint (${endpointApiKind(inbox)})`,
      width: HALF,
      height: HEIGHT,
      left: [
        endpointApi(inbox).metricLatency({ statistic: 'p50', label: 'latency p50' }),
        endpointApi(inbox).metricLatency({ statistic: 'p99', label: 'latency p99' }),
        endpointApi(inbox).metricIntegrationLatency({ statistic: 'p99', label: 'verifier p99' }),
      ],
      right: [endpointApi(inbox).metricClientError({ label: '4xx' }), inbox.metricVerifierServerErrors({ label: '5xx' })],
    }),
  ];
}

/** The work queue, how long deliveries wait in it, and what it dead-lettered. */
function queueRow(inbox: IWebhookInbox): cloudwatch.IWidget[] {
  const queueDepth = [inbox.metricWorkQueueDepth({ label: 'work queue visible' })];
  const deadLetterDepth = inbox.metricDeadLetterQueueDepth({ label: 'DLQ visible' });
  return [
    new cloudwatch.GraphWidget({
      title: 'Work queue',
      width: THIRD,
      height: HEIGHT,
      left: queueDepth,
      right: [inbox.metricOldestMessageAge({ label: 'oldest message age (s)' })],
    }),
    new cloudwatch.GraphWidget({
      title: 'Queue delay (ms, p99)',
      width: THIRD,
      height: HEIGHT,
      left: [
        inbox.metricQueueDelay({ label: 'from receipt p99' }),
        inbox.metricQueueDelayFromEvent({ label: "from the provider's event p99" }),
        inbox.metricQueueDelay({ statistic: 'p50', label: 'from receipt p50' }),
      ],
    }),
    new cloudwatch.GraphWidget({
      title: 'Dead deliveries',
      width: THIRD,
      height: HEIGHT,
      left: [...(deadLetterDepth ? [deadLetterDepth] : []), inbox.metricDeadLettered({ label: 'dead-lettered rows' })],
    }),
  ];
}

/** Processing and the effects it dispatched. */
function processingRow(inbox: IWebhookInbox): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Processing',
      width: HALF,
      height: HEIGHT,
      left: [
        inbox.metricProcessed({ label: 'processed' }),
        inbox.metricProcessingFailures({ label: 'failed' }),
        inbox.metricDeadLettered({ label: 'dead-lettered' }),
        inbox.metricWinnerChanged({ label: 'winner changed' }),
      ],
    }),
    new cloudwatch.GraphWidget({
      title: 'Effects',
      width: HALF,
      height: HEIGHT,
      left: [
        inbox.metricEffectsDispatched({ label: 'dispatched' }),
        inbox.metricEffectFailures({ label: 'failed' }),
        inbox.metricResourceUnavailable({ label: 'resource unavailable' }),
      ],
    }),
  ];
}

/** The reconciler's sweep and polling, and the signing secrets' use. */
function reconcilerRow(inbox: IWebhookInbox): cloudwatch.IWidget[] {
  const rotationFailures = inbox.metricRotationFailures({ label: 'rotation failures, unread' });
  return [
    new cloudwatch.GraphWidget({
      title: 'Reconciler',
      width: HALF,
      height: HEIGHT,
      left: [
        inbox.metricSwept({ label: 'swept' }),
        inbox.metricEnqueueFailures({ label: 'enqueue failed' }),
        inbox.metricRecovered({ label: 'recovered' }),
        inbox.metricUnknownSubmissions({ label: 'unknown' }),
        inbox.metricStillPending({ label: 'pending' }),
        inbox.metricPollRateLimited({ label: 'rate limited' }),
        inbox.metricPollErrors({ label: 'poll errors' }),
      ],
      right: [inbox.metricOverdueSubmissions({ label: 'overdue (max)' }), inbox.metricSweepLag({ label: 'sweep lag, s (max)' })],
    }),
    new cloudwatch.GraphWidget({
      title: 'Signing secrets',
      width: HALF,
      height: HEIGHT,
      left: [
        inbox.metricCurrentSecretMatches({ label: 'AWSCURRENT' }),
        inbox.metricPendingSecretMatches({ label: 'AWSPENDING' }),
        inbox.metricPreviousSecretMatches({ label: 'AWSPREVIOUS' }),
        inbox.metricSignatureFailures({ label: 'authentication failed' }),
        inbox.metricUnusableSecretVersions({ label: 'bad signature, a staged value unusable' }),
      ],
      // What the refusals left: records (quarantine --rejected), those over the limit or sampled out, failed writes; failed rotations.
      right: [
        inbox.metricRejectionsRecorded({ label: 'rejection records' }),
        inbox.metricRejectionsSuppressed({ label: 'rejections not recorded' }),
        inbox.metricRejectionRecordFailures({ label: 'rejection records failed' }),
        ...(rotationFailures ? [rotationFailures] : []),
      ],
    }),
  ];
}

/** Recorded submissions near their deadline, and provider resources found gone. */
function deadlineRow(inbox: IWebhookInbox): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Submission deadlines',
      width: FULL,
      height: HEIGHT,
      left: [inbox.metricSubmissionsNearDeadline({ label: 'near deadline, unread (max)' })],
      right: [inbox.metricResourceUnavailable({ label: 'resource unavailable' })],
    }),
  ];
}

/** Each function's errors, throttles and p99 duration. */
function functionRow(inbox: IWebhookInbox): cloudwatch.IWidget[] {
  const lambdaHealth = (title: string, fn: IWebhookInbox['verifierFunction']) =>
    new cloudwatch.GraphWidget({
      title,
      width: THIRD,
      height: HEIGHT,
      left: [fn.metricErrors({ label: 'errors' }), fn.metricThrottles({ label: 'throttles' })],
      right: [fn.metricDuration({ statistic: 'p99', label: 'duration p99' })],
    });
  return [
    lambdaHealth('Verifier function', inbox.verifierFunction),
    lambdaHealth('Processor function', inbox.processorFunction),
    lambdaHealth('Reconciler function', inbox.reconcilerFunction),
  ];
}
