import { CfnOutput, Duration, Names, RemovalPolicy, Size, Stack, Token, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Defaults, EffectEvent, Env, METRIC_NAMESPACE, MetricDimension, MetricName, OPS_CONFIG_OUTPUT_DESCRIPTION, OpsConfig, PROVIDER_NAME_PATTERN, PROVIDER_REDELIVERY_SECONDS, RotatedSecretConfig, SUBMISSION_PARTITION_PREFIX, TableSchema } from './contract';
import { createInboxDashboard } from './dashboard';
import { handlerEnvironments } from './handler-environment';
import { createHandlerFunction } from './handler-function';
import { WebhookInboxAlarmOptions, WebhookInboxAlarms, WebhookInboxDashboardOptions } from './monitoring';
import { WebhookProvider, WebhookProviderConfig } from './provider';
import { pollingRuntimeConfig, providerProblems, providerRuntimeConfig } from './runtime-config';

/** Settings of a table the inbox creates. */
export interface InboxTableSettings {
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
}

/** Properties of a WebhookInbox. */
export interface WebhookInboxProps {
  /**
   * The providers this inbox serves, each at `POST /hooks/<name>` with its own signing secret.
   * @default - one Answerline provider at `/hooks/answerline`
   */
  readonly providers?: WebhookProvider[];

  /**
   * The inbox's name in the `Inbox` dimension of its metrics and in its log lines.
   * @default - a name derived from the construct path, unique in the account
   */
  readonly inboxName?: string;

  /**
   * An existing inbox table, with the schema in the README (keys `pk`/`sk`, sparse index `pending`).
   * @default - a new table
   */
  readonly inboxTable?: dynamodb.ITable;

  /**
   * Settings of the new inbox table; not allowed with `inboxTable`.
   * @default - on-demand, encrypted, point-in-time recovery, retained on delete
   */
  readonly inboxTableSettings?: InboxTableSettings;

  /**
   * An existing results table, with a string partition key `pk`.
   * @default - a new table
   */
  readonly resultsTable?: dynamodb.ITable;

  /**
   * Settings of the new results table; not allowed with `resultsTable`.
   * @default - on-demand, encrypted, point-in-time recovery, retained on delete
   */
  readonly resultsTableSettings?: InboxTableSettings;

  /**
   * An existing work queue; its redrive policy must use `maxReceiveCount`.
   * @default - a new encrypted queue with a dead-letter queue
   */
  readonly workQueue?: sqs.IQueue;

  /**
   * Overrides for the new work queue; `deadLetterQueue` is construct-required.
   * @default - SQS-managed encryption, TLS only, visibility timeout 6× the processor timeout
   */
  readonly workQueueProps?: sqs.QueueProps;

  /**
   * The dead-letter queue to alarm on when you bring your own `workQueue`.
   * @default - the new work queue's dead-letter queue; none when `workQueue` is given without it
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
   * Overrides for the verifier function.
   * @default - ARM64, 512 MB, 10 seconds, active tracing
   */
  readonly verifierFunctionProps?: lambda.FunctionOptions;

  /**
   * Overrides for the processor function.
   * @default - ARM64, 512 MB, 30 seconds, active tracing
   */
  readonly processorFunctionProps?: lambda.FunctionOptions;

  /**
   * Overrides for the reconciler function.
   * @default - ARM64, 256 MB, 2 minutes, active tracing
   */
  readonly reconcilerFunctionProps?: lambda.FunctionOptions;

  /**
   * Work messages per processor invocation.
   * @default 10
   */
  readonly processorBatchSize?: number;

  /**
   * The most concurrent processor invocations the queue drives (2 to 1000).
   * @default 10
   */
  readonly processorMaxConcurrency?: number;

  /**
   * Throttling of the endpoint; a throttled delivery gets 429 and the provider retries.
   * @default - 1,000 requests per second, bursts of 2,000
   */
  readonly throttle?: apigwv2.ThrottleSettings;

  /**
   * The largest body accepted; a larger one gets 413 and is not stored. Lambda's 6 MB
   * synchronous payload limit caps it (about 4.5 MB for bodies API Gateway base64-encodes).
   * @default Size.bytes(6_000_000)
   */
  readonly maxBodySize?: Size;

