/**
 * The schema of the inbox and results tables: attribute names, item kinds, key prefixes, the
 * states an item goes through, and the indexes. The construct creates the tables from
 * `TableSchema`; the handlers, the ops CLI, the ledger client and the local twin read and write
 * items with these names.
 */

/** Attribute names of the inbox table. */
export const InboxAttr = {
  PK: 'pk',
  SK: 'sk',
  /** Quarantined copies and other items; delivery rows written before the compact row format (a row's provider is its key's). */
  PROVIDER: 'provider',
  /** Delivery rows written before the compact row format only: the event id is the key's, after `<provider>#`. */
  EVENT_ID: 'eventId',
  /** An inline body's exact bytes. */
  BODY: 'body',
  /** An inline body deflated (raw deflate), when that is smaller; instead of `body`. */
  BODY_DEFLATED: 'deflated',
  BODY_REF: 'bodyRef',
  /** Set to `deflate-raw` when `body` holds the bytes deflated: items written before `deflated` existed. */
  BODY_ENCODING: 'bodyEncoding',
  /** SHA-256 of the exact bytes received: 32 bytes (B) on delivery rows, 64 hex digits (S) on other items and older rows. */
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
  /** Delivery rows: when the provider signed the delivery (epoch ms), for a scheme that signs a time; absent on older rows. */
  EVENT_AT: 'eventAt',
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
  /**
   * Submission items: when the provider's resource is gone (an OpenAI background response kept
   * ~10 min, a batch expiring after 24 h), epoch milliseconds; absent when it has no deadline
   * (items recorded before deadlines existed have none).
   */
  DEADLINE_AT: 'deadlineAt',
  /** Submission items, while AWAITING: the awaiting index's sharded partition key. */
  AWAIT_SHARD: 'awaitShard',
  /** Submission items, while AWAITING: when it is next due for a check, epoch milliseconds. */
  AWAIT_DUE_AT: 'awaitDueAt',
  /** Submission items: `batch` for a batch (its task id is the batch id); absent for one task. */
  SUBMISSION_KIND: 'submissionKind',
  /** Batch submissions: how many requests (children) the app recorded. */
  CHILD_COUNT: 'childCount',
  /** Batch submissions: how many child-id items (`children#00000`, …) hold their custom ids. */
  CHILD_CHUNKS: 'childChunks',
  /** Child-id items of a batch: a string set of custom ids. */
  CHILD_IDS: 'childIds',
  /** Batch submissions: the provider's `processing_status` at the last poll. */
  BATCH_STATUS: 'batchStatus',
  /** Batch submissions: when the provider expires the batch (its `expires_at`), epoch milliseconds. */
  BATCH_EXPIRES_AT: 'batchExpiresAt',
  /** Batch submissions: when the provider ended it (its `ended_at`), epoch milliseconds. */
  BATCH_ENDED_AT: 'batchEndedAt',
  /** Batch submissions: the results page to read next (the provider's cursor; empty for the first page). */
  RESULTS_CURSOR: 'resultsCursor',
  /** Batch submissions: true once the last results page was read. */
  RESULTS_DONE: 'resultsDone',
  /** Batch submissions: results read so far of recorded children. */
  RESULTS_READ: 'resultsRead',
  /** Batch submissions: results read that name no recorded child (never fed). */
  RESULTS_UNEXPECTED: 'resultsUnexpected',
  /** Rejection records: the reason code the request was refused with. */
  REASON: 'reason',
  /** Rejection records: the HTTP status the request was answered with. */
  HTTP_STATUS: 'httpStatus',
  /** Rejection records: `hmac-sha256:<hex>` of the source address, keyed with the inbox's source-hash key. */
  SOURCE_HASH: 'sourceHash',
  /** Rejection records: the request's header names (lower case, sorted, bounded), never their values. */
  HEADER_NAMES: 'headerNames',
  /** Rejection records: true when the request had more header names than a record keeps. */
  HEADER_NAMES_TRUNCATED: 'headerNamesTruncated',
  /** Rejection records: the body's length in bytes (the body itself is never kept). */
  BODY_BYTES: 'bodyBytes',
  /** The source-hash key item: the random HMAC key (binary). */
  HASH_KEY: 'hashKey',
  /** The sweep's watermark item: every `pending` index entry whose `pendingSince` is below this (epoch ms) has been examined. */
  SWEPT_BEFORE: 'sweptBefore',
  /**
   * The sweep's watermark item: how many times an operator's revive fenced it (absent before the
   * first). A sweep moves the watermark only if this is still what it read before its index read.
   */
  SWEEP_REVISION: 'revision',
  /**
   * The sweep's watermark item: the most pending-index shards any reconciler was configured with
   * (absent: `PendingIndex.SHARD_COUNT`, all an inbox had before the count was a setting). The
   * sweep reads at least this many, so that entries written under a larger count stay found.
   */
  SWEEP_SHARDS: 'shards',
} as const;

