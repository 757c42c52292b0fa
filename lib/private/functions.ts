import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ARCHIVE_PREFIX, BodyPrefix, Defaults, GitHubFacts, TableSchema } from '../contract';
import { HandlerEnvironments, handlerEnvironments } from './handler-environment';
import type { WebhookProviderConfig } from '../provider';
import { pollingRuntimeConfig, providerRuntimeConfigOf } from './provider-runtime';
import { recoveredProviders, recoveryRuntimeConfig, isRecoveredFromLog } from './recovery-runtime';
import type { WebhookInboxProps } from '../webhook-inbox-props';
import { grantInvokeFunction, grantObjects, grantReadSecret, grantReadSigningSecrets, grantSend, grantTableActions } from './grants';
import { createHandlerFunction } from './handler-function';
import type { InboxSettings } from './settings';

/** The resources the inbox's functions are wired to. */
export interface InboxResources {
  readonly inboxName: string;
  readonly inboxTable: dynamodb.ITable;
  readonly resultsTable: dynamodb.ITable;
  readonly workQueue: sqs.IQueue;
  readonly bodyBucket?: s3.IBucket;
  readonly eventBus?: events.IEventBus;
  /** Where the processor archives processed deliveries, when the archive is on. */
  readonly archiveBucket?: s3.IBucket;
  readonly providers: readonly WebhookProviderConfig[];
  /** Each provider's signing secret, by provider name. */
  readonly secrets: ReadonlyMap<string, secretsmanager.ISecret>;
}

/** The props of the functions themselves: the user's overrides and processing code. */
export type FunctionProps = Pick<WebhookInboxProps, 'verifierFunctionProps' | 'processorFunctionProps' | 'reconcilerFunctionProps' | 'processingFunction'>;

/** The pipeline's three functions, and the schedule of the reconciler. */
export interface InboxFunctions {
  readonly verifier: lambda.IFunction;
  readonly processor: lambda.IFunction;
  readonly reconciler: lambda.IFunction;
  readonly reconcileRule: events.Rule;
}

/**
 * The verifier, the processor (driven by the work queue) and the reconciler (on its schedule),
 * each with its own role granted exactly what it uses, and configured through the contract's
 * environment variables.
 */
export function createInboxFunctions(scope: Construct, resources: InboxResources, settings: InboxSettings, props: FunctionProps): InboxFunctions {
  const environments = inboxEnvironments(resources, settings, props.processingFunction);
  const verifier = createVerifier(scope, resources, settings, props, environments);
  const processor = createProcessor(scope, resources, settings, props, environments);
  const { reconciler, reconcileRule } = createReconciler(scope, resources, settings, props, environments);
  return { verifier, processor, reconciler, reconcileRule };
}

/** The providers the reconciler polls for recorded submissions never delivered. */
function polledProviders(resources: InboxResources): WebhookProviderConfig[] {
  return resources.providers.filter((provider) => provider.polling && !isRecoveredFromLog(provider));
}

