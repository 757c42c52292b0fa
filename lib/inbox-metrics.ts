import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { METRIC_NAMESPACE, MetricDimension, MetricName, MonitoringDefaults } from './contract';

/** The default period of the metrics. */
const METRIC_PERIOD = Duration.minutes(MonitoringDefaults.METRIC_PERIOD_MINUTES);

/**
 * The metrics the handlers emit for an inbox (namespace `WebhookInbox`, dimension `Inbox`), each
 * by its name. `WebhookInboxBase` extends it with the inbox's resources and their own metrics.
 */
export abstract class WebhookInboxMetrics extends Construct {
  /** The inbox's name: the `Inbox` dimension of its metrics. */
  public abstract readonly inboxName: string;

  /**
   * A metric the handlers emit, for this inbox across its providers.
   * @default - sum over 5 minutes
   */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: METRIC_NAMESPACE,
      metricName,
      dimensionsMap: { [MetricDimension.INBOX]: this.inboxName },
      statistic: 'Sum',
      period: METRIC_PERIOD,
      ...props,
    });
  }

  /** Deliveries admitted as new rows. @default - sum over 5 minutes */
  public metricAccepted(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.ACCEPTED, props);
  }

  /**
   * Requests refused at the authenticity check: a signature that matches no secret, a missing or
   * garbled signature, timestamp or id header, a stale timestamp (each also counted under its
   * reason). @default - sum over 5 minutes
   */
  public metricSignatureFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.AUTHENTICATION_FAILED, props);
  }

  /** Deliveries refused for a well-formed signature that matches no secret. @default - sum over 5 minutes */
  public metricBadSignatures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.BAD_SIGNATURE, props);
  }

  /** Altered duplicates kept aside (same id, different body). @default - sum over 5 minutes */
  public metricQuarantined(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.QUARANTINED, props);
  }

  /** Deliveries answered 5xx because the inbox table failed. @default - sum over 5 minutes */
  public metricStoreErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.STORE_ERROR, props);
  }

  /**
   * Deliveries verified with the previous secret (AWSPREVIOUS) after a rotation: when it stays at
   * zero, the provider has switched and the old secret can go. @default - sum over 5 minutes
   */
  public metricPreviousSecretMatches(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.MATCHED_PREVIOUS_SECRET, props);
  }

  /**
   * Deliveries refused for a bad signature while a staged version (AWSPENDING, AWSPREVIOUS) held a
   * value that does not decode as this provider's key: a mistyped secret, which signs nothing.
   * @default - sum over 5 minutes
   */
  public metricUnusableSecretVersions(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.UNUSABLE_SECRET_VERSION, props);
  }

  /** Rows processed. @default - sum over 5 minutes */
  public metricProcessed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.PROCESSED, props);
  }

  /** Failed processing attempts. @default - sum over 5 minutes */
  public metricProcessingFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.PROCESSING_FAILED, props);
  }

  /** Rows whose last allowed attempt failed (their message goes to the DLQ). @default - sum over 5 minutes */
  public metricDeadLettered(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.DEAD_LETTERED, props);
  }

  /** Rows the reconciler enqueued again. @default - sum over 5 minutes */
  public metricSwept(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.SWEPT, props);
  }

  /** Seconds the sweep's watermark lags its cutoff at the end of a reconciler run (`SweepLag`, 0 when it caught up). @default - maximum over 5 minutes */
  public metricSweepLag(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.SWEEP_LAG, { statistic: 'Maximum', ...props });
  }

  /** 1 while the circuit breaker is open or probing, 0 while closed, one value per reconciler run (`BreakerOpen`). @default - maximum over 5 minutes */
  public metricBreakerOpen(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.BREAKER_OPEN, { statistic: 'Maximum', ...props });
  }

  /** Times a processor opened the circuit breaker (`BreakerOpened`). @default - sum over 5 minutes */
  public metricBreakerOpened(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.BREAKER_OPENED, props);
  }

  /** 1 while an operator has the inbox paused, 0 otherwise, one value per reconciler run (`Paused`). @default - maximum over 5 minutes */
  public metricPaused(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.PAUSED, { statistic: 'Maximum', ...props });
  }

  /** Work messages answered without claiming their row while paused or the breaker open: the row waits, no attempt spent (`Deferred`). @default - sum over 5 minutes */
  public metricDeferred(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.DEFERRED, props);
  }

  /** Repeats of a stored delivery with the same body (answered 2xx, nothing stored). @default - sum over 5 minutes */
  public metricDuplicates(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.DUPLICATE, props);
  }

  /** Verified test deliveries (answered 2xx, nothing stored). @default - sum over 5 minutes */
  public metricTestDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.TEST_DELIVERY, props);
  }

  /** Signed handshakes a provider checks the endpoint with, answered at the edge and never stored. @default - sum over 5 minutes */
  public metricHandshakes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.HANDSHAKE, props);
  }

  /** Requests from outside a provider's allowed source ranges, refused 403 before any verification. @default - sum over 5 minutes */
  public metricSourceNotAllowed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.SOURCE_NOT_ALLOWED, props);
  }

  /** Requests whose signing certificate (SNS's) could not be fetched, answered 503 so that SNS retries. @default - sum over 5 minutes */
  public metricCertificateUnavailable(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.CERTIFICATE_UNAVAILABLE, props);
  }

  /** Subscription confirmations (SNS's) that SNS did not accept when the inbox requested them, answered 502. @default - sum over 5 minutes */
  public metricConfirmationFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.CONFIRMATION_FAILED, props);
  }

  /**
   * Verified deliveries of a task that is not final yet (Answerline): answered 200, nothing stored,
   * so they never stand in the way of the final delivery. @default - sum over 5 minutes
   */
  public metricNotFinalDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.NOT_FINAL, props);
  }

  /**
   * Verified deliveries a provider's filter (`eventTypes`, `keepWhen`) dropped: answered 200
   * `filtered`, stored nowhere; per provider with the `Provider` dimension. @default - sum over 5 minutes
   */
  public metricFilteredDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.FILTERED, props);
  }

  /** Processed deliveries written to the archive (the `archive` prop). @default - sum over 5 minutes */
  public metricArchived(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.ARCHIVED, props);
  }

  /** Processed deliveries whose archive write failed: their rows are retried, like a failed effect. @default - sum over 5 minutes */
  public metricArchiveFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.ARCHIVE_FAILED, props);
  }

  /** Deliveries refused for a signed timestamp outside the tolerance. @default - sum over 5 minutes */
  public metricStaleTimestamps(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.STALE_TIMESTAMP, props);
  }

  /** Deliveries refused for a missing or garbled header or field. @default - sum over 5 minutes */
  public metricMalformed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.MALFORMED, props);
  }

  /** Deliveries refused for a body over `maxBodySize`. @default - sum over 5 minutes */
  public metricTooLarge(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.TOO_LARGE, props);
  }

  /** Verified deliveries refused for a body nested deeper than 512 levels (400 `body_too_deep`). @default - sum over 5 minutes */
  public metricBodyTooDeep(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.BODY_TOO_DEEP, props);
  }

  /** Deliveries answered 5xx because the signing secret could not be read. @default - sum over 5 minutes */
  public metricSecretUnavailable(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.SECRET_UNAVAILABLE, props);
  }

  /** Stored deliveries whose enqueue failed (the sweep enqueues them later). @default - sum over 5 minutes */
  public metricEnqueueFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.ENQUEUE_FAILED, props);
  }

  /** Processed rows that became their job's result. @default - sum over 5 minutes */
  public metricWinnerChanged(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.WINNER_CHANGED, props);
  }

  /** Deliveries verified with the current secret (AWSCURRENT). @default - sum over 5 minutes */
  public metricCurrentSecretMatches(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.MATCHED_CURRENT_SECRET, props);
  }

  /** Deliveries verified with the staged secret (AWSPENDING) during a rotation. @default - sum over 5 minutes */
  public metricPendingSecretMatches(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.MATCHED_PENDING_SECRET, props);
  }

  /** Submissions whose final result was fetched by polling the provider. @default - sum over 5 minutes */
  public metricRecovered(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.RECOVERED, props);
  }

  /** Seconds since a provider recovered from its event log (GitHub, Stripe) last completed a run. @default - sum over 5 minutes */
  public metricRecoveryStalled(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.RECOVERY_STALLED, props);
  }

  /** Recovery runs that resumed past what the provider still keeps (GitHub 3 days, Stripe 30 days): events may be lost. @default - sum over 5 minutes */
  public metricRecoveryBeyondRetention(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.RECOVERY_BEYOND_RETENTION, props);
  }

  /** Polled submissions the provider does not know (404: unknown or expired). @default - sum over 5 minutes */
  public metricUnknownSubmissions(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.UNKNOWN_SUBMISSIONS, props);
  }

  /** Results of polled batches' requests stored as rows of their own (each once). @default - sum over 5 minutes */
  public metricBatchChildrenRecorded(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.BATCH_CHILDREN_RECORDED, props);
  }

  /** Polled batches whose every result was recorded and whose summary was stored. @default - sum over 5 minutes */
  public metricBatchesSettled(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.BATCHES_SETTLED, props);
  }

  /** Polled submissions not final yet, checked again later. @default - sum over 5 minutes */
  public metricStillPending(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.STILL_PENDING, props);
  }

  /**
   * Submissions past their provider's lifecycle horizon without a result, as counted by each
   * reconciler run (every run reports, zero included). @default - maximum over 5 minutes
   */
  public metricOverdueSubmissions(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OVERDUE, { statistic: 'Maximum', ...props });
  }

  /** Reconciler runs that stopped polling because the provider answered 429. @default - sum over 5 minutes */
  public metricPollRateLimited(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.POLL_RATE_LIMITED, props);
  }

  /** Polls that failed (network, 5xx). @default - sum over 5 minutes */
  public metricPollErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.POLL_ERRORS, props);
  }

  /** Effects dispatched (events, invocations of your code). @default - sum over 5 minutes */
  public metricEffectsDispatched(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.EFFECTS_DISPATCHED, props);
  }

  /** Effect dispatches that failed (the row is retried). @default - sum over 5 minutes */
  public metricEffectFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.EFFECT_FAILURES, props);
  }

  /**
   * Work messages whose inbox row was gone (it expired before the message was processed): nothing
   * was processed. Non-zero means retention is too short for how late messages arrive. @default - sum over 5 minutes
   */
  public metricMessagesWithoutRow(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.MESSAGE_WITHOUT_ROW, props);
  }

  /**
   * Keys that are not a delivery row's found in a work message or the sweep's pending index:
   * refused, never processed. Non-zero means something other than the inbox wrote to its table
   * or queue (docs/RUNBOOK.md). @default - sum over 5 minutes
   */
  public metricRefusedKeys(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.REFUSED_KEYS, props);
  }

  /**
   * Provider resources found gone: a delivery's at the authoritative read (404/410), or a recorded
   * submission's (polled 404/410, or its deadline passed unread). @default - sum over 5 minutes
   */
  public metricResourceUnavailable(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.RESOURCE_UNAVAILABLE, props);
  }

  /**
   * Recorded submissions within their deadline's warning margin and still unread, as counted by each
   * reconciler run (every run reports, zero included). @default - maximum over 5 minutes
   */
  public metricSubmissionsNearDeadline(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.NEAR_DEADLINE, { statistic: 'Maximum', ...props });
  }

  /** Requests refused at the authenticity check that left a rejection record. @default - sum over 5 minutes */
  public metricRejectionsRecorded(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.REJECTION_RECORDED, props);
  }

  /** Requests refused at the authenticity check that left no record: sampled out or over the minute's limit. @default - sum over 5 minutes */
  public metricRejectionsSuppressed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.REJECTION_SUPPRESSED, props);
  }

  /** Rejection records that could not be written (an error, or over their time budget). @default - sum over 5 minutes */
  public metricRejectionRecordFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.REJECTION_RECORD_FAILED, props);
  }

  /** Milliseconds from a delivery's receipt to the start of its first processing attempt (`QueueDelay`, one value per row). @default - p99 over 5 minutes */
  public metricQueueDelay(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.QUEUE_DELAY, { statistic: 'p99', ...props });
  }

  /**
   * Milliseconds from the provider's signed event timestamp to the start of the row's first processing attempt (`QueueDelayFromEvent`; providers that sign a time). @default - p99 over 5 minutes
   */
  public metricQueueDelayFromEvent(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.QUEUE_DELAY_FROM_EVENT, { statistic: 'p99', ...props });
  }
}