/** Batch submissions: results read so far per child state (`childSucceeded`, `childErrored`, …). */
export function childStateAttr(state: string): string {
  return `child${state.charAt(0).toUpperCase()}${state.slice(1)}`;
}

/** The value of `InboxAttr.SUBMISSION_KIND` of a batch submission. */
export const SUBMISSION_KIND_BATCH = 'batch';

/** Sort key values that tell the kinds of inbox items apart. */
export const InboxItemKind = {
  DELIVERY: 'delivery',
  QUARANTINE_PREFIX: 'quarantine#',
  /** A task recorded at submission (the ledger); its partition is `<provider>#<taskId>`, or `<provider>#key:<idempotencyKey>`. */
  SUBMISSION: 'submission',
  /** The custom ids of a batch submission, a chunk per item beside it: `children#00000`, `children#00001`, … */
  BATCH_CHILDREN_PREFIX: 'children#',
} as const;

/** What follows `<provider>#` in the partition key of a submission known only by its idempotency key. */
export const SUBMISSION_KEY_ONLY_PREFIX = 'key:';

/**
 * What begins the partition key of every submission item (`ledger:<provider>#<taskId>`). No
 * delivery row's key can begin so (provider names hold no `:`), which lets the ledger grant
 * (`dynamodb:LeadingKeys`, with `SUBMISSION_RECORD_ATTRIBUTES`) allow writing submissions and
 * nothing else. Items recorded before this prefix existed (`<provider>#<taskId>`, sort key
 * `submission`) are still reconciled.
 */
export const SUBMISSION_PARTITION_PREFIX = 'ledger:';

/**
 * Every attribute a recorded submission item (`sk` `submission`) or a batch's child-id item
 * (`children#…`) holds: all that `grantRecordSubmission` lets a principal write
 * (`dynamodb:Attributes`). None is one a delivery row is read by (`status`, `pendingShard`,
 * `pendingSince`, a body, `receivedAt`, `digest`), so nothing a recording principal writes enters
 * the sweep's pending index or can be claimed by the processor, whatever its key.
 */
export const SUBMISSION_RECORD_ATTRIBUTES: readonly string[] = [
  InboxAttr.PK,
  InboxAttr.SK,
  InboxAttr.PROVIDER,
  InboxAttr.TASK_ID,
  InboxAttr.IDEMPOTENCY_KEY,
  InboxAttr.JOB_REF,
  InboxAttr.SUBMITTED_AT,
  InboxAttr.STATE,
  InboxAttr.CHECKS,
  InboxAttr.EXPIRES_AT,
  InboxAttr.DEADLINE_AT,
  InboxAttr.AWAIT_SHARD,
  InboxAttr.AWAIT_DUE_AT,
  InboxAttr.SUBMISSION_KIND,
  InboxAttr.CHILD_COUNT,
  InboxAttr.CHILD_CHUNKS,
  InboxAttr.CHILD_IDS,
];