  /**
   * Bodies (and results) larger than this are stored in the body bucket, with a pointer in the
   * row; smaller ones stay in the row. At most 350 KiB (DynamoDB items hold 400 KB).
   * @default Size.kibibytes(64)
   */
  readonly inlineBodyLimit?: Size;

  /**
   * An existing bucket for large bodies.
   * @default - a new bucket (S3-managed encryption, TLS only, no public access, objects expire with the retention) when `maxBodySize` exceeds `inlineBodyLimit`
   */
  readonly bodyBucket?: s3.IBucket;

  /**
   * How long inbox rows are kept (DynamoDB TTL). At least the dead-letter queue's retention and
   * every provider's redelivery window and polling horizon (checked at synth).
   * @default Duration.days(30)
   */
  readonly retention?: Duration;

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
   * A row still unprocessed this long after it arrived is enqueued again by the reconciler.
   * @default Duration.minutes(5)
   */
  readonly sweepAfter?: Duration;

  /**
   * The most rows one reconciler run enqueues again.
   * @default 100
   */
  readonly sweepBatchSize?: number;

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
   * Publish each decided result (one event per change of a job's winner, one per event of providers
   * without jobs) to an EventBridge bus, with a deterministic effect key.
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
   * Its run time counts against the processor's timeout.
   * @default - no function: results are only published as events
   */
  readonly processingFunction?: lambda.IFunction;

  /**
   * The alarms (each with a runbook section), their thresholds and the topic they notify.
   * @default - every alarm with its default threshold, notifying no topic
   */
  readonly alarms?: WebhookInboxAlarmOptions;

  /**
   * The CloudWatch dashboard of the pipeline.
   * @default - a dashboard with a generated name
   */
  readonly dashboard?: WebhookInboxDashboardOptions;
}

/** Lambda's synchronous payload limit (6 MiB) less room for the event's headers and context. */
const LAMBDA_BODY_LIMIT_BYTES = 6 * 1024 * 1024 - 64 * 1024;
/** DynamoDB's item limit is 400 KB; the row's other attributes need room beside the body. */
const INLINE_BODY_LIMIT_BYTES = 350 * 1024;

/**
 * A webhook receiver that never loses an acknowledged delivery, never processes one twice and is
 * immune to arrival order: API Gateway → verifier (signature over the raw bytes, conditional
 * write to the inbox table, 2xx only once durable) → SQS → processor (leased claim, result per
 * job by rule) with a dead-letter queue, and a scheduled reconciler that re-enqueues stranded rows.
 */
export class WebhookInbox extends Construct {
  /** The HTTP API that receives deliveries. */
  public readonly api: apigwv2.HttpApi;
  /** The API's `$default` stage (throttling, access logs). */
  public readonly stage: apigwv2.HttpStage;
  /** The base URL of the endpoint; providers post to `${endpointUrl}/hooks/<name>`. */
  public readonly endpointUrl: string;
  /** The inbox table: one row per (provider, event id). */
  public readonly inboxTable: dynamodb.ITable;
  /** The results table: the winning result of each logical job. */
  public readonly resultsTable: dynamodb.ITable;
  /** The work queue between verifier and processor. */
  public readonly workQueue: sqs.IQueue;
  /** The bucket of bodies and results too large for a table item, when bodies can be that large. */
  public readonly bodyBucket?: s3.IBucket;
  /** The function that rotates signing secrets, when a provider asks for rotation. */
  public readonly rotatorFunction?: lambda.IFunction;
  /** The dead-letter queue of the work queue, when known. */
  public readonly deadLetterQueue?: sqs.IQueue;
  /** The verifier function. */
  public readonly verifierFunction: lambda.IFunction;
  /** The processor function. */
  public readonly processorFunction: lambda.IFunction;
  /** The reconciler function. */
  public readonly reconcilerFunction: lambda.IFunction;
  /** The schedule that runs the reconciler. */
  public readonly reconcileRule: events.Rule;
  /** When the reconciler runs (`reconcileSchedule`, or its default). */
  public readonly reconcileSchedule: events.Schedule;
  /** The alarm raised when the dead-letter queue holds any message (`alarms.deadLetterQueueDepth`). */
  public readonly deadLetterAlarm?: cloudwatch.Alarm;
  /** The inbox's alarms, each with a runbook section in `docs/RUNBOOK.md`. */
  public readonly alarms: WebhookInboxAlarms;
  /** The CloudWatch dashboard of the pipeline, unless disabled. */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** The inbox's name in metric dimensions and logs. */
  public readonly inboxName: string;
  /** The bus decided results are published to, unless `publishEvents` is false. */
  public readonly eventBus?: events.IEventBus;

