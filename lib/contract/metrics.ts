/** CloudWatch namespace of every metric the handlers emit (EMF). */
export const METRIC_NAMESPACE = 'WebhookInbox';

/** Dimension names. Every metric carries `Inbox`; per-provider copies also carry `Provider`. */
export const MetricDimension = {
  INBOX: 'Inbox',
  PROVIDER: 'Provider',
} as const;

/** Metric names the handlers emit. */
export const MetricName = {
  ACCEPTED: 'Accepted',
  DUPLICATE: 'Duplicate',
  TEST_DELIVERY: 'TestDelivery',
  /** Signed handshakes the provider checks the endpoint with (Slack's url_verification, Discord's PING), answered at the edge. */
  HANDSHAKE: 'Handshake',
  /** Requests from outside the provider's allowed source ranges, refused before any verification. */
  SOURCE_NOT_ALLOWED: 'SourceNotAllowed',
  /** Verified deliveries of a task that is not final yet (Answerline): acknowledged, never stored. */
  NOT_FINAL: 'NotFinal',
  /** Verified deliveries the provider's filter dropped (200 `filtered`): stored nowhere. */
  FILTERED: 'Filtered',
  BAD_SIGNATURE: 'BadSignature',
  /**
   * Requests refused at the authenticity check, whatever the reason (a signature that matches no
   * secret; a missing or garbled signature, timestamp or id header; a stale timestamp), counted
   * beside that reason's own metric: the signature-failure alarm's metric.
   */
  AUTHENTICATION_FAILED: 'AuthenticationFailed',
  STALE_TIMESTAMP: 'StaleTimestamp',
  MALFORMED: 'Malformed',
  /** Verified deliveries refused because their body nests JSON deeper than `Limits.MAX_JSON_DEPTH` levels (400 `body_too_deep`). */
  BODY_TOO_DEEP: 'BodyTooDeep',
  TOO_LARGE: 'TooLarge',
  STORE_ERROR: 'StoreError',
  SECRET_UNAVAILABLE: 'SecretUnavailable',
  /** Requests whose signing certificate (SNS's) could not be fetched: answered 503, so the provider retries. */
  CERTIFICATE_UNAVAILABLE: 'CertificateUnavailable',
  /** Subscription confirmations (SNS's) the provider did not accept when the inbox requested them: answered 502. */
  CONFIRMATION_FAILED: 'ConfirmationFailed',
  QUARANTINED: 'Quarantined',
  ENQUEUE_FAILED: 'EnqueueFailed',
  PROCESSED: 'Processed',
  PROCESSING_FAILED: 'ProcessingFailed',
  DEAD_LETTERED: 'DeadLettered',
  WINNER_CHANGED: 'WinnerChanged',
  SWEPT: 'Swept',
  /**
   * Seconds between the sweep's cutoff (now less `sweepAfter`) and its watermark at the end of a
   * run (unit Seconds, one value per run, 0 when it caught up): how much of the pending index is
   * still unexamined; growing from run to run, the sweep does not keep up.
   */
  SWEEP_LAG: 'SweepLag',
  MATCHED_CURRENT_SECRET: 'MatchedCurrentSecret',
  MATCHED_PENDING_SECRET: 'MatchedPendingSecret',
  MATCHED_PREVIOUS_SECRET: 'MatchedPreviousSecret',
  /** Bad-signature deliveries while a staged secret version (AWSPENDING, AWSPREVIOUS) held a value that does not decode as a key. */
  UNUSABLE_SECRET_VERSION: 'UnusableSecretVersion',
  /** Submissions whose final result was fetched by polling the provider, and events recovered from its event log (GitHub, Stripe), fed into the inbox. */
  RECOVERED: 'Recovered',
  /**
   * Seconds since a provider's recovery from its event log last completed a run (unit Seconds, one
   * value per run and provider): growing, its polls fail, are rate limited, or its hook is gone.
   */
  RECOVERY_STALLED: 'RecoveryStalledSeconds',
  /** Events the provider no longer keeps, found past its retention when a recovery resumed: reported, never silently skipped. */
  RECOVERY_BEYOND_RETENTION: 'RecoveryBeyondRetention',
  /** Submissions the provider does not know (404): unknown or no longer kept. */
  UNKNOWN_SUBMISSIONS: 'UnknownSubmissions',
  /** Polled submissions that are not final yet; checked again later. */
  STILL_PENDING: 'StillPending',
  /** Submissions past their horizon with no result (the alarm's metric; emitted every reconciler run). */
  OVERDUE: 'OverdueSubmissions',
  /** Reconciler runs ended early because the provider answered 429. */
  POLL_RATE_LIMITED: 'PollRateLimited',
  /** Polls that failed for another reason (network, 5xx). */
  POLL_ERRORS: 'PollErrors',
  /** Effects (events, user-code invocations) dispatched. */
  EFFECTS_DISPATCHED: 'EffectsDispatched',
  /** Effect dispatches that failed (the row is retried). */
  EFFECT_FAILURES: 'EffectFailures',
  /**
   * Provider resources found gone: a delivery's at the authoritative read (404/410), or a recorded
   * submission's (polled 404/410, or its deadline passed unread).
   */
  RESOURCE_UNAVAILABLE: 'ResourceUnavailable',
  /**
   * Submissions checked within the deadline warning margin and still unread (the near-deadline
   * alarm's metric; emitted every reconciler run, 0 included).
   */
  NEAR_DEADLINE: 'SubmissionsNearDeadline',
  /** Results of a polled batch's requests stored as rows of their own (each once). */
  BATCH_CHILDREN_RECORDED: 'BatchChildrenRecorded',
  /** Polled batches whose every result was recorded and whose summary was stored. */
  BATCHES_SETTLED: 'BatchesSettled',
  /**
   * Milliseconds from a delivery's receipt to the start of its first processing attempt (one value
   * per row, unit Milliseconds): the queue delay the alarm's p99 watches.
   */
  QUEUE_DELAY: 'QueueDelay',
  /**
   * Milliseconds from the provider's signed event timestamp to the start of the row's first
   * processing attempt, for providers that sign a time (unit Milliseconds): the provider's own
   * retries and the clock skew included.
   */
  QUEUE_DELAY_FROM_EVENT: 'QueueDelayFromEvent',
  /** Work messages whose inbox row is gone (expired before the message was processed, e.g. redriven late): nothing to process. */
  MESSAGE_WITHOUT_ROW: 'MessageWithoutRow',
  /**
   * Keys that are not a delivery row's (`<provider>#<event id>`) found where only delivery keys
   * belong: a work message, or an entry of the sweep's pending index. Refused, never processed.
   */
  REFUSED_KEYS: 'RefusedKeys',
  /** Processed deliveries written to the archive (docs/ARCHIVE.md). */
  ARCHIVED: 'Archived',
  /** Processed deliveries whose archive write failed: their rows are retried, like a failed effect. */
  ARCHIVE_FAILED: 'ArchiveFailed',
  /** Requests refused at the authenticity check that left a rejection record. */
  REJECTION_RECORDED: 'RejectionRecorded',
  /** Requests refused at the authenticity check that left none: sampled out, or over the minute's limit. */
  REJECTION_SUPPRESSED: 'RejectionSuppressed',
  /** Rejection records that could not be written (an error, or over their time budget): counted, never answered. */
  REJECTION_RECORD_FAILED: 'RejectionRecordFailed',
  /**
   * Work messages the processor answered as done without claiming their row, because the inbox is
   * paused or its breaker open (docs/FLOW-CONTROL.md): the row waits, no attempt spent.
   */
  DEFERRED: 'Deferred',
  /** Times a processor opened the circuit breaker (its failures over the threshold, or a failed probe). */
  BREAKER_OPENED: 'BreakerOpened',
  /** 1 while the circuit breaker is open or half-open, 0 while closed: one value per reconciler run (the breaker alarm's metric). */
  BREAKER_OPEN: 'BreakerOpen',
  /** 1 while an operator has the inbox paused, 0 otherwise: one value per reconciler run. */
  PAUSED: 'Paused',
} as const;
