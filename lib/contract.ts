/**
 * The contract between the constructs in `lib/` and the handlers in `lambda/`: environment
 * variable names, the table schema, metric names and shared defaults. Both sides import this
 * module (the handlers through esbuild), so no name is written twice. It must stay free of
 * aws-cdk-lib imports so that it bundles into the handlers at no cost.
 */

/** Node.js major version of the Lambda runtime; the esbuild target is derived from it too. */
export const HANDLER_NODE_MAJOR = 24;

/** Environment variables the construct sets and the handlers read. */
export const Env = {
  INBOX_NAME: 'WEBHOOK_INBOX_NAME',
  INBOX_TABLE: 'WEBHOOK_INBOX_TABLE',
  RESULTS_TABLE: 'WEBHOOK_INBOX_RESULTS_TABLE',
  WORK_QUEUE_URL: 'WEBHOOK_INBOX_QUEUE_URL',
  PROVIDERS: 'WEBHOOK_INBOX_PROVIDERS',
  MAX_BODY_BYTES: 'WEBHOOK_INBOX_MAX_BODY_BYTES',
  RETENTION_SECONDS: 'WEBHOOK_INBOX_RETENTION_SECONDS',
  SECRET_CACHE_SECONDS: 'WEBHOOK_INBOX_SECRET_CACHE_SECONDS',
  LEASE_SECONDS: 'WEBHOOK_INBOX_LEASE_SECONDS',
  MAX_RECEIVE_COUNT: 'WEBHOOK_INBOX_MAX_RECEIVE_COUNT',
  SWEEP_AFTER_SECONDS: 'WEBHOOK_INBOX_SWEEP_AFTER_SECONDS',
  SWEEP_BATCH_SIZE: 'WEBHOOK_INBOX_SWEEP_BATCH_SIZE',
  ROTATED_SECRETS: 'WEBHOOK_INBOX_ROTATED_SECRETS',
  BODY_BUCKET: 'WEBHOOK_INBOX_BODY_BUCKET',
  INLINE_BODY_BYTES: 'WEBHOOK_INBOX_INLINE_BODY_BYTES',
  /** Name or ARN of the EventBridge bus the processor puts effect events on; unset: no events. */
  EFFECT_BUS_NAME: 'WEBHOOK_INBOX_EFFECT_BUS',
  /** ARN (or name) of the user's processing function, invoked with each effect; unset: none. */
  EFFECT_FUNCTION_ARN: 'WEBHOOK_INBOX_EFFECT_FUNCTION',
  /** Reconciler: JSON array of `PollingRuntimeConfig`, one per provider polled for recorded submissions. */
  POLLING: 'WEBHOOK_INBOX_POLLING',
  /** Reconciler: the most due submissions one run checks. */
  POLL_BATCH_SIZE: 'WEBHOOK_INBOX_POLL_BATCH_SIZE',
  /**
   * Apps that record submissions (`SubmissionLedger.fromEnvironment`): JSON object of provider
   * name → horizon in seconds, so that a submission is first checked when its provider's
   * lifecycle says its delivery should have arrived.
   */
  SUBMISSION_HORIZONS: 'WEBHOOK_INBOX_SUBMISSION_HORIZONS',
} as const;