function inboxEnvironments(resources: InboxResources, settings: InboxSettings, processingFunction?: lambda.IFunction): HandlerEnvironments {
  return handlerEnvironments({
    inboxName: resources.inboxName,
    inboxTable: resources.inboxTable.tableName,
    resultsTable: resources.resultsTable.tableName,
    workQueueUrl: resources.workQueue.queueUrl,
    providers: resources.providers.map((provider) => providerRuntimeConfigOf(provider, resources.secrets.get(provider.name)?.secretArn)),
    maxBodyBytes: settings.maxBodyBytes,
    bodyBucket: resources.bodyBucket?.bucketName,
    archiveBucket: resources.archiveBucket?.bucketName,
    inlineBodyBytes: settings.inlineBodyBytes,
    retentionSeconds: settings.retention.toSeconds(),
    resultRetentionSeconds: settings.resultRetention.toSeconds(),
    secretCacheSeconds: settings.secretCacheTtl.toSeconds(),
    leaseSeconds: settings.processorTimeout.toSeconds(),
    maxReceiveCount: settings.maxReceiveCount,
    sweepAfterSeconds: settings.sweepAfter.toSeconds(),
    pendingShards: settings.pendingIndexShards,
    polling: polledProviders(resources).map((provider) => pollingRuntimeConfig(provider, provider.polling!, provider.polling!.apiKeySecret.secretArn)),
    recovery: recoveredProviders(resources.providers).map((provider) =>
      recoveryRuntimeConfig(provider, provider.polling!.apiKeySecret.secretArn, resources.secrets.get(provider.name)?.secretArn),
    ),
    pollBatchSize: settings.pollBatchSize,
    deadlineWarningSeconds: settings.deadlineWarning.toSeconds(),
    effectBusName: resources.eventBus?.eventBusName,
    effectFunctionArn: processingFunction?.functionArn,
    rejectionRecordsPerMinute: settings.rejectionRecordsPerMinute,
    rejectionSamplePercent: settings.rejectionRecordSamplePercent,
    rejectionRetentionSeconds: settings.rejectionRecordRetention.toSeconds(),
    rejectionRecordBudgetMs: Defaults.REJECTION_RECORD_BUDGET_MS,
    ...(settings.breaker ? { breaker: settings.breaker } : {}),
    ...(settings.processorMaxRowsPerSecond !== undefined
      ? { processorRate: { rowsPerSecond: settings.processorMaxRowsPerSecond, maxConcurrency: settings.processorMaxConcurrency } }
      : {}),
    metricsPerProvider: settings.metricsPerProvider,
  });
}