  private readonly providerConfigs: WebhookProviderConfig[];
  private readonly secrets = new Map<string, secretsmanager.ISecret>();

  constructor(scope: Construct, id: string, props: WebhookInboxProps = {}) {
    super(scope, id);
    this.providerConfigs = (props.providers ?? [WebhookProvider.answerline()]).map((provider) => provider.bind(this));
    validateProps(props, this.providerConfigs);

    this.inboxName = props.inboxName ?? Names.uniqueResourceName(this, { maxLength: 64 });
    const maxReceiveCount = props.maxReceiveCount ?? Defaults.MAX_RECEIVE_COUNT;
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const processorTimeout =
      props.processorFunctionProps?.timeout ?? Duration.seconds(Defaults.PROCESSOR_TIMEOUT_SECONDS);

    this.inboxTable = props.inboxTable ?? this.createInboxTable(props.inboxTableSettings);
    this.resultsTable = props.resultsTable ?? this.createResultsTable(props.resultsTableSettings);

    if (props.workQueue) {
      this.workQueue = props.workQueue;
      this.deadLetterQueue = props.deadLetterQueue;
    } else {
      const dlq = new sqs.Queue(this, 'DeadLetterQueue', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(Defaults.DEAD_LETTER_RETENTION_DAYS),
        ...props.deadLetterQueueProps,
      });
      this.deadLetterQueue = dlq;
      this.workQueue = new sqs.Queue(this, 'WorkQueue', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(processorTimeout.toSeconds() * Defaults.VISIBILITY_TIMEOUT_FACTOR),
        ...props.workQueueProps,
        deadLetterQueue: { queue: dlq, maxReceiveCount },
      });
    }

    for (const provider of this.providerConfigs) {
      this.secrets.set(provider.name, provider.signingSecret ?? this.createSigningSecret(provider.name));
    }

    const retention = props.retention ?? Duration.days(Defaults.RETENTION_DAYS);
    const maxBodyBytes = (props.maxBodySize ?? Size.bytes(Defaults.MAX_BODY_BYTES)).toBytes();
    const inlineBodyBytes = (props.inlineBodyLimit ?? Size.bytes(Defaults.INLINE_BODY_BYTES)).toBytes();
    this.bodyBucket = props.bodyBucket ?? (maxBodyBytes > inlineBodyBytes ? this.createBodyBucket(retention) : undefined);

    if (props.publishEvents ?? true) {
      this.eventBus = props.eventBus ?? new events.EventBus(this, 'EventBus', { description: 'Webhook inbox: decided results and events' });
    }
    const polled = this.providerConfigs.filter((provider) => provider.polling);

    const environments = handlerEnvironments({
      inboxName: this.inboxName,
      inboxTable: this.inboxTable.tableName,
      resultsTable: this.resultsTable.tableName,
      workQueueUrl: this.workQueue.queueUrl,
      providers: this.providerConfigs.map((provider) => providerRuntimeConfig(provider, this.secrets.get(provider.name)!.secretArn)),
      maxBodyBytes,
      bodyBucket: this.bodyBucket?.bucketName,
      inlineBodyBytes,
      retentionSeconds: retention.toSeconds(),
      secretCacheSeconds: (props.secretCacheTtl ?? Duration.seconds(Defaults.SECRET_CACHE_SECONDS)).toSeconds(),
      leaseSeconds: processorTimeout.toSeconds(),
      maxReceiveCount,
      sweepAfterSeconds: (props.sweepAfter ?? Duration.seconds(Defaults.SWEEP_AFTER_SECONDS)).toSeconds(),
      sweepBatchSize: props.sweepBatchSize ?? Defaults.SWEEP_BATCH_SIZE,
      polling: polled.map((provider) => pollingRuntimeConfig(provider, provider.polling!, provider.polling!.apiKeySecret.secretArn)),
      pollBatchSize: props.pollBatchSize ?? Defaults.POLL_BATCH_SIZE,
      effectBusName: this.eventBus?.eventBusName,
      effectFunctionArn: props.processingFunction?.functionArn,
    });

    const verifier = createHandlerFunction(this, 'Verifier', {
      handler: 'verifier',
      description: 'Webhook inbox verifier: verifies signatures and admits deliveries durably',
      memorySize: 512,
      timeout: Duration.seconds(10),
      logRetention,
      overrides: props.verifierFunctionProps,
      environment: environments.verifier,
    });
    this.verifierFunction = verifier.function;
    this.grantTableActions(verifier.role, this.inboxTable, ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
    this.grantSend(verifier.role);
    for (const secret of this.secrets.values()) secret.grantRead(verifier.role);
    this.grantObjects(verifier.role, ['s3:PutObject'], 'bodies');

    const processor = createHandlerFunction(this, 'Processor', {
      handler: 'processor',
      description: 'Webhook inbox processor: claims rows and decides each job result',
      memorySize: 512,
      timeout: processorTimeout,
      logRetention,
      overrides: props.processorFunctionProps,
      environment: environments.processor,
    });
    this.processorFunction = processor.function;
    this.grantTableActions(processor.role, this.inboxTable, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // GetItem: a losing offer and a retried winner read the job's stored winner.
    this.grantTableActions(processor.role, this.resultsTable, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    this.grantObjects(processor.role, ['s3:GetObject', 's3:PutObject'], 'bodies');
    this.grantObjects(processor.role, ['s3:PutObject'], 'responses');
    this.grantObjects(processor.role, ['s3:PutObject'], 'resources');
    if (this.eventBus) this.eventBus.grantPutEventsTo(processor.role);
    props.processingFunction?.grantInvoke(processor.role);
    for (const provider of this.providerConfigs) provider.authoritativeRead?.apiKeySecret.grantRead(processor.role);
    processor.function.addEventSource(
      new SqsEventSource(this.workQueue, {
        batchSize: props.processorBatchSize ?? Defaults.PROCESSOR_BATCH_SIZE,
        maxConcurrency: props.processorMaxConcurrency ?? 10,
        reportBatchItemFailures: true,
      }),
    );

    const reconciler = createHandlerFunction(this, 'Reconciler', {
      handler: 'reconciler',
      description: 'Webhook inbox reconciler: re-enqueues stranded rows and polls for undelivered results',
      memorySize: 256,
      timeout: Duration.minutes(2),
      logRetention,
      overrides: props.reconcilerFunctionProps,
      environment: environments.reconciler,
    });
    this.reconcilerFunction = reconciler.function;
    const { pendingIndex, awaitingIndex, jobRefIndex } = TableSchema.inbox;
    reconciler.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [pendingIndex, awaitingIndex, jobRefIndex].map((index) => `${this.inboxTable.tableArn}/index/${index.name}`),
      }),
    );
    this.grantTableActions(reconciler.role, this.inboxTable, ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    this.grantSend(reconciler.role);
    this.grantObjects(reconciler.role, ['s3:PutObject'], 'bodies');
    for (const provider of polled) provider.polling!.apiKeySecret.grantRead(reconciler.role);
    this.reconcileSchedule = props.reconcileSchedule ?? events.Schedule.rate(Duration.minutes(Defaults.SWEEP_EVERY_MINUTES));
    this.reconcileRule = new events.Rule(this, 'ReconcileSchedule', {
      description: 'Runs the webhook inbox reconciler',
      schedule: this.reconcileSchedule,
      targets: [new targets.LambdaFunction(reconciler.function, { retryAttempts: 2 })],
    });

    this.rotatorFunction = this.createRotation(logRetention);

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logRetention });
    this.api = new apigwv2.HttpApi(this, 'Api', {
      description: 'Webhook inbox endpoint',
      createDefaultStage: false,
    });
    this.stage = new apigwv2.HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? { rateLimit: 1000, burstLimit: 2000 },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
      },
    });
    const integration = new HttpLambdaIntegration('Verifier', verifier.function);
    for (const provider of this.providerConfigs) {
      for (const route of this.api.addRoutes({ path: `/hooks/${provider.name}`, methods: [apigwv2.HttpMethod.POST], integration })) {
        Validations.of(route).acknowledge({
          id: 'AwsSolutions::AwsSolutions-APIG4',
          reason:
            'Providers authenticate each delivery with an HMAC signature over the raw body, verified by the verifier ' +
            'before anything is stored; they cannot present IAM or JWT credentials, and an authorizer never sees the body.',
        });
      }
    }
    this.endpointUrl = this.api.apiEndpoint;

    this.alarms = new WebhookInboxAlarms(this, 'Alarms', { ...props.alarms, inbox: this });
    this.deadLetterAlarm = this.alarms.deadLetterQueueDepth;
    if (props.dashboard?.enabled ?? true) {
      this.dashboard = createInboxDashboard(this, 'Dashboard', this, this.alarms.all, props.dashboard);
    }

    new CfnOutput(this, 'EndpointUrl', { value: this.endpointUrl, description: 'Webhook inbox endpoint base URL' });
    const opsConfig: OpsConfig = {
      inboxName: this.inboxName,
      inboxTable: this.inboxTable.tableName,
      resultsTable: this.resultsTable.tableName,
      workQueueUrl: this.workQueue.queueUrl,
      deadLetterQueueUrl: this.deadLetterQueue?.queueUrl,
      reconcilerFunctionName: this.reconcilerFunction.functionName,
      bodyBucket: this.bodyBucket?.bucketName,
      providers: this.providerConfigs.map((provider) => provider.name),
      adapters: Object.fromEntries(this.providerConfigs.map((provider) => [provider.name, provider.adapter])),
    };
    new CfnOutput(this, 'OpsConfig', {
      value: Stack.of(this).toJsonString(opsConfig),
      description: `${OPS_CONFIG_OUTPUT_DESCRIPTION} (${this.node.path})`,
    });
    for (const provider of this.providerConfigs) {
      const suffix = pascalCase(provider.name);
      new CfnOutput(this, `${suffix}Url`, { value: this.urlFor(provider.name), description: `Webhook URL for ${provider.name}` });
      new CfnOutput(this, `${suffix}SigningSecretArn`, {
        value: this.signingSecretFor(provider.name).secretArn,
        description: `Signing secret of ${provider.name}`,
      });
    }
  }

  /** The URL a provider posts to. */
  public urlFor(providerName: string): string {
    this.signingSecretFor(providerName);
    return `${this.endpointUrl}/hooks/${providerName}`;
  }

  /** The signing secret of a provider this inbox serves. */
  public signingSecretFor(providerName: string): secretsmanager.ISecret {
    const secret = this.secrets.get(providerName);
    if (!secret) throw new Error(`this inbox serves no provider named "${providerName}"`);
    return secret;
  }

  /** Lets a principal read the job results (the table, and results too large for it in the body bucket). */
  public grantReadResults(grantee: iam.IGrantable): iam.Grant {
    this.bodyBucket?.grantRead(grantee, 'responses/*');
    return this.resultsTable.grantReadData(grantee);
  }

  /**
   * Lets a principal record submissions in the ledger (the `SubmissionLedger` client of
   * `cdk-webhook-inbox/client`): PutItem on the inbox table, only of items whose partition key
   * is a submission's (`dynamodb:LeadingKeys`), so it can neither forge nor overwrite a delivery.
   */
  public grantRecordSubmission(grantee: iam.IGrantable): iam.Grant {
    this.inboxTable.encryptionKey?.grantEncryptDecrypt(grantee);
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:PutItem'],
      resourceArns: [this.inboxTable.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SUBMISSION_PARTITION_PREFIX}*`] } },
    });
  }

  /**
   * A rule for each decided job result (`JobResultDecided`: once per change of a job's winner).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  public onJobResult(id: string, options: events.OnEventOptions = {}): events.Rule {
    return this.onEffect(id, EffectEvent.JOB_RESULT_DECIDED, options);
  }

  /**
   * A rule for each processed event of providers without jobs (`WebhookReceived`: Stripe, GitHub, ...).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  public onWebhookReceived(id: string, options: events.OnEventOptions = {}): events.Rule {
    return this.onEffect(id, EffectEvent.WEBHOOK_RECEIVED, options);
  }

  /** Lets a principal read the inbox rows and their bodies (raw content: grant with care). */
  public grantReadInbox(grantee: iam.IGrantable): iam.Grant {
    this.bodyBucket?.grantRead(grantee, 'bodies/*');
    return this.inboxTable.grantReadData(grantee);
  }

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
      period: Duration.minutes(5),
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

  /** Repeats of a stored delivery with the same body (answered 2xx, nothing stored). @default - sum over 5 minutes */
  public metricDuplicates(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.DUPLICATE, props);
  }

  /** Verified test deliveries (answered 2xx, nothing stored). @default - sum over 5 minutes */
  public metricTestDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.TEST_DELIVERY, props);
  }

  /**
   * Verified deliveries of a task that is not final yet (Answerline): answered 200, nothing stored,
   * so they never stand in the way of the final delivery. @default - sum over 5 minutes
   */
  public metricNotFinalDeliveries(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.NOT_FINAL, props);
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

  /** Polled submissions the provider does not know (404: unknown or expired). @default - sum over 5 minutes */
  public metricUnknownSubmissions(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.UNKNOWN_SUBMISSIONS, props);
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

  /** Deliveries whose provider resource was missing or expired at the authoritative read. @default - sum over 5 minutes */
  public metricResourceUnavailable(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.RESOURCE_UNAVAILABLE, props);
  }

  /** Messages waiting in the work queue (`AWS/SQS` `ApproximateNumberOfMessagesVisible`). @default - maximum over 5 minutes */
  public metricWorkQueueDepth(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.workQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(5), ...props });
  }

  /** Age in seconds of the oldest work message (`AWS/SQS` `ApproximateAgeOfOldestMessage`). @default - maximum over 5 minutes */
  public metricOldestMessageAge(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.workQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: Duration.minutes(5), ...props });
  }

  /**
   * Messages in the dead-letter queue (`AWS/SQS` `ApproximateNumberOfMessagesVisible`); undefined
   * when the dead-letter queue is unknown. @default - maximum over 1 minute
   */
  public metricDeadLetterQueueDepth(props?: cloudwatch.MetricOptions): cloudwatch.Metric | undefined {
    return this.deadLetterQueue?.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1), ...props });
  }

  /** Responses of the endpoint with a 5xx status (`AWS/ApiGateway` `5xx`, dimension `ApiId`). @default - sum over 5 minutes */
  public metricVerifierServerErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.api.metricServerError({ statistic: 'Sum', period: Duration.minutes(5), ...props });
  }

  /** Failed reconciler invocations (`AWS/Lambda` `Errors`, dimension `FunctionName`). @default - sum over 5 minutes */
  public metricReconcilerErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.reconcilerFunction.metricErrors({ statistic: 'Sum', period: Duration.minutes(5), ...props });
  }

  /** Reconciler invocations, failed ones included (`AWS/Lambda` `Invocations`, dimension `FunctionName`). @default - sum over 5 minutes */
  public metricReconcilerInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.reconcilerFunction.metricInvocations({ statistic: 'Sum', period: Duration.minutes(5), ...props });
  }

  private onEffect(id: string, detailType: string, options: events.OnEventOptions): events.Rule {
    if (!this.eventBus) throw new Error(`${id}: this inbox publishes no events (publishEvents is false)`);
    const rule = new events.Rule(this, id, {
      eventBus: this.eventBus,
      description: options.description,
      ruleName: options.ruleName,
      crossStackScope: options.crossStackScope,
    });
    rule.addEventPattern({
      source: [EffectEvent.SOURCE],
      detailType: [detailType],
      detail: { inbox: [this.inboxName] },
    });
    if (options.eventPattern) rule.addEventPattern(options.eventPattern);
    if (options.target) rule.addTarget(options.target);
    return rule;
  }

  private createInboxTable(settings: InboxTableSettings = {}): dynamodb.Table {
    const schema = TableSchema.inbox;
    const table = new dynamodb.Table(this, 'InboxTable', {
      ...tableDefaults(settings),
      partitionKey: { name: schema.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: schema.sortKey, type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: schema.ttlAttribute,
    });
    // Sparse, keys-only indexes: only the items that carry their keys are in them.
    for (const index of [schema.pendingIndex, schema.awaitingIndex]) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.NUMBER },
        projectionType: dynamodb.ProjectionType.KEYS_ONLY,
      });
    }
    table.addGlobalSecondaryIndex({
      indexName: schema.jobRefIndex.name,
      partitionKey: { name: schema.jobRefIndex.partitionKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
    return table;
  }

  private createResultsTable(settings: InboxTableSettings = {}): dynamodb.Table {
    return new dynamodb.Table(this, 'ResultsTable', {
      ...tableDefaults(settings),
      partitionKey: { name: TableSchema.results.partitionKey, type: dynamodb.AttributeType.STRING },
    });
  }

  private createSigningSecret(providerName: string): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, `${pascalCase(providerName)}SigningSecret`, {
      description: `Webhook signing secret of ${providerName}: replace the placeholder with the provider's secret`,
      // A placeholder until the operator stores the provider's secret: 48 alphanumerics are valid base64.
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'The provider issues this signing secret; a new one is staged by the operator as the provider rotates it ' +
        '(README, "Rotating a signing secret"), not generated on a schedule.',
    });
    return secret;
  }

  private createBodyBucket(retention: Duration): s3.Bucket {
    const bucket = new s3.Bucket(this, 'BodyBucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      // Bodies expire with their rows; a day more, so a row never outlives its body.
      lifecycleRules: [{ expiration: Duration.days(Math.ceil(retention.toDays({ integral: false })) + 1) }],
    });
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions::AwsSolutions-S1',
      reason:
        'Objects are written only by the verifier and read only by the processor and principals granted ' +
        'grantReadInbox/grantReadResults, under IAM; object-level access is audited with CloudTrail data events, ' +
        'not a second bucket of access logs.',
    });
    return bucket;
  }

  /** Rotation for every provider that asks for it: one function, a schedule per secret. */
  private createRotation(logRetention: logs.RetentionDays): lambda.IFunction | undefined {
    const rotated = this.providerConfigs.filter((provider) => provider.rotation);
    if (rotated.length === 0) return undefined;
    const rotatedSecrets: RotatedSecretConfig[] = rotated.map((provider) => ({
      secretId: this.signingSecretFor(provider.name).secretArn,
      providerName: provider.name,
      format: provider.secretFormat === 'whsec' ? 'whsec' : 'text',
      ...(provider.rotation!.registerFunction ? { registerFunctionArn: provider.rotation!.registerFunction.functionArn } : {}),
    }));
    const rotator = createHandlerFunction(this, 'Rotator', {
      handler: 'rotator',
      description: 'Webhook inbox rotator: rotates signing secrets in four steps',
      memorySize: 256,
      timeout: Duration.seconds(30),
      logRetention,
      environment: {
        [Env.INBOX_NAME]: this.inboxName,
        [Env.ROTATED_SECRETS]: JSON.stringify(rotatedSecrets),
      },
    });
    for (const provider of rotated) {
      const secret = this.signingSecretFor(provider.name);
      rotator.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: [
            'secretsmanager:DescribeSecret',
            'secretsmanager:GetSecretValue',
            'secretsmanager:PutSecretValue',
            'secretsmanager:UpdateSecretVersionStage',
          ],
          resources: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
        }),
      );
      secret.encryptionKey?.grantEncryptDecrypt(rotator.role);
      provider.rotation!.registerFunction?.grantInvoke(rotator.role);
      new secretsmanager.RotationSchedule(this, `${pascalCase(provider.name)}SigningSecretRotation`, {
        secret,
        rotationLambda: rotator.function,
        automaticallyAfter: provider.rotation!.schedule ?? Duration.days(30),
      });
    }
    return rotator.function;
  }

  /** Exactly these actions on the body bucket's objects under one prefix (keys are digests, unknown at deploy time). */
  private grantObjects(role: iam.IRole, actions: string[], prefix: 'bodies' | 'responses' | 'resources'): void {
    const bucket = this.bodyBucket;
    if (!bucket) return;
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [bucket.arnForObjects(`${prefix}/*`)] }));
    bucket.encryptionKey?.grantEncryptDecrypt(role);
    const cfnBucket = bucket.node.defaultChild as s3.CfnBucket | undefined;
    const bucketArn = cfnBucket ? `<${Stack.of(this).getLogicalId(cfnBucket)}.Arn>` : bucket.bucketArn;
    Validations.of(role).acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::${bucketArn}/${prefix}/*]`,
      reason: `Object keys under ${prefix}/ are content digests, unknown at deploy time; the grant is limited to that prefix and these actions.`,
    });
  }

  /** Exactly these actions on the table itself (no index wildcard), plus its key when it has one. */
  private grantTableActions(role: iam.IRole, table: dynamodb.ITable, actions: string[]): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [table.tableArn] }));
    table.encryptionKey?.grantEncryptDecrypt(role);
  }

  private grantSend(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.workQueue.queueArn] }));
    this.workQueue.encryptionMasterKey?.grantEncryptDecrypt(role);
  }
}