/** Attribute names of the inbox table. */
export const InboxAttr = {
  PK: 'pk',
  SK: 'sk',
  PROVIDER: 'provider',
  EVENT_ID: 'eventId',
  BODY: 'body',
  BODY_REF: 'bodyRef',
  /** Set to `deflate-raw` when an inline body is stored deflated. */
  BODY_ENCODING: 'bodyEncoding',
  DIGEST: 'digest',
  RECEIVED_AT: 'receivedAt',
  META: 'meta',
  STATUS: 'status',
  ATTEMPTS: 'attempts',
  LEASE_UNTIL: 'leaseUntil',
  LEASE_OWNER: 'leaseOwner',
  LAST_ERROR: 'lastError',
  PROCESSED_AT: 'processedAt',
  OUTCOME: 'outcome',
  EXPIRES_AT: 'expiresAt',
  PENDING_SHARD: 'pendingShard',
  PENDING_SINCE: 'pendingSince',
  COUNT: 'count',
  /** Quarantined copies: when the latest repeat arrived (epoch ms); `receivedAt` keeps the first. */
  LAST_SEEN_AT: 'lastSeenAt',
  /** Delivery rows (and submissions recorded by id with a key): `<provider>#<idempotency key>`; the job-ref index. */
  JOB_REF: 'jobRef',
  /** Delivery rows: true when the row was fetched by polling the provider rather than delivered. */
  RECOVERED: 'recovered',
  /** Submission items: the provider's task (job) id, when known. */
  TASK_ID: 'taskId',
  /** Submission items: the idempotency key the task was created with, when known. */
  IDEMPOTENCY_KEY: 'idempotencyKey',
  /** Submission items: when the task was submitted, epoch milliseconds. */
  SUBMITTED_AT: 'submittedAt',
  /** Submission items: a `SubmissionState`. */
  STATE: 'state',
  /** Submission items: how many times the reconciler checked it. */
  CHECKS: 'checks',
  /** Submission items: the reason code of the last check. */
  LAST_CHECK: 'lastCheck',
  /** Submission items: when it was last checked, epoch milliseconds. */
  CHECKED_AT: 'checkedAt',
  /** Submission items: when it left AWAITING, epoch milliseconds. */
  RESOLVED_AT: 'resolvedAt',
  /** Submission items, while AWAITING: the awaiting index's sharded partition key. */
  AWAIT_SHARD: 'awaitShard',
  /** Submission items, while AWAITING: when it is next due for a check, epoch milliseconds. */
  AWAIT_DUE_AT: 'awaitDueAt',
} as const;

/** Sort key values that tell the kinds of inbox items apart. */
export const InboxItemKind = {
  DELIVERY: 'delivery',
  QUARANTINE_PREFIX: 'quarantine#',
  /** A task recorded at submission (the ledger); its partition is `<provider>#<taskId>`, or `<provider>#key:<idempotencyKey>`. */
  SUBMISSION: 'submission',
} as const;

/** What follows `<provider>#` in the partition key of a submission known only by its idempotency key. */
export const SUBMISSION_KEY_ONLY_PREFIX = 'key:';

/**
 * What begins the partition key of every submission item (`ledger:<provider>#<taskId>`). No
 * delivery row's key can begin so (provider names hold no `:`), which lets the ledger grant
 * (`dynamodb:LeadingKeys`) allow writing submissions and nothing else. Items recorded before
 * this prefix existed (`<provider>#<taskId>`, sort key `submission`) are still reconciled.
 */
export const SUBMISSION_PARTITION_PREFIX = 'ledger:';

/** The life of a submission item: AWAITING until it leaves the awaiting index in one of the other states. */
export const SubmissionState = {
  /** No result known yet; in the awaiting index. */
  AWAITING: 'AWAITING',
  /** Its result reached the inbox as a delivery (a key-only item: a result row for its key exists). */
  DELIVERED: 'DELIVERED',
  /** Its final result was fetched by polling and fed into the inbox. */
  RECOVERED: 'RECOVERED',
  /** The provider does not know it (404), or it expired while still awaiting. */
  UNKNOWN: 'UNKNOWN',
  /** Key-only: its task id became known through a submission recorded by id with the same key, which carries on. */
  LINKED: 'LINKED',
} as const;

/** Attribute names of the results table (one item per logical job). */
export const ResultAttr = {
  PK: 'pk',
  PROVIDER: 'provider',
  JOB_KEY: 'jobKey',
  TASK_ID: 'taskId',
  EVENT_KEY: 'eventKey',
  STATUS: 'status',
  CREATED_AT: 'createdAt',
  WINNER_ORDER: 'winnerOrder',
  RESPONSE: 'response',
  RESPONSE_REF: 'responseRef',
  UPDATED_AT: 'updatedAt',
  VERSION: 'version',
} as const;