/** Verifies signatures and admits deliveries: writes the inbox, sends to the queue, reads the signing secrets. */
function createVerifier(
  scope: Construct,
  resources: InboxResources,
  settings: InboxSettings,
  props: FunctionProps,
  environments: HandlerEnvironments,
): lambda.IFunction {
  const verifier = createHandlerFunction(scope, 'Verifier', {
    handler: 'verifier',
    description: 'Webhook inbox verifier: verifies signatures and admits deliveries durably',
    memorySize: Defaults.VERIFIER_MEMORY_MB,
    timeout: settings.verifierTimeout,
    logRetention: settings.logRetention,
    tracing: settings.tracing,
    overrides: props.verifierFunctionProps,
    overridesProp: 'verifierFunctionProps',
    settings: environments.verifier,
    secrets: [...resources.secrets.values()],
  });
  // PutItem, GetItem and UpdateItem also serve the rejection records, their counters and the source-hash key.
  grantTableActions(verifier.role, resources.inboxTable, ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
  grantSend(verifier.role, resources.workQueue);
  grantReadSigningSecrets(scope, [...resources.secrets.values()], verifier.role);
  grantObjects(scope, resources.bodyBucket, verifier.role, ['s3:PutObject'], BodyPrefix.BODIES);
  return verifier.function;
}

/** Claims rows and decides each job's result; sends the effects (events, the user's function). */
function createProcessor(
  scope: Construct,
  resources: InboxResources,
  settings: InboxSettings,
  props: FunctionProps,
  environments: HandlerEnvironments,
): lambda.IFunction {
  const processor = createHandlerFunction(scope, 'Processor', {
    handler: 'processor',
    description: 'Webhook inbox processor: claims rows and decides each job result',
    memorySize: Defaults.PROCESSOR_MEMORY_MB,
    timeout: settings.processorTimeout,
    logRetention: settings.logRetention,
    tracing: settings.tracing,
    overrides: props.processorFunctionProps,
    overridesProp: 'processorFunctionProps',
    settings: environments.processor,
    secrets: resources.providers.flatMap((provider) => (provider.authoritativeRead ? [provider.authoritativeRead.apiKeySecret] : [])),
  });
  grantTableActions(processor.role, resources.inboxTable, ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem']);
  // GetItem: a losing offer and a retried winner read the job's stored winner.
  grantTableActions(processor.role, resources.resultsTable, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
  grantObjects(scope, resources.bodyBucket, processor.role, ['s3:GetObject', 's3:PutObject'], BodyPrefix.BODIES);
  grantObjects(scope, resources.bodyBucket, processor.role, ['s3:PutObject'], BodyPrefix.RESPONSES);
  grantObjects(scope, resources.bodyBucket, processor.role, ['s3:PutObject'], BodyPrefix.RESOURCES);
  grantObjects(scope, resources.archiveBucket, processor.role, ['s3:PutObject'], ARCHIVE_PREFIX);
  if (resources.eventBus) resources.eventBus.grantPutEventsTo(processor.role);
  if (props.processingFunction) grantInvokeFunction(props.processingFunction, processor.role);
  for (const provider of resources.providers) if (provider.authoritativeRead) grantReadSecret(provider.authoritativeRead.apiKeySecret, processor.role);
  processor.function.addEventSource(
    new SqsEventSource(resources.workQueue, {
      batchSize: settings.processorBatchSize,
      // A FIFO queue takes no window (and is refused at synth, with its reason).
      maxBatchingWindow: resources.workQueue.fifo ? undefined : settings.processorBatchingWindow,
      maxConcurrency: settings.processorMaxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
  return processor.function;
}

/** Re-enqueues stranded rows, keeps the ledger and polls providers; runs on the reconcile schedule. */
function createReconciler(
  scope: Construct,
  resources: InboxResources,
  settings: InboxSettings,
  props: FunctionProps,
  environments: HandlerEnvironments,
): { reconciler: lambda.IFunction; reconcileRule: events.Rule } {
  const reconciler = createHandlerFunction(scope, 'Reconciler', {
    handler: 'reconciler',
    description: 'Webhook inbox reconciler: re-enqueues stranded rows and polls for undelivered results',
    memorySize: Defaults.RECONCILER_MEMORY_MB,
    timeout: settings.reconcilerTimeout,
    logRetention: settings.logRetention,
    tracing: settings.tracing,
    overrides: props.reconcilerFunctionProps,
    overridesProp: 'reconcilerFunctionProps',
    settings: environments.reconciler,
    secrets: [
      ...[...polledProviders(resources), ...recoveredProviders(resources.providers)].map((provider) => provider.polling!.apiKeySecret),
      ...recoveredProviders(resources.providers).flatMap((provider) => {
        const signingSecret = resources.secrets.get(provider.name);
        return provider.adapter === GitHubFacts.kind && signingSecret ? [signingSecret] : [];
      }),
    ],
  });
  const { pendingIndex, awaitingIndex, jobRefIndex } = TableSchema.inbox;
  reconciler.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:Query'],
      resources: [pendingIndex, awaitingIndex, jobRefIndex].map((index) => `${resources.inboxTable.tableArn}/index/${index.name}`),
    }),
  );
  // BatchGetItem: the sweep reads the status of the rows its pending-index entries name.
  grantTableActions(reconciler.role, resources.inboxTable, ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
  grantSend(reconciler.role, resources.workQueue);
  grantObjects(scope, resources.bodyBucket, reconciler.role, ['s3:PutObject'], BodyPrefix.BODIES);
  for (const provider of polledProviders(resources)) grantReadSecret(provider.polling!.apiKeySecret, reconciler.role);
  for (const provider of recoveredProviders(resources.providers)) {
    grantReadSecret(provider.polling!.apiKeySecret, reconciler.role);
    // GitHub's recorded signature is checked over the payload fetched, with the signing secret.
    const signingSecret = resources.secrets.get(provider.name);
    if (provider.adapter === GitHubFacts.kind && signingSecret) grantReadSecret(signingSecret, reconciler.role);
  }
  // ResourceUnavailable events, for an operator's decision.
  if (resources.eventBus) resources.eventBus.grantPutEventsTo(reconciler.role);
  const reconcileRule = new events.Rule(scope, 'ReconcileSchedule', {
    description: 'Runs the webhook inbox reconciler',
    schedule: settings.reconcileSchedule,
    // EventBridge retries a failed invocation twice; the next scheduled run is the real retry.
    targets: [new targets.LambdaFunction(reconciler.function, { retryAttempts: 2 })],
  });
  return { reconciler: reconciler.function, reconcileRule };
}
