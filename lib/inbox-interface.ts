import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { IConstruct } from 'constructs';

/**
 * A webhook inbox, as its alarms, its dashboard and your code see it: its name, the resources it
 * runs on, grants on its data, rules on its effects, and every metric it has.
 *
 * Property types are those of `WebhookInbox` itself (`api` is an `HttpApi`): jsii allows no
 * narrower type in a class than in an interface it implements.
 */
export interface IWebhookInbox extends IConstruct {
  /** The inbox's name in metric dimensions and logs. */
  readonly inboxName: string;
  /** The base URL of the endpoint; providers post to `${endpointUrl}/hooks/<name>`. */
  readonly endpointUrl: string;
  /** The HTTP API that receives deliveries; an inbox whose ingress is a REST API throws when it is read (use `restApi`). */
  readonly api: apigwv2.HttpApi;
  /** The REST API that receives deliveries, when the ingress is one. */
  readonly restApi?: apigw.RestApi;
  /** The inbox table: one row per (provider, event id). */
  readonly inboxTable: dynamodb.ITable;
  /** The results table: the winning result of each logical job. */
  readonly resultsTable: dynamodb.ITable;
  /** The work queue between verifier and processor. */
  readonly workQueue: sqs.IQueue;
  /** The dead-letter queue of the work queue, when known. */
  readonly deadLetterQueue?: sqs.IQueue;
  /** Secrets Manager's reports of a failed rotation of the inbox's signing secrets, when a provider asks for rotation. */
  readonly rotationFailureQueue?: sqs.IQueue;
  /** The bucket of bodies and results too large for a table item, when bodies can be that large. */
  readonly bodyBucket?: s3.IBucket;
  /** The bus decided results are published to, unless `publishEvents` is false. */
  readonly eventBus?: events.IEventBus;
  /** The verifier function. */
  readonly verifierFunction: lambda.IFunction;
  /** The processor function. */
  readonly processorFunction: lambda.IFunction;
  /** The reconciler function. */
  readonly reconcilerFunction: lambda.IFunction;
  /** When the reconciler runs. */
  readonly reconcileSchedule: events.Schedule;

  /**
   * Lets a principal read the job results: GetItem, BatchGetItem and Query on the results table,
   * and GetObject of results too large for it (`responses/` in the body bucket).
   */
  grantReadResults(grantee: iam.IGrantable): iam.Grant;

  /**
   * Lets a principal read the inbox rows and their bodies (raw content: grant with care): GetItem,
   * BatchGetItem and Query on the inbox table (not its indexes), and GetObject of large bodies (`bodies/`).
   */
  grantReadInbox(grantee: iam.IGrantable): iam.Grant;

  /**
   * Lets a principal record submissions in the ledger (the `SubmissionLedger` client of
   * `cdk-webhook-inbox/client`): PutItem on the inbox table, only of items whose partition key
   * is a submission's (`dynamodb:LeadingKeys`) and whose attributes are a submission's
   * (`dynamodb:Attributes`), returning no old item, so it can neither forge nor overwrite a delivery.
   */
  grantRecordSubmission(grantee: iam.IGrantable): iam.Grant;

