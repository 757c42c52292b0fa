import { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { CircuitBreakerOptions } from './flow-control';
import type { WebhookIngress } from './ingress';
import type { WebhookInboxAlarmOptions, WebhookInboxDashboardOptions } from './monitoring-options';
import type { WebhookProvider } from './provider';
import type { InboxArchiveOptions } from './archive-options';

/** Settings of a table the inbox creates: the inbox table (`inboxTableSettings`) or the results table (`resultsTableSettings`). */
export interface TableSettings {
  /**
   * Explicit table name.
   * @default - a name CloudFormation generates
   */
  readonly tableName?: string;

  /**
   * What happens to the table when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * Encryption at rest.
   * @default TableEncryption.AWS_MANAGED
   */
  readonly encryption?: dynamodb.TableEncryption;

  /**
   * The customer-managed key, when `encryption` is `CUSTOMER_MANAGED`.
   * @default - a key is created when `encryption` is `CUSTOMER_MANAGED`
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Point-in-time recovery.
   * @default true
   */
  readonly pointInTimeRecovery?: boolean;

  /**
   * Deletion protection.
   * @default false
   */
  readonly deletionProtection?: boolean;

  /**
   * Warm throughput of the table and of each of its indexes: read and write units a second it serves at once, for an inbox that expects bursts a new on-demand table could not yet take (at least 12,000 read and 4,000 write units; priced per unit raised, docs/CAPACITY.md).
   * @default - none: a new on-demand table serves 12,000 read and 4,000 write units a second at once and grows with its traffic
   */
  readonly warmThroughput?: dynamodb.WarmThroughput;
}

/**
 * Settings of a table the inbox creates.
 * @deprecated use `TableSettings`, the same settings under a name that fits the results table too
 */
// jsii publishes only interfaces: the alias must be one, with nothing of its own.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface InboxTableSettings extends TableSettings {}

/** Properties of a WebhookInbox. */
export interface WebhookInboxProps {
  /**
   * The providers this inbox serves, each at `POST /hooks/<name>` with its own signing secret (SNS: no secret; a polled-only `messageBatches` API: neither).
   * @default - one Answerline provider at `/hooks/answerline`
   */
  readonly providers?: WebhookProvider[];

  /**
   * The inbox's name in the `Inbox` dimension of its metrics and in its log lines.
   * @default - a name derived from the construct path, unique in the account
   */
  readonly inboxName?: string;

  /**
   * An existing inbox table, with the keys, indexes and TTL of docs/BRING-YOUR-OWN.md (checked at
   * synth for a table defined in the app; an imported one needs `acknowledgeImportedInboxTable`).
   * @default - a new table
   */
  readonly inboxTable?: dynamodb.ITable;

  /**
   * Accept an imported `inboxTable` (`Table.fromTableName` and the like), whose keys and indexes CDK
   * cannot see: you have checked it has the schema of docs/BRING-YOUR-OWN.md. Without it, such a
   * table is refused at synth.
   * @default false
   */
  readonly acknowledgeImportedInboxTable?: boolean;

  /**
   * Settings of the new inbox table; not allowed with `inboxTable`.
   * @default - on-demand, encrypted, point-in-time recovery, retained on delete
   */
  readonly inboxTableSettings?: TableSettings;

  /**
   * An existing results table, with a string partition key `pk` and no sort key (checked at synth
   * for a table defined in the app; an imported one needs `acknowledgeImportedResultsTable`).
   * @default - a new table
   */
  readonly resultsTable?: dynamodb.ITable;

  /**
   * Accept an imported `resultsTable`, whose keys CDK cannot see: you have checked it has the
   * schema of docs/BRING-YOUR-OWN.md. Without it, such a table is refused at synth.
   * @default false
   */
  readonly acknowledgeImportedResultsTable?: boolean;

  /**
   * Settings of the new results table; not allowed with `resultsTable`.
   * @default - on-demand, encrypted, point-in-time recovery, retained on delete
   */
  readonly resultsTableSettings?: TableSettings;

  /**
   * An existing standard work queue, redriving to a dead-letter queue after `maxReceiveCount`
   * receives, with a visibility timeout at least the processor's timeout (checked at synth for a
   * queue defined in the app; an imported one needs `deadLetterQueue` and `acknowledgeImportedWorkQueue`).
   * @default - a new encrypted queue with a dead-letter queue
   */
  readonly workQueue?: sqs.IQueue;

  /**
   * Accept an imported `workQueue`, whose redrive policy and visibility timeout CDK cannot see: you
   * have checked them against docs/BRING-YOUR-OWN.md. Without it, such a queue is refused at synth.
   * @default false
   */
  readonly acknowledgeImportedWorkQueue?: boolean;

  /**
   * Overrides for the new work queue; `deadLetterQueue` is construct-required.
   * @default - SQS-managed encryption, TLS only, visibility timeout 6× the processor timeout
   */
  readonly workQueueProps?: sqs.QueueProps;

  /**
   * The dead-letter queue of the `workQueue` you bring, which the alarms watch; required when that
   * queue is imported.
   * @default - the one the work queue's redrive policy names (a new one with a new work queue)
   */
  readonly deadLetterQueue?: sqs.IQueue;

  /**
   * Overrides for the new dead-letter queue.
   * @default - SQS-managed encryption, TLS only, 14 days retention
   */
  readonly deadLetterQueueProps?: sqs.QueueProps;

  /**
   * Receives of a work message before it moves to the dead-letter queue, and attempts an inbox
   * row gets in all (whichever messages carry it) before it is DEAD.
   * @default 5
   */
  readonly maxReceiveCount?: number;

  /**
   * Overrides for the verifier function; its timeout may not exceed API Gateway's integration timeout (29 seconds behind a REST API, 30 behind an HTTP API).
   * @default - ARM64, 512 MB, 10 seconds, traced only with `tracing`
   */
  readonly verifierFunctionProps?: lambda.FunctionOptions;

  /**
   * Overrides for the processor function.
   * @default - ARM64, 512 MB, 30 seconds, traced only with `tracing`
   */
  readonly processorFunctionProps?: lambda.FunctionOptions;

  /**
   * Overrides for the reconciler function.
   * @default - ARM64, 1,769 MB (one vCPU, which the sweep's capacity follows), 2 minutes, traced only with `tracing`
   */
  readonly reconcilerFunctionProps?: lambda.FunctionOptions;

  /**
   * Active X-Ray tracing on the inbox's functions: about $5 per million traces, and below one invocation a second every invocation is traced, so about $10 per million deliveries at 1 million a month (docs/COSTS.md).
   * @default false
   */
  readonly tracing?: boolean;

  /**
   * Emit each metric per provider too (dimensions `Inbox` and `Provider`), not only per inbox: each provider's copy is a custom metric of its own, about $0.30 a month each (docs/COSTS.md). The alarms and the dashboard read the per-inbox metrics.
   * @default false
   */
  readonly metricsPerProvider?: boolean;

  /**
   * Work messages per processor invocation.
   * @default 10
   */
  readonly processorBatchSize?: number;

  /**
   * How long the event source gathers work messages before it invokes the processor with fewer than `processorBatchSize` (0 to 5 minutes): fewer invocations, receives and deletes at low rates, each delivery processed up to this much later (docs/COSTS.md).
   * @default Duration.seconds(5)
   */
  readonly processorBatchingWindow?: Duration;

  /**
   * The most concurrent processor invocations the queue drives (2 to 1000): the default is half of a new account's Lambda concurrency, so the verifier keeps answering while the processor is busy (docs/DEPLOY.md#prerequisites).
   * @default 5
   */
  readonly processorMaxConcurrency?: number;

  /**
   * The most rows a second the processor hands downstream, shared by its concurrent invocations: each invocation of n rows lasts at least n × `processorMaxConcurrency` / this many seconds (the wait is billed; docs/FLOW-CONTROL.md#a-rate-for-the-consumer). `processorBatchSize` × `processorMaxConcurrency` / this must be shorter than the processor's timeout (checked at synth).
   * @default - no cap beyond `processorMaxConcurrency`
   */
  readonly processorMaxRowsPerSecond?: number;

  /**
   * The circuit breaker on processing: a downstream failing at a high rate stops the inbox from spending attempts until probes succeed (docs/FLOW-CONTROL.md).
   * @default - on, with `CircuitBreakerOptions`' defaults
   */
  readonly circuitBreaker?: CircuitBreakerOptions;

  /**
   * The API that receives deliveries: an HTTP API, or a REST API (which AWS WAF can protect), each with an optional custom domain.
   * @default WebhookIngress.httpApi()
   */
  readonly ingress?: WebhookIngress;

  /**
   * The throttle of each provider's route that has none of its own (a provider's `throttle`): its own token bucket (HTTP API route settings, REST API method settings), so only a sender over its route's allowance gets 429. The routes' allowances may add up to no more than `accountThrottle` (checked at synth).
   * @default - an even share of `accountThrottle` among the routes without a throttle of their own, at most 1,000 requests a second and bursts of 2,000 each
   */
  readonly throttle?: apigwv2.ThrottleSettings;

  /**
   * API Gateway's throttling quota of the account in the stack's region, which every route of every API there draws on: declare it when AWS has raised it for your account.
   * @default - AWS's default quota: 10,000 requests a second, bursts of 5,000
   */
  readonly accountThrottle?: apigwv2.ThrottleSettings;

  /**
   * The largest body accepted; a larger one gets 413 and is not stored. Lambda's 6 MB
   * synchronous payload limit caps it (about 4.5 MB for bodies API Gateway base64-encodes, which
   * a REST API ingress does to every body: at most 4,669,440 bytes there, checked at synth).
   * @default - Size.bytes(6_000_000); Size.bytes(4_500_000) with a REST API ingress
   */
  readonly maxBodySize?: Size;

  /**
   * Bodies (and results) larger than this are stored in the body bucket, with a pointer in the
   * row; smaller ones stay in the row. At most 350 KiB (DynamoDB items hold 400 KB).
   * @default Size.kibibytes(8)
   */
  readonly inlineBodyLimit?: Size;

  /**
   * An existing bucket for large bodies.
   * @default - a new bucket (S3-managed encryption, TLS only, no public access, objects expire after the items that reference them) when `maxBodySize` exceeds `inlineBodyLimit`
   */
  readonly bodyBucket?: s3.IBucket;

  /**
   * Archive each processed delivery (its exact bytes and sanitized record) to S3, with a Glue table
   * for Athena (docs/ARCHIVE.md); `{}` turns it on with its defaults. The processor writes one
   * object per batch, before it completes the batch's rows.
   * @default - no archive
   */
  readonly archive?: InboxArchiveOptions;

  /**
   * How long inbox rows are kept (DynamoDB TTL). At least the dead-letter queue's retention and
   * every provider's redelivery window and polling horizon (checked at synth).
   * @default Duration.days(30)
   */
  readonly retention?: Duration;

  /**
   * How long a job's result is kept after its last decision (DynamoDB TTL on the results table,
   * and the body bucket's objects of results too large for an item, a day longer). At least `retention`.
   * @default - the inbox's `retention`
   */
  readonly resultRetention?: Duration;

  /**
   * The most records of requests refused at the authenticity check kept per provider and minute,
   * across every verifier instance (the rest are counted in `RejectionSuppressed`); 0 keeps none.
   * @default 60
   */
  readonly rejectionRecordsPerMinute?: number;

  /**
   * Percent (1 to 100) of refused requests considered for a record, before the per-minute limit.
   * @default 100
   */
  readonly rejectionRecordSamplePercent?: number;

  /**
   * How long a rejection record is kept (DynamoDB TTL), whole days from 1 to 365.
   * @default Duration.days(7)
   */
  readonly rejectionRecordRetention?: Duration;

  /**
   * How long a signing secret stays cached in the verifier.
   * @default Duration.minutes(5)
   */
  readonly secretCacheTtl?: Duration;

  /**
   * When the reconciler runs.
   * @default Schedule.rate(Duration.minutes(5))
   */
  readonly reconcileSchedule?: events.Schedule;

  /**
   * A row still unprocessed this long after it arrived is enqueued again by the reconciler. At least
   * the longest of the verifier's, processor's and reconciler's timeouts plus 10 seconds (checked at synth).
   * @default - 5 minutes, or that floor when a function's timeout makes it longer
   */
  readonly sweepAfter?: Duration;

  /**
   * Ignored: the sweep enqueues every stranded row it finds, as many as its run has time for.
   * @default - no limit of rows: the reconciler's timeout bounds a run
   * @deprecated the sweep's work per run follows its backlog (docs/DESIGN.md#invariant-5); remove the prop
   */
  readonly sweepBatchSize?: number;

  /**
   * Shards of the pending index, through which the reconciler finds stranded rows (16 to 100); each takes about 1,000 entries a second, so 16 carry some 10,000 deliveries a second. It may grow on a deployed inbox: the sweep keeps reading the shards written before.
   * @default 16
   */
  readonly pendingIndexShards?: number;

  /**
   * Retention of the functions' and the API's log groups.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * The most recorded submissions one reconciler run checks (and polls the provider for).
   * @default 50
   */
  readonly pollBatchSize?: number;

  /**
   * How long before a recorded submission's deadline it is checked, and counted (and alarmed on) while still unread; at least the reconcile schedule's rate. Give apps the same value (`SubmissionLedger`'s `deadlineWarningSeconds`).
   * @default Duration.minutes(10)
   */
  readonly deadlineWarning?: Duration;

  /**
   * Publish each decided result (one event per change of a job's winner, one per event of providers
   * without jobs) to an EventBridge bus, with a deterministic effect key. With a `processingFunction`
   * too, each result goes to both; set `false` when your function is the only consumer.
   * @default true
   */
  readonly publishEvents?: boolean;

  /**
   * The bus results are published to.
   * @default - a new event bus
   */
  readonly eventBus?: events.IEventBus;

  /**
   * Your own processing code (any language): invoked synchronously with each decided result and
   * its effect key; a failure is retried and, after `maxReceiveCount`, dead-lettered, never lost.
   * Its run time counts against the processor's timeout. Results are still published as events
   * too unless `publishEvents` is `false` (synth says so in an info message).
   * @default - no function: results are only published as events
   */
  readonly processingFunction?: lambda.IFunction;

  /**
   * The alarms (each with a runbook section), their thresholds and the topic they notify.
   * @default - every alarm with its default threshold, notifying no topic
   */
  readonly alarms?: WebhookInboxAlarmOptions;

  /**
   * The CloudWatch dashboard of the pipeline: $3 a month beyond an account's first three dashboards, $3 per million deliveries at 1 million a month (docs/COSTS.md); `enabled: false` leaves it out.
   * @default - a dashboard with a generated name
   */
  readonly dashboard?: WebhookInboxDashboardOptions;
}