function tableDefaults(settings: InboxTableSettings): Omit<dynamodb.TableProps, 'partitionKey'> {
  return {
    tableName: settings.tableName,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: settings.encryption ?? dynamodb.TableEncryption.AWS_MANAGED,
    encryptionKey: settings.encryptionKey,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: settings.pointInTimeRecovery ?? true },
    deletionProtection: settings.deletionProtection ?? false,
    removalPolicy: settings.removalPolicy ?? RemovalPolicy.RETAIN,
  };
}

/** Collects every problem with the props and throws them in one error. */
function validateProps(props: WebhookInboxProps, providers: WebhookProviderConfig[]): void {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const provider of providers) {
    if (!PROVIDER_NAME_PATTERN.test(provider.name)) {
      problems.push(`providers: "${provider.name}" is not a valid name (lower-case letters, digits, hyphens; at most 63)`);
    }
    if (names.has(provider.name)) problems.push(`providers: "${provider.name}" is served twice`);
    problems.push(...providerProblems(provider));
    names.add(provider.name);
  }
  if (providers.length === 0) problems.push('providers: at least one provider is required');
  if (props.inboxTable && props.inboxTableSettings) problems.push('inboxTableSettings: not allowed with inboxTable');
  if (props.resultsTable && props.resultsTableSettings) problems.push('resultsTableSettings: not allowed with resultsTable');
  if (props.workQueue && (props.workQueueProps || props.deadLetterQueueProps)) {
    problems.push('workQueueProps/deadLetterQueueProps: not allowed with workQueue');
  }
  if (!props.workQueue && props.deadLetterQueue) problems.push('deadLetterQueue: only with workQueue');
  checkRange(problems, 'maxReceiveCount', props.maxReceiveCount, 1, 1000);
  checkRange(problems, 'processorBatchSize', props.processorBatchSize, 1, 10);
  checkRange(problems, 'processorMaxConcurrency', props.processorMaxConcurrency, 2, 1000);
  checkRange(problems, 'sweepBatchSize', props.sweepBatchSize, 1, 1000);
  checkRange(problems, 'maxBodySize (bytes)', props.maxBodySize?.toBytes(), 1, LAMBDA_BODY_LIMIT_BYTES);
  checkRange(problems, 'inlineBodyLimit (bytes)', props.inlineBodyLimit?.toBytes(), 1, INLINE_BODY_LIMIT_BYTES);
  problems.push(...retentionProblems(props, providers));
  if (problems.length > 0) {
    throw new Error(`Invalid WebhookInbox props:\n- ${problems.join('\n- ')}`);
  }
}

