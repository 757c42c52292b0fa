import { isRecoveredFromLog, recoveryStallThreshold } from './private/recovery-runtime';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { POLLED_ONLY_ADAPTERS } from './contract';
import { createInboxDashboard } from './private/dashboard';
import { WebhookInboxBase } from './inbox-base';
import { WebhookIngress } from './ingress';
import { WebhookInboxAlarms } from './monitoring';
import { WebhookProvider, WebhookProviderConfig } from './provider';
import { createEndpoint, Endpoint, hookPath } from './private/api';
import { defaultRouteThrottle, routeThrottles } from './private/route-throttle';
import { createInboxFunctions } from './private/functions';
import { createOutputs } from './private/outputs';
import { createArchive } from './private/archive';
import { grantReadArchive } from './private/archive-grants';
import { createBodyBucket, createEventBus, createInboxTable, createResultsTable, createWorkQueues, signingSecretOf, signingSecrets } from './private/resources';
import { createRotation } from './private/rotation';
import { resolveSettings } from './private/settings';
import { validateWebhookInboxProps } from './private/validate-props';
import { broughtResourceProblems, warnOfImportedSecretsWithoutKey } from './private/validate-resources';
import type { WebhookInboxProps } from './webhook-inbox-props';
import { ValidationError } from './private/validation-error';

/**
 * A webhook receiver that never loses an acknowledged delivery, never processes one twice and is
 * immune to arrival order: API Gateway → verifier (signature over the raw bytes, conditional
 * write to the inbox table, 2xx only once durable) → SQS → processor (leased claim, result per
 * job by rule) with a dead-letter queue, and a scheduled reconciler that re-enqueues stranded rows.
 */
export class WebhookInbox extends WebhookInboxBase {
  /** The REST API that receives deliveries, when the ingress is one (its stage is `restApi.deploymentStage`). */
  public readonly restApi?: apigw.RestApi;
  /** The base URL of the endpoint (the custom domain's, when one is set); providers post to `${endpointUrl}/hooks/<name>`. */
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
  /** Secrets Manager's reports of a failed rotation of the inbox's signing secrets, kept for an operator, when a provider asks for rotation. */
  public readonly rotationFailureQueue?: sqs.IQueue;
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
  /**
   * The dead-letter queue's depth alarm (`alarms.deadLetterQueueDepth`), when the dead-letter queue is known.
   * @deprecated it notifies no one: it is a child of `alarms.deadDeliveries`, the composite alarm that pages
   * (and also fires when the processor dead-letters a row). Use `alarms.deadDeliveries`.
   */
  public readonly deadLetterAlarm?: cloudwatch.Alarm;
  /** The inbox's alarms, each with a runbook section in `docs/RUNBOOK.md`. */
  public readonly alarms: WebhookInboxAlarms;
  /** The CloudWatch dashboard of the pipeline, unless disabled. */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** The inbox's name in metric dimensions and logs. */
  public readonly inboxName: string;
  /** The bus decided results are published to, unless `publishEvents` is false. */
  public readonly eventBus?: events.IEventBus;
  /** The archive's bucket (objects under `deliveries/`), when `archive` is set. */
  public readonly archiveBucket?: s3.IBucket;
  /** The Glue table over the archive (`<database>.deliveries`), when `archive` is set. */
  public readonly archiveTable?: glue.CfnTable;

  private readonly endpoint: Endpoint;
  private readonly providerConfigs: WebhookProviderConfig[];
  private readonly secrets: ReadonlyMap<string, secretsmanager.ISecret>;

