import { Duration } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { BodyPrefix, EffectEvent, MonitoringDefaults } from './contract';
import { WebhookInboxMetrics } from './inbox-metrics';
import type { IWebhookInbox } from './inbox-interface';
import { effectRule } from './private/effect-rule';
import { endpointApi } from './private/endpoint-api';
import { grantObjects, grantReadItems, grantSubmissionRecords } from './private/grants';

/** The default period of the metrics, and the shorter one of the dead-letter queue's depth. */
const METRIC_PERIOD = Duration.minutes(MonitoringDefaults.METRIC_PERIOD_MINUTES);
const DEAD_LETTER_METRIC_PERIOD = Duration.minutes(MonitoringDefaults.DEAD_LETTER_METRIC_PERIOD_MINUTES);

/**
 * What every webhook inbox has, implemented once over its resources: the grants, the effect
 * rules and every metric (those the handlers emit from `WebhookInboxMetrics`, those of its AWS
 * resources here). `WebhookInbox` extends it with the resources it creates.
 */
export abstract class WebhookInboxBase extends WebhookInboxMetrics implements IWebhookInbox {
  public abstract readonly endpointUrl: string;
  public abstract readonly api: apigwv2.HttpApi;
  public abstract readonly restApi?: apigw.RestApi;
  public abstract readonly inboxTable: dynamodb.ITable;
  public abstract readonly resultsTable: dynamodb.ITable;
  public abstract readonly workQueue: sqs.IQueue;
  public abstract readonly deadLetterQueue?: sqs.IQueue;
  public abstract readonly rotationFailureQueue?: sqs.IQueue;
  public abstract readonly bodyBucket?: s3.IBucket;
  public abstract readonly eventBus?: events.IEventBus;
  public abstract readonly verifierFunction: lambda.IFunction;
  public abstract readonly processorFunction: lambda.IFunction;
  public abstract readonly reconcilerFunction: lambda.IFunction;
  public abstract readonly reconcileSchedule: events.Schedule;

  /**
   * Lets a principal read the job results: GetItem, BatchGetItem and Query on the results table,
   * and GetObject of results too large for it (`responses/` in the body bucket).
   */
  public grantReadResults(grantee: iam.IGrantable): iam.Grant {
    grantObjects(this, this.bodyBucket, grantee, ['s3:GetObject'], BodyPrefix.RESPONSES);
    return grantReadItems(this.resultsTable, grantee);
  }

  /**
   * Lets a principal read the inbox rows and their bodies (raw content: grant with care): GetItem,
   * BatchGetItem and Query on the inbox table (not its indexes), and GetObject of large bodies (`bodies/`).
   */
  public grantReadInbox(grantee: iam.IGrantable): iam.Grant {
    grantObjects(this, this.bodyBucket, grantee, ['s3:GetObject'], BodyPrefix.BODIES);
    return grantReadItems(this.inboxTable, grantee);
  }

  /**
   * Lets a principal record submissions in the ledger (the `SubmissionLedger` client of
   * `cdk-webhook-inbox/client`): PutItem on the inbox table, only of items whose partition key
   * is a submission's (`dynamodb:LeadingKeys`) and whose attributes are a submission's
   * (`dynamodb:Attributes`), returning no old item, so it can neither forge nor overwrite a delivery.
   */
  public grantRecordSubmission(grantee: iam.IGrantable): iam.Grant {
    return grantSubmissionRecords(this.inboxTable, grantee);
  }

  /**
   * A rule for each decided job result (`JobResultDecided`: once per change of a job's winner).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  public onJobResult(id: string, options: events.OnEventOptions = {}): events.Rule {
    return effectRule(this, this, id, EffectEvent.JOB_RESULT_DECIDED, options);
  }

  /**
   * A rule for each processed event of providers without jobs (`WebhookReceived`: Stripe, GitHub, ...).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  public onWebhookReceived(id: string, options: events.OnEventOptions = {}): events.Rule {
    return effectRule(this, this, id, EffectEvent.WEBHOOK_RECEIVED, options);
  }

  /**
   * A rule for each recorded submission whose provider resource is gone unread (`ResourceUnavailable`:
   * polled 404/410, or its deadline passed): the operator's decision, never a regeneration.
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  public onResourceUnavailable(id: string, options: events.OnEventOptions = {}): events.Rule {
    return effectRule(this, this, id, EffectEvent.RESOURCE_UNAVAILABLE, options);
  }

  /**
   * A rule for each request of a polled batch that reached its terminal state (`BatchChildSettled`: once per request).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  public onBatchChildSettled(id: string, options: events.OnEventOptions = {}): events.Rule {
    return effectRule(this, this, id, EffectEvent.BATCH_CHILD_SETTLED, options);
  }

  /**
   * A rule for each polled batch whose every result was recorded (`BatchSettled`: its summary, once per batch).
   * @param id the rule's construct id
   * @param options target and rule settings, as for any `onEvent` of aws-cdk-lib
   */
  public onBatchSettled(id: string, options: events.OnEventOptions = {}): events.Rule {
    return effectRule(this, this, id, EffectEvent.BATCH_SETTLED, options);
  }

  /** Messages waiting in the work queue (`AWS/SQS` `ApproximateNumberOfMessagesVisible`). @default - maximum over 5 minutes */
  public metricWorkQueueDepth(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.workQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: METRIC_PERIOD, ...props });
  }

  /** Age in seconds of the oldest work message (`AWS/SQS` `ApproximateAgeOfOldestMessage`). @default - maximum over 5 minutes */
  public metricOldestMessageAge(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.workQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: METRIC_PERIOD, ...props });
  }

  /**
   * Messages in the dead-letter queue (`AWS/SQS` `ApproximateNumberOfMessagesVisible`); undefined
   * when the dead-letter queue is unknown. @default - maximum over 1 minute
   */
  public metricDeadLetterQueueDepth(props?: cloudwatch.MetricOptions): cloudwatch.Metric | undefined {
    return this.deadLetterQueue?.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: DEAD_LETTER_METRIC_PERIOD, ...props });
  }

  /**
   * Reports of a failed rotation of the inbox's signing secrets waiting for an operator (the
   * rotation failure queue's `AWS/SQS` `ApproximateNumberOfMessagesVisible`); undefined when no
   * provider has `rotation`. @default - maximum over 5 minutes
   */
  public metricRotationFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric | undefined {
    return this.rotationFailureQueue?.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: METRIC_PERIOD, ...props });
  }

  /** Responses of the endpoint with a 5xx status (`AWS/ApiGateway` `5xx`, dimension `ApiId`; for a REST API `5XXError`, dimensions `ApiName` and `Stage`). @default - sum over 5 minutes */
  public metricVerifierServerErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return endpointApi(this).metricServerError({ statistic: 'Sum', period: METRIC_PERIOD, ...props });
  }

  /** Failed reconciler invocations (`AWS/Lambda` `Errors`, dimension `FunctionName`). @default - sum over 5 minutes */
  public metricReconcilerErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.reconcilerFunction.metricErrors({ statistic: 'Sum', period: METRIC_PERIOD, ...props });
  }

  /** Reconciler invocations, failed ones included (`AWS/Lambda` `Invocations`, dimension `FunctionName`). @default - sum over 5 minutes */
  public metricReconcilerInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.reconcilerFunction.metricInvocations({ statistic: 'Sum', period: METRIC_PERIOD, ...props });
  }
}
