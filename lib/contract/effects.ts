/**
 * The effects the processor sends once a row is decided, as consumers see them: the events'
 * source and detail types, their detail (`EffectDetail`, exported by the package: the schema a
 * rule or the user's processing function receives), and the outcome recorded on the row.
 */

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
  /**
   * A recorded submission's provider resource is gone unread (polled 404/410, or its deadline
   * passed): an operator decides what to do (`ResourceUnavailableDetail`); nothing is regenerated.
   */
  RESOURCE_UNAVAILABLE: 'ResourceUnavailable',
  /** One request (child) of a polled batch reached its terminal state: succeeded, errored, canceled or expired. */
  BATCH_CHILD_SETTLED: 'BatchChildSettled',
  /** A polled batch ended and every result of it was recorded: its summary, once. */
  BATCH_SETTLED: 'BatchSettled',
  /** The `schemaVersion` of the `EffectDetail` the processor sends. */
  SCHEMA_VERSION: 1,
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

/**
 * The detail of an effect event (`source` `cdk-webhook-inbox`, detail type `JobResultDecided` or
 * `WebhookReceived`), and of the invocation of the user's processing function. Content (a job's
 * response, an event's payload, a fetched resource) travels inline when small, and otherwise as a
 * key in the inbox's body bucket (`bodyBucket`): an event never exceeds EventBridge's 256 KB entry
 * limit.
 *
 * Exported by the package (jsii): no literal or union types, so `schemaVersion` is a number and
 * `status` a string; the parsed JSON values (`response`, `payload`, `resource`) are `unknown`
 * (`any` in the other languages): read them as untrusted JSON.
 */
export interface EffectDetail {
  /** The version of this schema: `1` (`EffectEvent.SCHEMA_VERSION`). */
  readonly schemaVersion: number;
  /** The inbox's name (`inboxName`). */
  readonly inbox: string;
  /** The provider's name. */
  readonly provider: string;
  /** Deterministic per intent: the same on every retry. Consumers deduplicate by it. */
  readonly effectKey: string;
  /** The inbox key (`provider#eventId`) of the row that caused the effect. */
  readonly eventKey: string;
  /** The provider's stable event id of that row. */
  readonly eventId: string;
  /** When the inbox admitted the row, ISO-8601. */
  readonly receivedAt: string;
  /** True when the row was fed from a result polled from the provider, not from a delivery. */
  readonly recovered: boolean;
  /** The delivery metadata kept on the row (sanitized headers: never a signature). */
  readonly meta: { readonly [key: string]: string };

  // JobResultDecided: the job's new winner.
  /**
   * The logical job (`JobResultDecided`).
   * @default - absent for `WebhookReceived`
   */
  readonly jobKey?: string;
  /**
   * How many times the job's winner changed, this decision included (1 for the first winner).
   * Events of one job can reach a consumer in any order: keep the one with the greatest.
   * @default - absent for `WebhookReceived`
   */
  readonly resultVersion?: number;
  /**
   * The decision rule's order of this result (`<rank>|<createdAt>|<taskId>`): a later winner's is
   * greater as text. The same order as `resultVersion`, comparable without the results table.
   * @default - absent for `WebhookReceived`
   */
  readonly winnerOrder?: string;
  /**
   * The provider's id of the winning task.
   * @default - absent for `WebhookReceived`
   */
  readonly taskId?: string;
  /**
   * The winning task's final status: `COMPLETED` or `FAILED`.
   * @default - absent for `WebhookReceived`
   */
  readonly status?: string;
  /**
   * When the winning task was created, ISO-8601 (UTC, nine fraction digits).
   * @default - absent for `WebhookReceived`
   */
  readonly createdAt?: string;
  /**
   * The winning result, parsed from its JSON text (a FAILED task's error included); any JSON value.
   * @default - absent for `WebhookReceived`, or when it travels as `responseRef`
   */
  readonly response?: unknown;
  /**
   * The body-bucket key of the winning result, when it was too large to travel inline.
   * @default - absent when `response` is inline
   */
  readonly responseRef?: string;

  // WebhookReceived: the event itself.
  /**
   * The verified body, parsed when it is JSON, else its text; any JSON value.
   * @default - absent for `JobResultDecided`, or when it travels as `payloadRef`
   */
  readonly payload?: unknown;
  /**
   * The body-bucket key of the verified body, when it was too large to travel inline.
   * @default - absent when `payload` is inline
   */
  readonly payloadRef?: string;