/**
 * A row must outlive everything that can still reach it: a message redriven from the dead-letter
 * queue, a provider's late retry or redelivery (which would otherwise be stored and processed a
 * second time), a result the reconciler polls for. The longest of those is the least retention.
 */
function retentionProblems(props: WebhookInboxProps, providers: WebhookProviderConfig[]): string[] {
  const retention = props.retention ?? Duration.days(Defaults.RETENTION_DAYS);
  if (Token.isUnresolved(retention.toSeconds())) return [];
  const floors: { seconds: number; what: string }[] = [];
  if (!props.workQueue) {
    const deadLetterRetention = props.deadLetterQueueProps?.retentionPeriod ?? Duration.days(Defaults.DEAD_LETTER_RETENTION_DAYS);
    floors.push({ seconds: deadLetterRetention.toSeconds(), what: "the dead-letter queue's retention: a message redriven from it must find its row" });
  }
  for (const provider of providers) {
    floors.push({ seconds: PROVIDER_REDELIVERY_SECONDS[provider.adapter] ?? 0, what: `how long ${provider.name} may still deliver an event` });
    if (provider.polling) {
      floors.push({ seconds: pollingRuntimeConfig(provider, provider.polling, 'secret').horizonSeconds, what: `${provider.name}'s polling horizon` });
    }
  }
  const longest = floors.reduce((max, floor) => (floor.seconds > max.seconds ? floor : max), { seconds: 0, what: '' });
  return retention.toSeconds() < longest.seconds
    ? [`retention: must be at least ${Duration.seconds(longest.seconds).toHumanString()} (${longest.what}), got ${retention.toHumanString()}`]
    : [];
}

function checkRange(problems: string[], name: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined || Token.isUnresolved(value)) return;
  if (!Number.isInteger(value) || value < min || value > max) {
    problems.push(`${name}: must be a whole number from ${min} to ${max}, got ${value}`);
  }
}

function pascalCase(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