  constructor(scope: Construct, id: string, props: WebhookInboxProps = {}) {
    super(scope, id);
    this.providerConfigs = (props.providers ?? [WebhookProvider.answerline()]).map((provider) => provider.bind(this));
    validateWebhookInboxProps(this, props, this.providerConfigs);
    const settings = resolveSettings(this, props);
    // At synth, when the tables and queue the user brings are complete.
    this.node.addValidation({ validate: () => broughtResourceProblems(props, settings) });
    this.inboxName = settings.inboxName;
    this.reconcileSchedule = settings.reconcileSchedule;

    // Storage and queues: the user's, or new ones (the construct ids are part of the public contract).
    this.inboxTable = props.inboxTable ?? createInboxTable(this, props.inboxTableSettings);
    this.resultsTable = props.resultsTable ?? createResultsTable(this, props.resultsTableSettings);
    const queues = createWorkQueues(this, props, settings.processorTimeout, settings.maxReceiveCount);
    this.workQueue = queues.workQueue;
    this.deadLetterQueue = queues.deadLetterQueue;
    this.secrets = signingSecrets(this, this.providerConfigs);
    warnOfImportedSecretsWithoutKey(this.providerConfigs, this.secrets);
    this.bodyBucket = props.bodyBucket ?? (settings.maxBodyBytes > settings.inlineBodyBytes ? createBodyBucket(this, settings) : undefined);
    if (settings.publishEvents) this.eventBus = props.eventBus ?? createEventBus(this);
    const archive =
      props.archive &&
      createArchive(
        this,
        props.archive,
        this.inboxName,
        this.providerConfigs.map((provider) => provider.name),
      );
    this.archiveBucket = archive?.bucket;
    this.archiveTable = archive?.table;

    // The functions, each granted exactly what it uses, and the rotation of signing secrets.
    const functions = createInboxFunctions(
      this,
      {
        inboxName: this.inboxName,
        inboxTable: this.inboxTable,
        resultsTable: this.resultsTable,
        workQueue: this.workQueue,
        bodyBucket: this.bodyBucket,
        eventBus: this.eventBus,
        archiveBucket: this.archiveBucket,
        providers: this.providerConfigs,
        secrets: this.secrets,
      },
      settings,
      props,
    );
    this.verifierFunction = functions.verifier;
    this.processorFunction = functions.processor;
    this.reconcilerFunction = functions.reconciler;
    this.reconcileRule = functions.reconcileRule;
    const rotation = createRotation(this, this.inboxName, this.providerConfigs, this.secrets, settings.logRetention, settings.tracing);
    this.rotatorFunction = rotation?.rotator;
    this.rotationFailureQueue = rotation?.failureQueue;

    // The endpoint, then what watches the pipeline and what the operator and the CLI read.
    this.endpoint = createEndpoint(
      this,
      props.ingress ?? WebhookIngress.httpApi(),
      this.verifierFunction,
      routeThrottles(props, this.providerConfigs),
      defaultRouteThrottle(props, this.providerConfigs),
      settings.logRetention,
    );
    this.restApi = this.endpoint.restApi;
    this.endpointUrl = this.endpoint.url;

    this.alarms = new WebhookInboxAlarms(this, 'Alarms', { ...props.alarms, inbox: this });
    if (this.providerConfigs.some((provider) => provider.polling && !isRecoveredFromLog(provider))) this.alarms.watchSubmissions();
    if (this.providerConfigs.some(isRecoveredFromLog)) this.alarms.watchRecovery(recoveryStallThreshold(this.providerConfigs));
    this.deadLetterAlarm = this.alarms.deadLetterQueueDepth;
    if (props.dashboard?.enabled ?? true) {
      this.dashboard = createInboxDashboard(this, 'Dashboard', this, this.alarms.all, props.dashboard);
    }
    createOutputs(
      this,
      this.providerConfigs,
      this.secrets,
      this.endpoint.domainTarget,
      settings.resultRetention,
      settings.pendingIndexShards,
      this.archiveBucket,
    );
  }

  /**
   * Lets a principal record submissions in the ledger (see the base's); the inbox then has a
   * submission ledger, so its alarms watch the recorded submissions (`alarms.watchSubmissions()`).
   */
  public override grantRecordSubmission(grantee: iam.IGrantable): iam.Grant {
    this.alarms.watchSubmissions();
    return super.grantRecordSubmission(grantee);
  }

  /**
   * Lets a principal read the archive: list it and get its objects (`s3:ListBucket` on the
   * `deliveries/` prefix, `s3:GetObject` under it, and decrypt with its KMS key), as
   * `webhook-inbox search` and `export` do; the Glue table's metadata too, for Athena.
   * Throws when the inbox has no archive.
   */
  public grantReadArchive(grantee: iam.IGrantable): iam.Grant {
    if (!this.archiveBucket || !this.archiveTable) throw new ValidationError('grantReadArchive: this inbox has no archive; set the archive prop', this);
    return grantReadArchive(this, this.archiveBucket, this.archiveTable, grantee);
  }

  /** The HTTP API that receives deliveries; an inbox whose ingress is a REST API has none, and reading it throws (use `restApi`). */
  public get api(): apigwv2.HttpApi {
    return httpPart(this, this.endpoint.httpApi, 'api');
  }

  /** The HTTP API's `$default` stage (throttling, access logs); reading it throws when the ingress is a REST API (use `restApi.deploymentStage`). */
  public get stage(): apigwv2.HttpStage {
    return httpPart(this, this.endpoint.httpStage, 'stage');
  }

  /** The URL a provider posts to (a polled-only provider posts nothing: it has none). */
  public urlFor(providerName: string): string {
    const provider = this.providerConfigs.find((each) => each.name === providerName);
    if (!provider) throw new ValidationError(`this inbox serves no provider named "${providerName}"`, this);
    if (POLLED_ONLY_ADAPTERS.includes(provider.adapter)) throw new ValidationError(`"${providerName}" is polled only: it posts nothing and has no URL`, this);
    return `${this.endpointUrl}${hookPath(providerName)}`;
  }

  /** The signing secret of a provider this inbox serves (an SNS provider has none: its requests name their certificate; nor has a polled-only one). */
  public signingSecretFor(providerName: string): secretsmanager.ISecret {
    return signingSecretOf(this, this.secrets, providerName);
  }
}

/** A part only the HTTP API ingress has, or an error that says where the REST API's counterpart is. */
function httpPart<T>(inbox: Construct, part: T | undefined, name: string): T {
  if (part === undefined)
    throw new ValidationError(
      `${name}: this inbox's ingress is a REST API, which has no HTTP API ${name}; use restApi (its stage is restApi.deploymentStage)`,
      inbox,
    );
  return part;
}
