/**
 * Every default and every limit, each written once: the construct falls back to `Defaults` when a
 * prop is not set and validates props against `Limits`; the handlers fall back to the same
 * `Defaults` when a variable is not set, and the local twin runs with them.
 */

/** Node.js major version of the Lambda runtime; the esbuild target is derived from it too. */
export const HANDLER_NODE_MAJOR = 24;

/**
 * The module of each handler's asset (`index.handler`): an ES module, so that its bundle can load
 * the code it needs only sometimes from chunks of its own (scripts/bundle-options.ts).
 */
export const HANDLER_FILE = 'index.mjs';

/** Lambda's synchronous invocation payload limit (6 MiB): the verifier's event can be no larger. */
const LAMBDA_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** Limits of the services, and the ranges the construct accepts for its props. */
export const Limits = {
  /** Lambda's synchronous invocation payload limit (6 MiB): the verifier's event can be no larger. */
  LAMBDA_SYNC_PAYLOAD_BYTES,
  /**
   * The largest `maxBodySize`: Lambda's payload limit less 64 KiB of room for the event's
   * headers and request context around the body.
   */
  MAX_BODY_BYTES: LAMBDA_SYNC_PAYLOAD_BYTES - 64 * 1024,
  /**
   * The largest `maxBodySize` behind a REST API ingress: every body reaches the verifier
   * base64-encoded (4 characters per 3 bytes), and the encoding must fit where a raw body may.
   */
  REST_API_MAX_BODY_BYTES: ((LAMBDA_SYNC_PAYLOAD_BYTES - 64 * 1024) / 4) * 3,
  /**
   * The largest `inlineBodyLimit`: DynamoDB's item limit is 400 KB, and the row's other
   * attributes (keys, meta, lease, outcome) need room beside the body.
   */
  INLINE_BODY_BYTES: 350 * 1024,
  /**
   * How deep a body may nest JSON arrays and objects. EventBridge's PutEvents processes JSON nested
   * at most 1,000 levels deep, and an effect holds its content a level or two below the event; Node's
   * JSON.stringify, which serializes every effect, overflows the stack past about 4,180 levels on
   * a default stack (JSON.parse does not recurse). 512 leaves both a wide margin, and a consumer's
   * own parser too (Jackson and Python stop near 1,000). Measured figures: docs/DESIGN.md.
   */
  MAX_JSON_DEPTH: 512,
  /** The longest generated inbox name (the `Inbox` metric dimension, log lines). */
  INBOX_NAME_LENGTH: 64,
  /** `maxReceiveCount`: SQS's redrive policy accepts 1 to 1,000. */
  MAX_RECEIVE_COUNT: { MIN: 1, MAX: 1000 },
  /** `processorBatchSize`: a standard queue's event source takes at most 10 without a batching window. */
  PROCESSOR_BATCH_SIZE: { MIN: 1, MAX: 10 },
  /** `processorBatchingWindow`, in seconds: the SQS event source's MaximumBatchingWindowInSeconds, 0 to 300. */
  PROCESSOR_BATCHING_WINDOW_SECONDS: { MIN: 0, MAX: 300 },
  /** `processorMaxConcurrency`: the SQS event source's maximum concurrency, 2 to 1,000. */
  PROCESSOR_MAX_CONCURRENCY: { MIN: 2, MAX: 1000 },
  /**
   * What `sweepAfter` must outlast beyond the longest timeout of the functions that start a row's
   * pending clock: the pending index's lag behind its table (normally under a second) and the
   * difference between two functions' clocks (docs/DESIGN.md#invariant-5).
   */
  SWEEP_AFTER_MARGIN_SECONDS: 10,
  /**
   * `pendingIndexShards`. Each shard is one partition of the index, which takes about 1,000
   * writes a second (an admission is one, a restarted clock two). Fewer than 16 would spread no
   * less: the sweep always reads the 16 every inbox wrote before the count was a setting. At most
   * 100, far beyond what an endpoint's quotas let in, keeps shard names two digits.
   */
  PENDING_INDEX_SHARDS: { MIN: 16, MAX: 100 },
  /** SQS keeps a message at most 14 days. */
  SQS_RETENTION_DAYS: 14,
  /** The longest period of a single-datapoint alarm (PutMetricAlarm: Period × EvaluationPeriods ≤ 7 days). */
  ALARM_PERIOD_DAYS: 7,
  /**
   * Custom ids of a batch per ledger item: 2,000 ids of at most 64 bytes are 128 KB, well under
   * DynamoDB's 400 KB item limit, so a batch of 100,000 requests is 50 items, never one.
   */
  BATCH_CHILD_IDS_PER_ITEM: 2_000,
  /** `rejectionRecordsPerMinute`: 0 turns rejection records off. */
  REJECTION_RECORDS_PER_MINUTE: { MIN: 0, MAX: 1000 },
  /** `rejectionRecordSamplePercent`: the share of refused requests considered for a record. */
  REJECTION_SAMPLE_PERCENT: { MIN: 1, MAX: 100 },
  /** `rejectionRecordRetention`, in days. */
  REJECTION_RETENTION_DAYS: { MIN: 1, MAX: 365 },
  /** A rejection record keeps at most this many header names... */
  REJECTION_HEADER_NAMES: 64,
  /** ...each cut to this many characters (API Gateway's request headers total at most 10 KiB). */
  REJECTION_HEADER_NAME_CHARS: 64,
  /** The longest `maxQueueDelay`: a delivery held longer is long past the oldest-message-age alarm's concern. */
  MAX_QUEUE_DELAY_HOURS: 12,
  /**
   * How long API Gateway waits for the verifier: a REST API's Lambda integration times out after
   * 29 seconds (its default), an HTTP API's after 30 at most. A verifier still running then has its
   * request answered 504 by API Gateway, so its timeout may be no longer.
   */
  REST_API_INTEGRATION_TIMEOUT_SECONDS: 29,
  HTTP_API_INTEGRATION_TIMEOUT_SECONDS: 30,
  /**
   * A table's (or index's) warm throughput may be no lower than what every new on-demand table
   * already serves: 12,000 read and 4,000 write units a second (docs/CAPACITY.md#quotas). No upper
   * bound here: the most is the account's table quota, which an account may have raised.
   */
  WARM_READ_UNITS_PER_SECOND_MIN: 12_000,
  WARM_WRITE_UNITS_PER_SECOND_MIN: 4_000,
} as const;