/**
 * The sparse index of rows that are not yet processed. Its partition key is sharded so that a
 * busy inbox is never capped at one partition's write rate (see DESIGN.md, Scale).
 */
export const PendingIndex = {
  NAME: 'pending',
  SHARD_COUNT: 16,
} as const;

/**
 * The sparse index of submissions still AWAITING a result, sorted by when each is next due.
 * Sharded like the pending index; KEYS_ONLY (the table keys plus `awaitShard`/`awaitDueAt`).
 */
export const AwaitingIndex = {
  NAME: 'awaiting',
  SHARD_COUNT: 16,
} as const;

/**
 * The sparse index of delivery rows (and of submissions recorded by id with a key) by job
 * reference (`jobRef`), so that a submission known only by its idempotency key finds its task.
 * KEYS_ONLY.
 */
export const JobRefIndex = {
  NAME: 'jobRef',
} as const;

/** The shape of both tables, shared by the construct and by anything that creates them locally. */
export const TableSchema = {
  inbox: {
    partitionKey: InboxAttr.PK,
    sortKey: InboxAttr.SK,
    ttlAttribute: InboxAttr.EXPIRES_AT,
    pendingIndex: {
      name: PendingIndex.NAME,
      partitionKey: InboxAttr.PENDING_SHARD,
      sortKey: InboxAttr.PENDING_SINCE,
    },
    /** Partition key S, sort key N, projection KEYS_ONLY. */
    awaitingIndex: {
      name: AwaitingIndex.NAME,
      partitionKey: InboxAttr.AWAIT_SHARD,
      sortKey: InboxAttr.AWAIT_DUE_AT,
    },
    /** Partition key S, no sort key, projection KEYS_ONLY. */
    jobRefIndex: {
      name: JobRefIndex.NAME,
      partitionKey: InboxAttr.JOB_REF,
    },
  },
  results: {
    partitionKey: ResultAttr.PK,
  },
} as const;

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
  /** Verified deliveries of a task that is not final yet (Answerline): acknowledged, never stored. */
  NOT_FINAL: 'NotFinal',
  BAD_SIGNATURE: 'BadSignature',
  /**
   * Requests refused at the authenticity check, whatever the reason (a signature that matches no
   * secret; a missing or garbled signature, timestamp or id header; a stale timestamp), counted
   * beside that reason's own metric: the signature-failure alarm's metric.
   */
  AUTHENTICATION_FAILED: 'AuthenticationFailed',
  STALE_TIMESTAMP: 'StaleTimestamp',
  MALFORMED: 'Malformed',
  TOO_LARGE: 'TooLarge',
  STORE_ERROR: 'StoreError',
  SECRET_UNAVAILABLE: 'SecretUnavailable',
  QUARANTINED: 'Quarantined',
  ENQUEUE_FAILED: 'EnqueueFailed',
  PROCESSED: 'Processed',
  PROCESSING_FAILED: 'ProcessingFailed',
  DEAD_LETTERED: 'DeadLettered',
  WINNER_CHANGED: 'WinnerChanged',
  SWEPT: 'Swept',
  MATCHED_CURRENT_SECRET: 'MatchedCurrentSecret',
  MATCHED_PENDING_SECRET: 'MatchedPendingSecret',
  MATCHED_PREVIOUS_SECRET: 'MatchedPreviousSecret',
  /** Bad-signature deliveries while a staged secret version (AWSPENDING, AWSPREVIOUS) held a value that does not decode as a key. */
  UNUSABLE_SECRET_VERSION: 'UnusableSecretVersion',
  /** Submissions whose final result was fetched by polling the provider and fed into the inbox. */
  RECOVERED: 'Recovered',
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
  /** Deliveries whose provider resource was missing or expired at the authoritative read. */
  RESOURCE_UNAVAILABLE: 'ResourceUnavailable',
  /** Work messages whose inbox row is gone (expired before the message was processed, e.g. redriven late): nothing to process. */
  MESSAGE_WITHOUT_ROW: 'MessageWithoutRow',
} as const;