  /**
   * A rule for each decided job result (`JobResultDecided`: once per change of a job's winner).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  onJobResult(id: string, options?: events.OnEventOptions): events.Rule;

  /**
   * A rule for each processed event of providers without jobs (`WebhookReceived`: Stripe, GitHub, ...).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  onWebhookReceived(id: string, options?: events.OnEventOptions): events.Rule;

  /**
   * A rule for each recorded submission whose provider resource is gone unread (`ResourceUnavailable`:
   * polled 404/410, or its deadline passed): the operator's decision, never a regeneration.
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  onResourceUnavailable(id: string, options?: events.OnEventOptions): events.Rule;

  /**
   * A rule for each request of a polled batch that reached its terminal state (`BatchChildSettled`: once per request).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  onBatchChildSettled(id: string, options?: events.OnEventOptions): events.Rule;

  /**
   * A rule for each polled batch whose every result was recorded (`BatchSettled`: its summary, once per batch).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  onBatchSettled(id: string, options?: events.OnEventOptions): events.Rule;

  /**
   * A metric the handlers emit, for this inbox across its providers.
   * @default - sum over 5 minutes
   */
  metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries admitted as new rows. @default - sum over 5 minutes */
  metricAccepted(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Requests refused at the authenticity check: a signature that matches no secret, a missing or
   * garbled signature, timestamp or id header, a stale timestamp (each also counted under its
   * reason). @default - sum over 5 minutes
   */
  metricSignatureFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries refused for a well-formed signature that matches no secret. @default - sum over 5 minutes */
  metricBadSignatures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Altered duplicates kept aside (same id, different body). @default - sum over 5 minutes */
  metricQuarantined(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries answered 5xx because the inbox table failed. @default - sum over 5 minutes */
  metricStoreErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Deliveries verified with the previous secret (AWSPREVIOUS) after a rotation: when it stays at
   * zero, the provider has switched and the old secret can go. @default - sum over 5 minutes
   */
  metricPreviousSecretMatches(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Deliveries refused for a bad signature while a staged version (AWSPENDING, AWSPREVIOUS) held a
   * value that does not decode as this provider's key: a mistyped secret, which signs nothing.
   * @default - sum over 5 minutes
   */
  metricUnusableSecretVersions(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Rows processed. @default - sum over 5 minutes */
  metricProcessed(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Failed processing attempts. @default - sum over 5 minutes */
  metricProcessingFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Rows whose last allowed attempt failed (their message goes to the DLQ). @default - sum over 5 minutes */
  metricDeadLettered(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Rows the reconciler enqueued again. @default - sum over 5 minutes */
  metricSwept(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Seconds the sweep's watermark lags its cutoff at the end of a reconciler run (`SweepLag`, 0 when it caught up). @default - maximum over 5 minutes */
  metricSweepLag(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** 1 while the circuit breaker is open or probing, 0 while closed, one value per reconciler run (`BreakerOpen`). @default - maximum over 5 minutes */
  metricBreakerOpen(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Times a processor opened the circuit breaker (`BreakerOpened`). @default - sum over 5 minutes */
  metricBreakerOpened(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** 1 while an operator has the inbox paused, 0 otherwise, one value per reconciler run (`Paused`). @default - maximum over 5 minutes */
  metricPaused(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Work messages answered without claiming their row while paused or the breaker open: the row waits, no attempt spent (`Deferred`). @default - sum over 5 minutes */
  metricDeferred(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Repeats of a stored delivery with the same body (answered 2xx, nothing stored). @default - sum over 5 minutes */
  metricDuplicates(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Verified test deliveries (answered 2xx, nothing stored). @default - sum over 5 minutes */
  metricTestDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Signed handshakes a provider checks the endpoint with, answered at the edge and never stored. @default - sum over 5 minutes */
  metricHandshakes(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Requests from outside a provider's allowed source ranges, refused 403 before any verification. @default - sum over 5 minutes */
  metricSourceNotAllowed(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Requests whose signing certificate (SNS's) could not be fetched, answered 503 so that SNS retries. @default - sum over 5 minutes */
  metricCertificateUnavailable(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Subscription confirmations (SNS's) that SNS did not accept when the inbox requested them, answered 502. @default - sum over 5 minutes */
  metricConfirmationFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Verified deliveries of a task that is not final yet (Answerline): answered 200, nothing stored,
   * so they never stand in the way of the final delivery. @default - sum over 5 minutes
   */
  metricNotFinalDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Verified deliveries a provider's filter (`eventTypes`, `keepWhen`) dropped: answered 200
   * `filtered`, stored nowhere; per provider with the `Provider` dimension. @default - sum over 5 minutes
   */
  metricFilteredDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Processed deliveries written to the archive (the `archive` prop). @default - sum over 5 minutes */
  metricArchived(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Processed deliveries whose archive write failed: their rows are retried, like a failed effect. @default - sum over 5 minutes */
  metricArchiveFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries refused for a signed timestamp outside the tolerance. @default - sum over 5 minutes */
  metricStaleTimestamps(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries refused for a missing or garbled header or field. @default - sum over 5 minutes */
  metricMalformed(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries refused for a body over `maxBodySize`. @default - sum over 5 minutes */
  metricTooLarge(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Verified deliveries refused for a body nested deeper than 512 levels (400 `body_too_deep`). @default - sum over 5 minutes */
  metricBodyTooDeep(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries answered 5xx because the signing secret could not be read. @default - sum over 5 minutes */
  metricSecretUnavailable(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Stored deliveries whose enqueue failed (the sweep enqueues them later). @default - sum over 5 minutes */
  metricEnqueueFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Processed rows that became their job's result. @default - sum over 5 minutes */
  metricWinnerChanged(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries verified with the current secret (AWSCURRENT). @default - sum over 5 minutes */
  metricCurrentSecretMatches(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Deliveries verified with the staged secret (AWSPENDING) during a rotation. @default - sum over 5 minutes */
  metricPendingSecretMatches(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Submissions whose final result was fetched by polling the provider. @default - sum over 5 minutes */
  metricRecovered(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Seconds since a provider recovered from its own event log (GitHub, Stripe) last completed a reconciler run. */
  metricRecoveryStalled(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Recovery runs that resumed past what the provider still keeps. */
  metricRecoveryBeyondRetention(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Submissions that expired (their TTL) still awaiting; before UNAVAILABLE existed, also those the provider did not know (404). @default - sum over 5 minutes */
  metricUnknownSubmissions(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Results of polled batches' requests stored as rows of their own (each once). @default - sum over 5 minutes */
  metricBatchChildrenRecorded(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Polled batches whose every result was recorded and whose summary was stored. @default - sum over 5 minutes */
  metricBatchesSettled(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Polled submissions not final yet, checked again later. @default - sum over 5 minutes */
  metricStillPending(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Submissions past their provider's lifecycle horizon without a result, as counted by each
   * reconciler run (every run reports, zero included). @default - maximum over 5 minutes
   */
  metricOverdueSubmissions(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Reconciler runs that stopped polling because the provider answered 429. @default - sum over 5 minutes */
  metricPollRateLimited(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Polls that failed (network, 5xx). @default - sum over 5 minutes */
  metricPollErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Effects dispatched (events, invocations of your code). @default - sum over 5 minutes */
  metricEffectsDispatched(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Effect dispatches that failed (the row is retried). @default - sum over 5 minutes */
  metricEffectFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Work messages whose inbox row was gone (it expired before the message was processed): nothing
   * was processed. Non-zero means retention is too short for how late messages arrive. @default - sum over 5 minutes
   */
  metricMessagesWithoutRow(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Provider resources found gone: a delivery's at the authoritative read (404/410), or a recorded
   * submission's (polled 404/410, or its deadline passed unread). @default - sum over 5 minutes
   */
  metricResourceUnavailable(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Recorded submissions within their deadline's warning margin and still unread, as counted by each
   * reconciler run (every run reports, zero included). @default - maximum over 5 minutes
   */
  metricSubmissionsNearDeadline(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Requests refused at the authenticity check that left a rejection record. @default - sum over 5 minutes */
  metricRejectionsRecorded(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Requests refused at the authenticity check that left no record: sampled out or over the minute's limit. @default - sum over 5 minutes */
  metricRejectionsSuppressed(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Rejection records that could not be written (an error, or over their time budget). @default - sum over 5 minutes */
  metricRejectionRecordFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /**
   * Milliseconds from a delivery's receipt to the start of its first processing attempt (`QueueDelay`, one value per row). @default - p99 over 5 minutes
   */
  metricQueueDelay(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Milliseconds from the provider's signed event timestamp to the start of the row's first processing attempt (`QueueDelayFromEvent`; providers that sign a time). @default - p99 over 5 minutes
   */
  metricQueueDelayFromEvent(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Messages waiting in the work queue (`AWS/SQS` `ApproximateNumberOfMessagesVisible`). @default - maximum over 5 minutes */
  metricWorkQueueDepth(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Age in seconds of the oldest work message (`AWS/SQS` `ApproximateAgeOfOldestMessage`). @default - maximum over 5 minutes */
  metricOldestMessageAge(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /**
   * Messages in the dead-letter queue (`AWS/SQS` `ApproximateNumberOfMessagesVisible`); undefined
   * when the dead-letter queue is unknown. @default - maximum over 1 minute
   */
  metricDeadLetterQueueDepth(props?: cloudwatch.MetricOptions): cloudwatch.Metric | undefined;

  /**
   * Reports of a failed rotation of the inbox's signing secrets waiting for an operator (the
   * rotation failure queue's `AWS/SQS` `ApproximateNumberOfMessagesVisible`); undefined when no
   * provider has `rotation`. @default - maximum over 5 minutes
   */
  metricRotationFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric | undefined;

  /** Responses of the endpoint with a 5xx status (`AWS/ApiGateway` `5xx`, dimension `ApiId`; for a REST API `5XXError`, dimensions `ApiName` and `Stage`). @default - sum over 5 minutes */
  metricVerifierServerErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Failed reconciler invocations (`AWS/Lambda` `Errors`, dimension `FunctionName`). @default - sum over 5 minutes */
  metricReconcilerErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Reconciler invocations, failed ones included (`AWS/Lambda` `Invocations`, dimension `FunctionName`). @default - sum over 5 minutes */
  metricReconcilerInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
}