/** How often the reconciler runs by default. */
const SWEEP_EVERY_MINUTES = 5;

/** Values the construct uses by default and a local run reuses. */
export const Defaults = {
  MAX_RECEIVE_COUNT: 5,
  VERIFIER_MEMORY_MB: 512,
  VERIFIER_TIMEOUT_SECONDS: 10,
  PROCESSOR_MEMORY_MB: 512,
  PROCESSOR_TIMEOUT_SECONDS: 30,
  /**
   * One full vCPU (Lambda gives CPU in proportion to memory, one vCPU at 1,769 MB, and a Node.js
   * handler uses one): the sweep is bound by the CPU its calls cost, 30 to 50 µs per entry examined
   * and about 1 ms per stranded row enqueued and restarted, so it keeps up with about 10,000 deliveries a
   * second and re-enqueues 60,000 stranded rows within one run (docs/DESIGN.md#sweep-capacity).
   * An idle inbox's runs take a fraction of a second.
   */
  RECONCILER_MEMORY_MB: 1769,
  RECONCILER_TIMEOUT_SECONDS: 120,
  ROTATOR_MEMORY_MB: 256,
  ROTATOR_TIMEOUT_SECONDS: 30,
  /** SQS visibility timeout as a multiple of the processor timeout (AWS recommends at least 6). */
  VISIBILITY_TIMEOUT_FACTOR: 6,
  /** The most steady requests a second a route gets by default (less when the account's quota, shared evenly, leaves less). */
  ROUTE_THROTTLE_RATE_LIMIT: 1000,
  /** The largest burst a route gets by default (less when the account's quota, shared evenly, leaves less). */
  ROUTE_THROTTLE_BURST_LIMIT: 2000,
  /** API Gateway's default quota of steady requests a second across every API of an account in a region (docs/CAPACITY.md#quotas). */
  ACCOUNT_THROTTLE_RATE_LIMIT: 10_000,
  /** API Gateway's default burst quota across every API of an account in a region (docs/CAPACITY.md#quotas). */
  ACCOUNT_THROTTLE_BURST_LIMIT: 5_000,
  /**
   * The largest body accepted: a round 6,000,000 bytes, under `Limits.MAX_BODY_BYTES` (what
   * Lambda's synchronous payload limit leaves for a body).
   */
  MAX_BODY_BYTES: 6_000_000,
  /** The largest body accepted behind a REST API ingress: a round 4,500,000 bytes, under `Limits.REST_API_MAX_BODY_BYTES`. */
  REST_API_MAX_BODY_BYTES: 4_500_000,
  /**
   * Bodies above this go to S3: past about 8 KiB an object costs no more than the write units, the
   * consistent read and the month of storage of a body item, and keeps a delivery at three write
   * units of the table, so a new table takes 1,333 deliveries a second (docs/DESIGN.md#large-bodies).
   */
  INLINE_BODY_BYTES: 8 * 1024,
  /** How long rows are kept; a job's result is kept as long after its last decision unless `resultRetention` says longer. */
  RETENTION_DAYS: 30,
  /** The dead-letter queue keeps a message this long (SQS's longest). */
  DEAD_LETTER_RETENTION_DAYS: Limits.SQS_RETENTION_DAYS,
  /** Retention of the functions' and the API's log groups (a `RetentionDays` value). */
  LOG_RETENTION_DAYS: 30,
  SECRET_CACHE_SECONDS: 300,
  TIMESTAMP_TOLERANCE_SECONDS: 300,
  PREVIOUS_SECRET_GRACE_SECONDS: 24 * 3600,
  /** How often a signing secret with `rotation` is rotated. */
  ROTATION_DAYS: 30,
  SWEEP_EVERY_MINUTES,
  SWEEP_AFTER_SECONDS: 300,
  /**
   * The sweep reads the pending index in pages of this many entries per shard (keys only, about
   * 80 bytes each: far below a Query's 1 MB page)...
   */
  SWEEP_PAGE_ENTRIES: 1000,
  /**
   * ...this many pages of each shard a step (16,000 entries with 16 shards): a step enqueues the
   * stranded rows among them and moves the watermark, so its work is bounded and saved; a run
   * takes steps until it has caught up or its time is nearly out (docs/DESIGN.md#invariant-5).
   */
  SWEEP_PAGES_PER_STEP: 1,
  PROCESSOR_BATCH_SIZE: 10,
  /**
   * How long the event source gathers messages before it invokes the processor with fewer than a
   * batch: at 1 million deliveries a month (0.4 a second) a batch is then about 3 messages, not 1,
   * which takes two thirds of the processor's invocations and of the receives and deletes away
   * (docs/COSTS.md); a delivery waits at most this long more before it is processed. At 2
   * deliveries a second and more, batches fill before the window ends.
   */
  PROCESSOR_BATCHING_WINDOW_SECONDS: 5,
  /**
   * Half of a new account's Lambda concurrency (10): the processor drains the queue, and the
   * verifier, which providers wait on, keeps the rest of the pool (docs/DEPLOY.md#prerequisites).
   */
  PROCESSOR_MAX_CONCURRENCY: 5,
  /**
   * A response, payload or fetched resource larger than this travels in an effect as a reference
   * to the body bucket instead of inline, so that an effect stays far below EventBridge's 256 KB.
   */
  EFFECT_INLINE_BYTES: 64 * 1024,
  /** How long the processor waits for a provider's resource at the authoritative read. */
  AUTHORITATIVE_READ_TIMEOUT_SECONDS: 10,
  /** The largest resource the authoritative read accepts (the rest is an error, retried). */
  AUTHORITATIVE_READ_MAX_BYTES: 6_000_000,
  /** The most due submissions one reconciler run checks. */
  POLL_BATCH_SIZE: 50,
  /** Submissions one count of the awaiting index reads per shard at most (an operator's status, a settlement run): bounds the read, "≥" beyond. */
  LEDGER_COUNT_PER_SHARD: 1000,
  /** `webhook-inbox reconcile --until-settled`: seconds between two runs of the reconciler... */
  UNTIL_SETTLED_INTERVAL_SECONDS: 5,
  /** ...and how long it keeps going by default (`--timeout`). */
  UNTIL_SETTLED_TIMEOUT_SECONDS: 600,
  /** Timeout of one poll request to a provider. */
  POLL_TIMEOUT_MS: 10_000,
  /**
   * How long before a submission's deadline it is polled (or checked for its delivery) and, still
   * unread, counted near its deadline and alarmed on: two runs of the default reconcile schedule,
   * so that a run falls inside the margin however the schedule and the deadline line up.
   */
  DEADLINE_WARNING_SECONDS: 2 * SWEEP_EVERY_MINUTES * 60,
  /**
   * Timeout of the verifier's requests to SNS (a signing certificate, a subscription's
   * confirmation): well inside the 15 s SNS waits for an answer.
   */
  SNS_REQUEST_TIMEOUT_MS: 5_000,
  /** The largest signing certificate fetched (SNS's are about 2 KB of PEM). */
  SNS_CERTIFICATE_MAX_BYTES: 16 * 1024,
  /**
   * How long a certificate URL that could not be fetched is answered from memory (503) before it
   * is fetched again: shorter than the 20 s SNS's default delivery policy waits between retries,
   * so each retry of a real message gets a fresh fetch.
   */
  SNS_CERTIFICATE_FAILURE_CACHE_MS: 10_000,
  /**
   * The most certificate fetches one verifier environment starts in a minute: SNS serves a
   * handful of certificates, and an unauthenticated sender may name any number of well-formed
   * URLs that are not one of them.
   */
  SNS_CERTIFICATE_FETCHES_PER_MINUTE: 20,
  /** Results a batch API lists per page (the `limit` of one results request). */
  BATCH_RESULTS_PAGE_SIZE: 100,
  /** The most result pages of one batch a reconciler run reads, so one large batch never holds up the rest. */
  BATCH_RESULT_PAGES_PER_RUN: 20,
  /** Records a minute of requests refused at the authenticity check, per provider, across every verifier instance. */
  REJECTION_RECORDS_PER_MINUTE: 60,
  /** Percent of refused requests considered for a record (the rest are counted only). */
  REJECTION_SAMPLE_PERCENT: 100,
  /** How long a rejection record is kept (DynamoDB TTL). */
  REJECTION_RETENTION_DAYS: 7,
  /** How long a minute's counter item is kept after its minute (DynamoDB TTL). */
  REJECTION_COUNTER_TTL_SECONDS: 3600,
  /**
   * The most a rejection record may add to a refusal's answer: its DynamoDB calls are aborted
   * after this and counted as failed. Over the minute's limit a verifier makes no call at all.
   */
  REJECTION_RECORD_BUDGET_MS: 200,
} as const;