  // Either, when the provider's resource was fetched by the authoritative read.
  /**
   * The provider's resource as fetched, parsed when it is JSON, else its text; any JSON value.
   * @default - absent without an authoritative read, or when it travels as `resourceRef`
   */
  readonly resource?: unknown;
  /**
   * The body-bucket key of the fetched resource, when it was too large to travel inline.
   * @default - absent when `resource` is inline
   */
  readonly resourceRef?: string;
  /**
   * True when an earlier attempt decided this job's winner with the resource in hand, and the
   * read on the retry found it gone (404/410): the decision stands, its effect goes without it.
   * @default - absent
   */
  readonly resourceUnavailable?: boolean;

  // BatchChildSettled and BatchSettled: a polled batch.
  /**
   * The provider's batch id.
   * @default - absent except for `BatchChildSettled` and `BatchSettled`
   */
  readonly batchId?: string;
  /**
   * The request's `custom_id` in the batch (`BatchChildSettled`).
   * @default - absent except for `BatchChildSettled`
   */
  readonly customId?: string;
  /**
   * The request's terminal state: `succeeded`, `errored`, `canceled` or `expired` (`BatchChildSettled`).
   * @default - absent except for `BatchChildSettled`
   */
  readonly childState?: string;
  /**
   * The batch as a whole (`BatchSettled`): `succeeded` (every request), `failed` (none) or
   * `partial` (some): a partially successful batch is neither.
   * @default - absent except for `BatchSettled`
   */
  readonly batchOutcome?: string;

  /**
   * The bucket the `*Ref` keys name.
   * @default - absent when no `*Ref` is set
   */
  readonly bodyBucket?: string;
}

/** Why a submission was settled unavailable (`ResourceUnavailableDetail.reason`). */
export const UnavailableReason = {
  /** The provider answered 404 or 410 for its task (or batch): unknown, or no longer kept. */
  NOT_FOUND: 'not_found',
  /** An ended batch whose results the provider answered 404 or 410 for before every page was read. */
  RESULTS_NOT_FOUND: 'results_not_found',
  /** Its deadline passed and no result was read: a delivery never came and polling found none final. */
  DEADLINE_PASSED: 'deadline_passed',
} as const;

/**
 * The detail of a `ResourceUnavailable` event (source `cdk-webhook-inbox`): a recorded
 * submission whose provider resource is gone without its result having been read. Sent once per
 * submission (at least once: deduplicate by `effectKey`), on the inbox's bus, before the
 * submission is settled `UNAVAILABLE`. The inbox never resubmits: what to do (ask the user,
 * resubmit, give up) is the consumer's decision (`onResourceUnavailable`).
 */
export interface ResourceUnavailableDetail {
  /** The version of this schema: `1` (`EffectEvent.SCHEMA_VERSION`). */
  readonly schemaVersion: number;
  /** The inbox's name (`inboxName`). */
  readonly inbox: string;
  /** The provider's name. */
  readonly provider: string;
  /** Deterministic per submission: the same on every retry. Consumers deduplicate by it. */
  readonly effectKey: string;
  /** The submission's key in the inbox table (`ledger:<provider>#<taskId>`). */
  readonly submissionKey: string;
  /** `not_found` (the provider answered 404/410), `results_not_found` (a batch's results did) or `deadline_passed` (`UnavailableReason`). */
  readonly reason: string;
  /** When the task was submitted, ISO-8601. */
  readonly submittedAt: string;
  /** When the reconciler found it gone, ISO-8601. */
  readonly detectedAt: string;
  /**
   * The provider's task id.
   * @default - absent for a submission recorded only by its idempotency key
   */
  readonly taskId?: string;
  /**
   * The idempotency key it was created with.
   * @default - absent when it was recorded without one
   */
  readonly idempotencyKey?: string;
  /**
   * Its deadline, ISO-8601 (a batch's: when its results stop being readable).
   * @default - absent for a submission without a deadline
   */
  readonly deadline?: string;
  /**
   * A batch: how many requests (children) were recorded with it.
   * @default - absent for a submission that is not a batch
   */
  readonly childCount?: number;
  /**
   * A batch: how many of its children's results were read and stored (each with its
   * `BatchChildSettled` event) before the rest became unreadable; no `BatchSettled` follows.
   * @default - absent for a submission that is not a batch
   */
  readonly childrenRead?: number;
}