/**
 * Where the records of requests refused at the authenticity check live (docs/REJECTIONS.md): one
 * partition per provider per UTC day, `rejected:<provider>#<YYYY-MM-DD>`, holding the day's
 * records (`record#<ISO time>#<request id>`) and its per-minute counters (`count#<YYYY-MM-DDTHH:MM>`).
 * No delivery row's key can begin so (provider names hold no `:`).
 */
export const RejectionKey = {
  PARTITION_PREFIX: 'rejected:',
  RECORD_PREFIX: 'record#',
  COUNTER_PREFIX: 'count#',
  /** The partition of the inbox's source-hash key (`rejected:` alone: no provider name is empty). */
  HASH_KEY_SORT: 'source-hash-key',
} as const;

/**
 * The sweep's watermark: one item (`pk` `sweep:pending`, `sk` `watermark`) holding
 * `sweptBefore`, the most shards a reconciler was configured with (`shards`, once more than
 * `PendingIndex.SHARD_COUNT`) and, once an operator revived a row, `revision`. No delivery row's key can be it (provider names hold no `:`), nor a quarantined
 * copy's (`sk` `quarantine#…`) or a submission's (`ledger:…`). It has no TTL: it only moves forward.
 */
export const SweepWatermark = {
  PARTITION: 'sweep:pending',
  SORT: 'watermark',
} as const;

/** The life of a submission item: AWAITING until it leaves the awaiting index in one of the other states. */
export const SubmissionState = {
  /** No result known yet; in the awaiting index. */
  AWAITING: 'AWAITING',
  /** Its result reached the inbox as a delivery (a key-only item: a result row for its key exists). */
  DELIVERED: 'DELIVERED',
  /** Its final result was fetched by polling and fed into the inbox. */
  RECOVERED: 'RECOVERED',
  /** It expired (its TTL) while still awaiting. Items settled before UNAVAILABLE existed hold it for a 404 too. */
  UNKNOWN: 'UNKNOWN',
  /** Key-only: its task id became known through a submission recorded by id with the same key, which carries on. */
  LINKED: 'LINKED',
  /**
   * Its provider resource is gone unread: the provider answered 404/410, or its deadline passed
   * without a result. A `ResourceUnavailable` event asks an operator to decide; nothing is regenerated.
   */
  UNAVAILABLE: 'UNAVAILABLE',
} as const;

/**
 * The life of a delivery row (`InboxAttr.STATUS`): RECEIVED when admitted, PROCESSING while a
 * processor holds its lease, then PROCESSED, or DEAD when its last allowed attempt failed.
 */
export const DeliveryStatus = {
  /** Admitted and durable; not yet processed (in the pending index). */
  RECEIVED: 'RECEIVED',
  /** Claimed by a processor under a lease (`leaseUntil`, `leaseOwner`). */
  PROCESSING: 'PROCESSING',
  /** Decided: its `outcome` is set and its effect, if any, was dispatched. */
  PROCESSED: 'PROCESSED',
  /** Its attempts are exhausted (`maxReceiveCount`); it stays for an operator to redrive. */
  DEAD: 'DEAD',
} as const;

/** One of the `DeliveryStatus` values. */
export type DeliveryStatus = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];

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
  /** The winner's result: text (S), or its UTF-8 bytes deflated (B) when `responseEncoding` says so. */
  RESPONSE: 'response',
  /** Set to `deflate-raw` when `response` holds the result's UTF-8 bytes deflated; absent when it is the text itself. */
  RESPONSE_ENCODING: 'responseEncoding',
  /** The body store's key of a result too large for the item (instead of `response`). */
  RESPONSE_REF: 'responseRef',
  /** Epoch ms of the last decision (the winner's offer). */
  UPDATED_AT: 'updatedAt',
  VERSION: 'version',
  /**
   * Epoch seconds: `resultRetention` after the last decision (DynamoDB's TTL on the construct's
   * table). Absent on items written before results expired: those read as expired
   * `resultRetention` after `updatedAt`.
   */
  EXPIRES_AT: 'expiresAt',
} as const;