/** The default period of the inbox's metrics and the default thresholds of its alarms. */
export const MonitoringDefaults = {
  /** The period of every `metricX()` unless it says otherwise. */
  METRIC_PERIOD_MINUTES: 5,
  /** The period of the dead-letter queue's depth: a message there is looked at within a minute. */
  DEAD_LETTER_METRIC_PERIOD_MINUTES: 1,
  SIGNATURE_FAILURE_THRESHOLD: 10,
  QUARANTINED_THRESHOLD: 1,
  OVERDUE_SUBMISSION_THRESHOLD: 1,
  /** Submissions one reconciler run finds within the deadline warning margin and still unread. */
  NEAR_DEADLINE_THRESHOLD: 1,
  MAX_MESSAGE_AGE_MINUTES: 15,
  VERIFIER_SERVER_ERROR_THRESHOLD: 5,
  /** The p99 queue delay (receipt to the first processing attempt) over 5 minutes that raises the queue-delay alarm. */
  MAX_QUEUE_DELAY_SECONDS: 120,
  RECONCILER_ERROR_THRESHOLD: 1,
  /** The least silence of the reconciler before the not-running alarm (an hour)... */
  RECONCILER_SILENCE_SECONDS: 3600,
  /** ...or this many runs of a slower schedule, so that a single late or failed trigger does not page. */
  RECONCILER_SILENCE_RUNS: 3,
  /** How far the sweep's watermark may lag behind its cutoff at the end of a run (`SweepLag`) before the sweep-lag alarm. */
  MAX_SWEEP_LAG_MINUTES: 15,
} as const;