/** Values the construct uses by default and a local run reuses. */
export const Defaults = {
  MAX_RECEIVE_COUNT: 5,
  PROCESSOR_TIMEOUT_SECONDS: 30,
  /** SQS visibility timeout as a multiple of the processor timeout (AWS recommends at least 6). */
  VISIBILITY_TIMEOUT_FACTOR: 6,
  /** Lambda's 6 MB synchronous payload limit caps what the verifier can ever receive. */
  MAX_BODY_BYTES: 6_000_000,
  /** Bodies above this go to S3; well under DynamoDB's 400 KB item limit. */
  INLINE_BODY_BYTES: 64 * 1024,
  RETENTION_DAYS: 30,
  /** The dead-letter queue keeps a message this long (SQS's longest). */
  DEAD_LETTER_RETENTION_DAYS: 14,
  SECRET_CACHE_SECONDS: 300,
  TIMESTAMP_TOLERANCE_SECONDS: 300,
  PREVIOUS_SECRET_GRACE_SECONDS: 24 * 3600,
  SWEEP_EVERY_MINUTES: 5,
  SWEEP_AFTER_SECONDS: 300,
  SWEEP_BATCH_SIZE: 100,
  PROCESSOR_BATCH_SIZE: 10,
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
  /** Timeout of one poll request to a provider. */
  POLL_TIMEOUT_MS: 10_000,
} as const;

/**
 * Answerline's task lifecycle (seed 000), from which its polling horizon derives: a task has
 * 4 h from creation to start (then it fails with QUEUE_WAIT_EXCEEDED), 5 min from its first
 * start to finish, and its delivery retries run for up to about 43 min after that.
 */
export const AnswerlineLifecycle = {
  QUEUE_WAIT_SECONDS: 4 * 3600,
  RUN_SECONDS: 5 * 60,
  DELIVERY_RETRY_SECONDS: 43 * 60,
  /** 14,400 + 300 + 2,580 = 17,280 s (4 h 48 min) after submission. */
  HORIZON_SECONDS: 4 * 3600 + 5 * 60 + 43 * 60,
} as const;

/** Polling defaults per adapter kind. */
export const PollingDefaults = {
  answerline: {
    taskUrlTemplate: 'https://api.answerline.dev/v1/async/task/{taskId}',
    horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
    /** A task can go from PROCESSING back to QUEUED; look again every 10 minutes. */
    recheckSeconds: 600,
  },
  echonova: {
    // Echonova documents no job lifecycle (seed 001), only its deliveries (3 attempts within
    // about 45 s), and names no job URL: the template has no default, and the horizon is an
    // assumption (an hour covers most jobs; set it for the account's longest).
    horizonSeconds: 3600,
    recheckSeconds: 300,
  },
  /** A provider without polling: its submissions are only checked for a delivery. */
  ledgerOnly: {
    horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
    recheckSeconds: 900,
  },
} as const;

/** The placeholders of a task in a polling URL template (Answerline says task, Echonova job). */
export const TASK_ID_PLACEHOLDERS = ['{taskId}', '{jobId}'] as const;

/** How the reconciler polls one provider (JSON array in `Env.POLLING`). */
export interface PollingRuntimeConfig {
  /** The provider's name, as in `ProviderRuntimeConfig.name`; its adapter picks the API client. */
  readonly provider: string;
  /** URL of one task: `{taskId}` or `{jobId}`, once, is replaced by the URL-encoded id. https, or http on loopback. */
  readonly taskUrlTemplate: string;
  /** ARN (or name) of the Secrets Manager secret whose AWSCURRENT value is the API key, text or JSON `{"apiKey": "…"}` (sent as `Authorization: Bearer`). */
  readonly apiKeySecretId: string;
  /** Seconds after submission before a submission without a delivery is polled (and counts as overdue). */
  readonly horizonSeconds: number;
  /** Seconds between two checks of a submission that is not final yet. */
  readonly recheckSeconds: number;
  /** Timeout of one poll request, in milliseconds. @default Defaults.POLL_TIMEOUT_MS */
  readonly timeoutMs?: number;
}

