/** The alarms a WebhookInbox creates; name one in `disabled` to leave it out. */
export enum InboxAlarm {
  /** A work message exhausted its retries: the dead-letter queue holds it, or the processor dead-lettered its row. */
  DEAD_DELIVERIES = 'DEAD_DELIVERIES',
  /** A burst of deliveries whose signature matches no valid secret. */
  SIGNATURE_FAILURES = 'SIGNATURE_FAILURES',
  /** A repeat of a known event id arrived with a different body and was quarantined. */
  QUARANTINED_DUPLICATES = 'QUARANTINED_DUPLICATES',
  /** A recorded submission is past its provider's lifecycle horizon without a result. */
  OVERDUE_SUBMISSIONS = 'OVERDUE_SUBMISSIONS',
  /** A recorded submission's deadline is near (within `deadlineWarning`) and its result is still unread: act before the resource is gone. */
  SUBMISSIONS_NEAR_DEADLINE = 'SUBMISSIONS_NEAR_DEADLINE',
  /** The oldest message in the work queue has waited too long: processing is stalled or behind. */
  OLDEST_MESSAGE_AGE = 'OLDEST_MESSAGE_AGE',
  /** The endpoint answered 5xx: deliveries were not acknowledged and providers must retry. */
  VERIFIER_SERVER_ERRORS = 'VERIFIER_SERVER_ERRORS',
  /** The reconciler failed: stranded rows are not swept and submissions are not polled. */
  RECONCILER_ERRORS = 'RECONCILER_ERRORS',
  /** The reconciler was not invoked at all: its schedule is disabled or deleted, or it is throttled. */
  RECONCILER_NOT_RUNNING = 'RECONCILER_NOT_RUNNING',
  /** Deliveries wait too long between their receipt and their first processing attempt (p99). */
  QUEUE_DELAY = 'QUEUE_DELAY',
  /** Secrets Manager failed to rotate a signing secret of the inbox, or to test its rotation at a deploy (only with a provider's `rotation`). */
  ROTATION_FAILURES = 'ROTATION_FAILURES',
  /** The sweep does not keep up: its watermark lags its cutoff, so stranded rows are found late. */
  SWEEP_LAG = 'SWEEP_LAG',
  /** The circuit breaker is open (or probing): processing failed downstream at a high rate, and rows wait. */
  CIRCUIT_BREAKER_OPEN = 'CIRCUIT_BREAKER_OPEN',
  /** A provider recovered from its own event log (GitHub, Stripe) has had no complete run for longer than its `polling.stalledAfter`: polls fail, are rate limited, or the hook is gone. */
  RECOVERY_STALLED = 'RECOVERY_STALLED',
}