/**
 * The sparse index of delivery rows by when each became pending: a row enters it when admitted
 * and keeps its entry when processed (until its TTL deletes it, which costs nothing), leaving it
 * only when it becomes DEAD. Its partition key is sharded so that a busy inbox is never capped at
 * one partition's write rate (see docs/DESIGN.md#scale): `pendingIndexShards` shards, by default
 * `SHARD_COUNT`, which is also the count every inbox wrote before it was a setting.
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

/** A key attribute of a table or index: its name and DynamoDB type (`S` string, `N` number). */
export interface KeyAttributeSchema {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/** A global secondary index the runtime queries. */
export interface IndexSchema {
  readonly name: string;
  readonly partitionKey: KeyAttributeSchema;
  /** Absent: the index has none, and must have none (an item without a sort key value is not indexed). */
  readonly sortKey?: KeyAttributeSchema;
  /** What the construct creates; the runtime reads only the keys from an index, which every projection holds. */
  readonly projection: 'KEYS_ONLY';
}

/** The keys, TTL attribute and indexes of a table. */
export interface TableShape {
  readonly partitionKey: KeyAttributeSchema;
  /** Absent: the table has none, and must have none (items are read and written by the partition key alone). */
  readonly sortKey?: KeyAttributeSchema;
  /** The attribute DynamoDB's TTL deletes items by (epoch seconds); absent: items are not expired. */
  readonly ttlAttribute?: string;
  readonly indexes: readonly IndexSchema[];
}

/** Partition key S, sort key N: sparse and sharded (`PendingIndex`). */
const pendingIndex = {
  name: PendingIndex.NAME,
  partitionKey: { name: InboxAttr.PENDING_SHARD, type: 'S' },
  sortKey: { name: InboxAttr.PENDING_SINCE, type: 'N' },
  projection: 'KEYS_ONLY',
} as const satisfies IndexSchema;

/** Partition key S, sort key N: sparse and sharded (`AwaitingIndex`). */
const awaitingIndex = {
  name: AwaitingIndex.NAME,
  partitionKey: { name: InboxAttr.AWAIT_SHARD, type: 'S' },
  sortKey: { name: InboxAttr.AWAIT_DUE_AT, type: 'N' },
  projection: 'KEYS_ONLY',
} as const satisfies IndexSchema;

/** Partition key S, no sort key (`JobRefIndex`). */
const jobRefIndex = {
  name: JobRefIndex.NAME,
  partitionKey: { name: InboxAttr.JOB_REF, type: 'S' },
  projection: 'KEYS_ONLY',
} as const satisfies IndexSchema;

/**
 * The shape of both tables: the construct creates its tables from it and checks a table brought
 * to it against it (docs/BRING-YOUR-OWN.md); the local provisioning creates them from it too.
 */
export const TableSchema = {
  inbox: {
    partitionKey: { name: InboxAttr.PK, type: 'S' },
    sortKey: { name: InboxAttr.SK, type: 'S' },
    ttlAttribute: InboxAttr.EXPIRES_AT,
    pendingIndex,
    awaitingIndex,
    jobRefIndex,
    indexes: [pendingIndex, awaitingIndex, jobRefIndex],
  },
  results: {
    partitionKey: { name: ResultAttr.PK, type: 'S' },
    indexes: [],
  },
} as const satisfies { readonly inbox: TableShape & Record<'pendingIndex' | 'awaitingIndex' | 'jobRefIndex', IndexSchema>; readonly results: TableShape };

/**
 * The key prefixes of the body bucket, where what is too large for a table item goes: each
 * function is granted only the prefixes it writes (`<prefix>/<provider>/<digest>`).
 */
export const BodyPrefix = {
  /** Verified request bodies. */
  BODIES: 'bodies',
  /** Job results (the results table's overflow). */
  RESPONSES: 'responses',
  /** Resources fetched by the authoritative read. */
  RESOURCES: 'resources',
} as const;