/**
 * What is wrong with the URL of a provider API the handlers send an API key to: it must be
 * https (plain HTTP would send the key in clear), or http on a loopback address (a local twin).
 */
function apiUrlProblems(field: string, url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [`${field} is not a URL`];
  }
  const loopback = parsed.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
  return parsed.protocol === 'https:' || loopback ? [] : [`${field} must be an https:// URL`];
}

/** What is wrong with a provider's polling configuration; empty when it is usable. Checked at synth and at cold start. */
export function pollingProblems(config: PollingRuntimeConfig): string[] {
  const problems: string[] = [];
  const template = config.taskUrlTemplate ?? '';
  const placeholders = TASK_ID_PLACEHOLDERS.reduce((count, placeholder) => count + template.split(placeholder).length - 1, 0);
  if (placeholders !== 1) problems.push('taskUrlTemplate must contain {taskId} (or {jobId}) exactly once');
  problems.push(...apiUrlProblems('taskUrlTemplate', TASK_ID_PLACEHOLDERS.reduce((text, placeholder) => text.replace(placeholder, 'id'), template)));
  if (!config.apiKeySecretId) problems.push('apiKeySecretId is required');
  for (const field of ['horizonSeconds', 'recheckSeconds'] as const) {
    if (!(typeof config[field] === 'number' && Number.isSafeInteger(config[field]) && config[field] > 0)) problems.push(`${field} must be a positive whole number of seconds`);
  }
  if (config.timeoutMs !== undefined && !(Number.isSafeInteger(config.timeoutMs) && config.timeoutMs > 0)) problems.push('timeoutMs must be a positive integer');
  return problems;
}

/** A provider's name: its path segment `/hooks/<name>` and its key namespace. Checked at synth, at cold start and by the ledger client. */
export const PROVIDER_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The adapters the runtime knows; a provider preset names one of these. */
export const AdapterKind = {
  ANSWERLINE: 'answerline',
  ECHONOVA: 'echonova',
  STANDARD_WEBHOOKS: 'standard-webhooks',
  STRIPE: 'stripe',
  GITHUB: 'github',
  HMAC: 'hmac',
} as const;

/**
 * How long after an event a provider may still deliver it (its retries, or a redelivery an
 * operator can ask for), by adapter kind, in seconds. An inbox row must outlive it: a retry that
 * finds its row expired is stored and processed a second time. Documented windows: Answerline,
 * a task's lifecycle horizon; Echonova, 3 attempts within about 45 s; OpenAI and other Standard
 * Webhooks senders, up to 72 h of retries; Stripe, up to three days of retries; GitHub, manual
 * redelivery of deliveries of the past three days. For a generic HMAC sender, three days.
 */
export const PROVIDER_REDELIVERY_SECONDS: Readonly<Record<string, number>> = {
  [AdapterKind.ANSWERLINE]: AnswerlineLifecycle.HORIZON_SECONDS,
  [AdapterKind.ECHONOVA]: 60,
  [AdapterKind.STANDARD_WEBHOOKS]: 72 * 3600,
  [AdapterKind.STRIPE]: 3 * 86_400,
  [AdapterKind.GITHUB]: 3 * 86_400,
  [AdapterKind.HMAC]: 3 * 86_400,
};


/** The generic HMAC adapter's scheme, as the construct passes it to the handlers. */
export interface HmacRuntimeSettings {
  /** Lower-case name of the header carrying the signature(s). */
  readonly signatureHeader: string;
  readonly algorithm: 'sha256' | 'sha512';
  readonly encoding: 'hex' | 'base64';
  /** Text before each signature, e.g. `sha256=`; empty when none. */
  readonly prefix: string;
  /** Template of the signed content: literal text with `{body}`, `{timestamp}`, `{id}`. */
  readonly signedContent: string;
  /** Lower-case header with Unix seconds; freshness is checked only when it is set. */
  readonly timestampHeader?: string;
  /** Lower-case header with the stable event id. */
  readonly idHeader?: string;
  /** Dotted path of the stable event id in the JSON body, when no idHeader is set. */
  readonly idJsonPath?: string;
  /**
   * The user accepted an idHeader that signedContent does not cover: deliveries are then
   * deduplicated by the digest of their body (the header is kept as row metadata only).
   */
  readonly acknowledgeUnsignedIdHeader?: boolean;
  /** How the stored secret turns into key bytes. */
  readonly secretEncoding: 'utf8' | 'base64';
}

