/**
 * What a fault-injection run hands its auditor: the providers' own records (the reference), and
 * what the inbox, its logs, the fault proxies and the IAM gateway show at the end.
 */
import type { ProviderLogRecord } from '../provider-logs';
import type { AnswerlineTask } from '../../providers/answerline/simulator';
import type { EchonovaJob, EchonovaWebhook } from '../../providers/echonova/simulator';
import type { DeliveryRecord } from '../../providers/sender';
import type { StandardWebhooksEvent } from '../../providers/standard-webhooks/simulator';
import type { AdversaryKind, Plan, Provider } from '../plan';

/** The failure modes a run injects; each must occur at least once. */
export const FAULT_KINDS = [
  'crash_after_write',
  'concurrent_duplicate',
  'poison_delivery',
  'store_outage',
  'queue_outage',
  'reverse_order',
  'test_delivery',
  'altered_duplicate',
  'stale_timestamp',
  'future_timestamp',
  'forged_signature',
  'replay',
  'route_flood',
  'worker_crash',
  'long_outage',
  'downstream_outage',
  'endpoint_unavailable_answers',
  'webhook_disabled',
  'missing_resource',
  'rate_limited_poll',
  'batch_canceled',
  'batch_expired',
  'batch_api_error',
  'deadline_unread',
  'dynamodb_throttled',
  'sqs_throttled',
  'eventbridge_throttled',
  'unprocessed_items',
  'unprocessed_keys',
  'send_batch_entries_failed',
  'put_events_entries_failed',
  'index_lag',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number] | 'worker_timeout' | 'webhook_reenabled';

export interface AdversaryRecord {
  readonly kind: AdversaryKind;
  readonly provider: Provider;
  /** The inbox key the request names. */
  readonly eventKey: string;
  readonly status?: number;
  /** The phase of the run it was sent in (`calm`, `store_down`, ...). */
  readonly during: string;
}

export interface InboxRow {
  readonly key: string;
  readonly status: string;
  readonly digest: string;
  readonly recovered: boolean;
  readonly outcome?: string;
  /** Claims the row has used, and the last failure's name (what an operator would read). */
  readonly attempts?: number;
  readonly lastError?: string;
  /** When the verifier admitted it, and when its pending clock last started (epoch ms): its admission, or the sweep's restart when the sweep enqueued it again. */
  readonly receivedAt?: number;
  readonly pendingSince?: number;
  /** When it was processed (epoch ms). */
  readonly processedAt?: number;
}

export interface DispatchedEffect {
  readonly detailType: string;
  readonly effectKey: string;
  readonly eventKey: string;
  readonly jobKey?: string;
  readonly taskId?: string;
  readonly status?: string;
  /** A batch's effects: the batch, the request (child) and its terminal state, or the batch's outcome. */
  readonly batchId?: string;
  readonly customId?: string;
  readonly childState?: string;
  readonly batchOutcome?: string;
  readonly recovered: boolean;
}

/** A batch as the batch API recorded it: each request's terminal state (`none` while unprocessed). */
export interface BatchRecord {
  readonly provider: string;
  readonly batchId: string;
  readonly requests: readonly { readonly customId: string; readonly state: string }[];
}

/** Everything the run collected; the providers' records are the reference. */
export interface Evidence {
  readonly plan: Plan;
  readonly faults: Partial<Record<FaultKind, number>>;
  /** Every delivery of every provider, as the providers recorded them. */
  readonly deliveries: readonly DeliveryRecord[];
  /** HTTP requests the providers made. */
  readonly attempts: number;
  readonly answerlineTasks: readonly AnswerlineTask[];
  readonly echonovaJobs: readonly EchonovaJob[];
  readonly events: readonly StandardWebhooksEvent[];
  readonly echonovaWebhook: EchonovaWebhook;
  readonly adversary: readonly AdversaryRecord[];
  /** The answers to the forged flood on a route of its own (0: no answer). */
  readonly routeFlood: readonly number[];
  /** Altered copies not sent because their original was never delivered. */
  readonly alteredSkipped: number;
  readonly rows: readonly InboxRow[];
  readonly quarantined: readonly { key: string; digest: string; count: number }[];
  readonly submissions: readonly { key: string; state: string }[];
  readonly results: readonly { key: string; taskId: string; status: string }[];
  /** The inbox keys of the messages found in the DLQ. */
  readonly deadLettered: readonly string[];
  readonly effects: readonly DispatchedEffect[];
  /** The `ResourceUnavailable` events the reconciler put on the bus. */
  readonly unavailable: readonly { readonly submissionKey: string; readonly effectKey: string; readonly reason: string }[];
  readonly batches: readonly BatchRecord[];
  /** Answerline tasks the app recorded with a short deadline and the provider never started. */
  readonly deadlineTaskIds: readonly string[];
  /** Rows whose processing was interrupted after it may have sent the effect: their invocation died, or reported them failed. */
  readonly interruptedRows: ReadonlySet<string>;
  /** Rows whose processor invocation died (a crash or a timeout). */
  readonly killedRows: ReadonlySet<string>;
  /** When each receive of a work message (by `receiveKey`) was handed to a processor invocation, epoch ms. */
  readonly receivedAt: ReadonlyMap<string, number>;
  /** Digests of the bodies each provider's task API served, by task id. */
  /** What the run's GitHub and Stripe sent, from their own records. */
  readonly providerLogs: ProviderLogRecord;
  readonly servedDigests: Readonly<Record<string, ReadonlyMap<string, ReadonlySet<string>> | undefined>>;
  readonly rateLimitedPolls: number;
  readonly logDir: string;
  readonly sensitive: { readonly texts: readonly string[]; readonly signatureTokens: ReadonlySet<string> };
  readonly appStats: Readonly<Record<string, number>>;
  readonly hostStats: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Calls the IAM gateway refused (each function's role policy from the template), and how many it judged, by principal. */
  readonly iam: { readonly denials: readonly { principal: string; message: string }[]; readonly evaluated: Readonly<Record<string, number>> };
  /**
   * The functions' AWS calls through the fault proxies: those made, by `<service>.<operation>`, and
   * those changed, by `<kind> <service>.<operation>` (`throttled dynamodb.PutItem`, …).
   */
  readonly awsCalls: { readonly made: Readonly<Record<string, number>>; readonly changed: Readonly<Record<string, number>> };
  /** Kinds of AWS's faults planned on calls no function made this run: nothing to change. */
  readonly uncalled: readonly FaultKind[];
  /** When the work queue was down (epoch ms); absent when the run never took it down. */
  readonly queueOutage?: { readonly downAt: number; readonly upAt: number };
  /** When the processing's downstream failed every row and came back (epoch ms); absent when the run never took it down. */
  readonly downstreamOutage?: { readonly downAt: number; readonly upAt: number };
  /**
   * The flow-control item at the end (`flow:control`): the breaker's state, and how many times it
   * opened (the item counts every opening); absent when nothing ever wrote it.
   */
  readonly breaker?: { readonly state: string; readonly openings: number };
  /** Every alarm state change of the template's alarms, as the twin evaluated them. */
  readonly alarms: readonly { readonly logicalId: string; readonly to: string; readonly at: number }[];
  readonly errors: readonly string[];
  elapsedMs: number;
}