/** `{body}`, `{timestamp}` and `{id}` in a signed-content template. */
export const SIGNED_CONTENT_PLACEHOLDER = /\{(body|timestamp|id)\}/g;

/** The placeholders of a signed-content template, in order. */
export function signedContentPlaceholders(template: string): string[] {
  return [...template.matchAll(SIGNED_CONTENT_PLACEHOLDER)].map((match) => match[1]);
}

/** What is wrong with a generic HMAC scheme; empty when it is usable. Checked at synth and at cold start. */
export function hmacSchemeProblems(scheme: HmacRuntimeSettings): string[] {
  const placeholders = signedContentPlaceholders(scheme.signedContent);
  const problems: string[] = [];
  if (!scheme.signatureHeader) problems.push('signatureHeader is required');
  if (placeholders.filter((name) => name === 'body').length !== 1) problems.push('signedContent must contain {body} exactly once');
  if (placeholders.includes('timestamp') && !scheme.timestampHeader) problems.push('signedContent uses {timestamp} but no timestampHeader is set');
  if (placeholders.includes('id') && !scheme.idHeader) problems.push('signedContent uses {id} but no idHeader is set');
  if (scheme.timestampHeader && !placeholders.includes('timestamp')) {
    problems.push('timestampHeader is set but signedContent does not use {timestamp}: an unsigned timestamp proves no freshness');
  }
  if (!scheme.idHeader === !scheme.idJsonPath) problems.push('exactly one of idHeader and idJsonPath is required');
  if (scheme.idHeader && !placeholders.includes('id') && !scheme.acknowledgeUnsignedIdHeader) {
    problems.push(
      'idHeader is not covered by signedContent (no {id}): anyone can replay a signed body under a fresh id; ' +
        'sign it, use idJsonPath, or set acknowledgeUnsignedIdHeader (deliveries are then deduplicated by the digest of their body)',
    );
  }
  return problems;
}

/** How one provider is served, as the construct passes it to the handlers (JSON in an env var). */
export interface ProviderRuntimeConfig {
  /** Path segment and key namespace: `/hooks/<name>`. */
  readonly name: string;
  /** Which runtime adapter handles this provider. */
  readonly adapter: string;
  /** ARN (or name) of the Secrets Manager secret holding the signing secret. */
  readonly secretId: string;
  /** How far in the past a signed timestamp may lie, in seconds. */
  readonly tolerancePastSeconds: number;
  /** How far in the future a signed timestamp may lie, in seconds. */
  readonly toleranceFutureSeconds: number;
  /** How long after a rotation the AWSPREVIOUS secret is still accepted, in seconds (default: Defaults). */
  readonly previousSecretGraceSeconds?: number;
  /** The scheme of the generic `hmac` adapter; absent for the presets. */
  readonly hmac?: HmacRuntimeSettings;
  /** Fetch the provider's resource before a delivery's result is exposed; absent: no read. */
  readonly authoritativeRead?: AuthoritativeReadSettings;
}

/**
 * The authoritative read (seed 004): before a delivery's result is exposed, the processor GETs
 * the provider's resource named by the delivery. 2xx: the resource travels in the effect.
 * 404/410: the resource is missing or expired; the row's outcome is `unavailable`, no effect is
 * sent and nothing is retried or generated again. Anything else is a failure, retried.
 */
export interface AuthoritativeReadSettings {
  /** `https://` URL with `{id}` exactly once, e.g. `https://api.openai.com/v1/responses/{id}`. */
  readonly urlTemplate: string;
  /** Dotted path of the resource id in the delivery's JSON body, e.g. `data.id`. */
  readonly idJsonPath: string;
  /** ARN (or name) of the Secrets Manager secret whose AWSCURRENT value is the Bearer API key (text, or JSON `{"apiKey": "…"}`). */
  readonly apiKeySecretId: string;
}

/** The placeholder of the resource id in an authoritative read's URL template. */
export const RESOURCE_ID_PLACEHOLDER = '{id}';

/** What is wrong with an authoritative read; empty when it is usable. Checked at synth and at cold start. */
export function authoritativeReadProblems(settings: AuthoritativeReadSettings): string[] {
  const problems: string[] = [];
  const template = settings.urlTemplate ?? '';
  if (template.split(RESOURCE_ID_PLACEHOLDER).length !== 2) problems.push('urlTemplate must contain {id} exactly once');
  problems.push(...apiUrlProblems('urlTemplate', template.replace(RESOURCE_ID_PLACEHOLDER, 'id')));
  if (!settings.idJsonPath) problems.push('idJsonPath is required');
  if (!settings.apiKeySecretId) problems.push('apiKeySecretId is required');
  return problems;
}

/**
 * The effects the processor sends (EventBridge events and invocations of the user's function):
 * their `source`, their detail types, and the row metadata that marks a recovered delivery.
 */
export const EffectEvent = {
  SOURCE: 'cdk-webhook-inbox',
  /** The winner of a logical job changed (job providers: Answerline, Echonova `job.*`). */
  JOB_RESULT_DECIDED: 'JobResultDecided',
  /** An event of a provider without job semantics was processed (Stripe, GitHub, Standard Webhooks, ...). */
  WEBHOOK_RECEIVED: 'WebhookReceived',
  /** Row metadata (`meta`) key set to `true` on rows fed from a polled result, not a delivery. */
  RECOVERED_META_KEY: 'webhook-inbox-recovered',
} as const;

/** What processing decided for a row (its `outcome` attribute). */
export const RowOutcome = {
  /** Its result became (or, on a retry, already was) the job's winner. */
  WINNER: 'winner',
  /** Another result of the job ranks higher. */
  SUPERSEDED: 'superseded',
  /** A job provider's delivery that reports no final result. */
  NO_FINAL_RESULT: 'no_final_result',
  /** A provider without job semantics: the event itself is the effect. */
  EVENT: 'event',
  /** The authoritative read found the resource missing or expired (404/410). */
  UNAVAILABLE: 'unavailable',
} as const;

/** A secret the rotation function rotates, as the construct passes it (JSON array in an env var). */
export interface RotatedSecretConfig {
  /** The secret's ARN, as Secrets Manager names it in rotation events. */
  readonly secretId: string;
  readonly providerName: string;
  /** `whsec`: `whsec_` + base64 of 32 random bytes; `text`: 64 random hex characters. */
  readonly format: 'whsec' | 'text';
  /** A function that registers the new secret with the provider (the setSecret step). */
  readonly registerFunctionArn?: string;
}

/**
 * Everything the ops CLI needs to act on one inbox. The construct publishes it as a stack output
 * (`OPS_CONFIG_OUTPUT_DESCRIPTION`, JSON value); the local twin writes the same document.
 */
export interface OpsConfig {
  readonly inboxName: string;
  readonly inboxTable: string;
  readonly resultsTable: string;
  readonly workQueueUrl: string;
  readonly deadLetterQueueUrl?: string;
  readonly reconcilerFunctionName: string;
  readonly bodyBucket?: string;
  readonly providers: readonly string[];
  /**
   * Adapter kind (`AdapterKind`) of each provider, by provider name; lets `inspect` read a
   * delivery's job the way the processor does. Absent: a provider named after its preset is assumed to be one.
   */
  readonly adapters?: Readonly<Record<string, string>>;
}

/** The description of the stack output that carries an inbox's OpsConfig (one per inbox). */
export const OPS_CONFIG_OUTPUT_DESCRIPTION = 'cdk-webhook-inbox ops configuration';
