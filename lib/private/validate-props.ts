import { Annotations, Duration, Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { breakerProblems, Defaults, Limits, POLLED_ONLY_ADAPTERS, PROVIDER_NAME_PATTERN, PROVIDER_REDELIVERY_SECONDS } from '../contract';
import type { WebhookProviderConfig } from '../provider';
import { pollingRuntimeConfig, providerProblems } from './provider-runtime';
import { isRecoveredFromLog } from './recovery-runtime';
import type { TableSettings, WebhookInboxProps } from '../webhook-inbox-props';
import { providerRoutes, routeThrottleProblems } from './route-throttle';
import { webAclRateLimitProblems } from './web-acl';
import { rateSeconds } from './schedule-rate';
import { ValidationError } from './validation-error';
import { breakerOf, deadLetterRetentionOf, functionTimeoutsOf, isRestApi, resultRetentionOf, retentionOf, sweepAfterFloorOf, sweepAfterOf } from './settings';

/**
 * Checks the props of a WebhookInbox once, in its constructor, before anything is created:
 * collects every problem (the providers' names and schemes, props that exclude each other, ranges,
 * the least retention) and throws them in one error naming each prop. Unresolved tokens are not
 * checked.
 */
export function validateWebhookInboxProps(scope: IConstruct, props: WebhookInboxProps, providers: readonly WebhookProviderConfig[]): void {
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
  checkRange(problems, 'maxReceiveCount', props.maxReceiveCount, Limits.MAX_RECEIVE_COUNT);
  checkRange(problems, 'processorBatchSize', props.processorBatchSize, Limits.PROCESSOR_BATCH_SIZE);
  checkRange(problems, 'processorMaxConcurrency', props.processorMaxConcurrency, Limits.PROCESSOR_MAX_CONCURRENCY);
  checkRange(
    problems,
    'processorBatchingWindow (seconds)',
    props.processorBatchingWindow?.toSeconds({ integral: false }),
    Limits.PROCESSOR_BATCHING_WINDOW_SECONDS,
  );
  checkRange(problems, 'pendingIndexShards', props.pendingIndexShards, Limits.PENDING_INDEX_SHARDS);
  const maxBodyBytes = isRestApi(props) ? Limits.REST_API_MAX_BODY_BYTES : Limits.MAX_BODY_BYTES;
  checkRange(problems, `maxBodySize (bytes${isRestApi(props) ? ', REST API ingress' : ''})`, props.maxBodySize?.toBytes(), { MIN: 1, MAX: maxBodyBytes });
  checkRange(problems, 'inlineBodyLimit (bytes)', props.inlineBodyLimit?.toBytes(), { MIN: 1, MAX: Limits.INLINE_BODY_BYTES });
  checkRange(problems, 'rejectionRecordsPerMinute', props.rejectionRecordsPerMinute, Limits.REJECTION_RECORDS_PER_MINUTE);
  checkRange(problems, 'rejectionRecordSamplePercent', props.rejectionRecordSamplePercent, Limits.REJECTION_SAMPLE_PERCENT);
  checkRange(problems, 'rejectionRecordRetention (days)', props.rejectionRecordRetention?.toDays({ integral: false }), Limits.REJECTION_RETENTION_DAYS);
  problems.push(...warmThroughputProblems('inboxTableSettings', props.inboxTableSettings));
  problems.push(...warmThroughputProblems('resultsTableSettings', props.resultsTableSettings));
  problems.push(...ingressProblems(props, providers));
  problems.push(...routeThrottleProblems(props, providers));
  problems.push(...verifierTimeoutProblems(props));
  problems.push(...sweepAfterProblems(props));
  problems.push(...retentionProblems(props, providers));
  problems.push(...resultRetentionProblems(props));
  problems.push(...deadlineWarningProblems(props));
  problems.push(...flowControlProblems(props));
  if (problems.length > 0) {
    throw new ValidationError(`Invalid WebhookInbox props:\n- ${problems.join('\n- ')}`, scope);
  }
  if (props.sweepBatchSize !== undefined) {
    Annotations.of(scope).addWarningV2(
      SWEEP_BATCH_SIZE_IGNORED,
      'sweepBatchSize is deprecated and ignored: the sweep enqueues every stranded row it finds, as many as the reconciler run has time for. Remove the prop.',
    );
  }
  if (props.processingFunction !== undefined && props.publishEvents === undefined) {
    // A default the user may not expect: said where they meet it, at synth.
    Annotations.of(scope).addInfo(
      'processingFunction is set and each result is also published to the inbox event bus (publishEvents defaults to true); set publishEvents: false if your function is the only consumer, or true to keep the bus and silence this message.',
    );
  }
}

/**
 * The circuit breaker's options in their ranges (`breakerProblems`, which the processor checks
 * again at cold start), and a rate an invocation can keep within its timeout.
 */
function flowControlProblems(props: WebhookInboxProps): string[] {
  const problems: string[] = [];
  const breaker = breakerOf(props).breaker;
  const resolved = breaker && Object.fromEntries(Object.entries(breaker).filter(([, value]) => !Token.isUnresolved(value)));
  if (resolved)
    problems.push(
      ...breakerProblems(resolved).map(
        (problem) => `circuitBreaker.${problem.replace(/^windowSeconds/, 'window (seconds)').replace(/^coolDownSeconds/, 'coolDown (seconds)')}`,
      ),
    );
  const rate = props.processorMaxRowsPerSecond;
  if (rate === undefined || Token.isUnresolved(rate)) return problems;
  if (!(rate > 0) || !Number.isFinite(rate)) return [...problems, `processorMaxRowsPerSecond: must be a positive number, got ${rate}`];
  const batch = props.processorBatchSize ?? Defaults.PROCESSOR_BATCH_SIZE;
  const concurrency = props.processorMaxConcurrency ?? Defaults.PROCESSOR_MAX_CONCURRENCY;
  const timeoutSeconds = functionTimeoutsOf(props).processorTimeout.toSeconds();
  if ([batch, concurrency, timeoutSeconds].some((value) => Token.isUnresolved(value))) return problems;
  const batchSeconds = (batch * concurrency) / rate;
  if (batchSeconds >= timeoutSeconds) {
    problems.push(
      `processorMaxRowsPerSecond: a batch of ${batch} at concurrency ${concurrency} must last ${batchSeconds} s at ${rate} a second, not shorter than the processor's ${timeoutSeconds} s timeout: raise the rate, lower processorBatchSize or processorMaxConcurrency, or lengthen processorFunctionProps.timeout`,
    );
  }
  return problems;
}

/** DynamoDB refuses a warm throughput below what a new on-demand table serves anyway. */
function warmThroughputProblems(prop: string, settings: TableSettings | undefined): string[] {
  const warm = settings?.warmThroughput;
  if (!warm) return [];
  const floors = [
    { name: 'readUnitsPerSecond', value: warm.readUnitsPerSecond, min: Limits.WARM_READ_UNITS_PER_SECOND_MIN },
    { name: 'writeUnitsPerSecond', value: warm.writeUnitsPerSecond, min: Limits.WARM_WRITE_UNITS_PER_SECOND_MIN },
  ];
  const problems = floors
    .filter(({ value, min }) => value !== undefined && !Token.isUnresolved(value) && (!Number.isInteger(value) || value < min))
    .map(
      ({ name, value, min }) =>
        `${prop}.warmThroughput.${name}: must be a whole number of at least ${min.toLocaleString('en-US')} (what a new on-demand table serves already), got ${value}`,
    );
  if (warm.readUnitsPerSecond === undefined && warm.writeUnitsPerSecond === undefined) {
    problems.push(`${prop}.warmThroughput: give readUnitsPerSecond, writeUnitsPerSecond or both`);
  }
  return problems;
}

/** The id of the warning that `sweepBatchSize` is ignored. */
const SWEEP_BATCH_SIZE_IGNORED = 'cdk-webhook-inbox:sweepBatchSizeIgnored';

/** A REST API needs a method to deploy, and AWS WAF associates a regional web ACL only. */
function ingressProblems(props: WebhookInboxProps, providers: readonly WebhookProviderConfig[]): string[] {
  if (!isRestApi(props)) return [];
  const problems: string[] = [];
  if (providers.every((provider) => POLLED_ONLY_ADAPTERS.includes(provider.adapter))) {
    problems.push('ingress: a REST API needs a provider that posts (every provider here is polled only)');
  }
  const webAclArn = props.ingress?.webAclArn;
  const rateLimit = props.ingress?.rateLimit;
  if (rateLimit) problems.push(...webAclRateLimitProblems(rateLimit, webAclArn, [...new Set(providerRoutes(providers).map((route) => route.providerName))]));
  if (webAclArn !== undefined && !Token.isUnresolved(webAclArn) && !REGIONAL_WEB_ACL_ARN.test(webAclArn)) {
    problems.push(
      `ingress.webAclArn: must be the ARN of a REGIONAL AWS WAF web ACL (arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>), got "${webAclArn}"`,
    );
  }
  return problems;
}

/**
 * API Gateway answers 504 once its integration times out; a verifier allowed to run longer would
 * then store a delivery the provider was told failed (it retries, and the retry is a duplicate).
 */
function verifierTimeoutProblems(props: WebhookInboxProps): string[] {
  const timeout = props.verifierFunctionProps?.timeout;
  if (!timeout || Token.isUnresolved(timeout.toSeconds())) return [];
  const [limit, api] = isRestApi(props)
    ? [Limits.REST_API_INTEGRATION_TIMEOUT_SECONDS, 'a REST API']
    : [Limits.HTTP_API_INTEGRATION_TIMEOUT_SECONDS, 'an HTTP API'];
  return timeout.toSeconds() > limit
    ? [
        `verifierFunctionProps.timeout: must be at most ${limit} seconds, the integration timeout of ${api}: API Gateway answers 504 ` +
          `after it, while the verifier may still store the delivery; got ${timeout.toHumanString()}`,
      ]
    : [];
}

/** A web ACL an API Gateway stage can be associated with: scope REGIONAL (a CLOUDFRONT one is `global/`). */
const REGIONAL_WEB_ACL_ARN = /^arn:aws[a-z-]*:wafv2:[a-z0-9-]+:\d{12}:regional\/webacl\/[\w-]+\/[\w-]+$/;

/**
 * A row must outlive everything that can still reach it: a message redriven from the dead-letter
 * queue, a provider's late retry or redelivery, a replay still inside a provider's timestamp
 * tolerances (either would otherwise be stored and processed a second time), a result the
 * reconciler polls for, the sweep of a row whose enqueue failed (which would otherwise never be
 * processed). The longest of those is the least retention.
 */
function retentionProblems(props: WebhookInboxProps, providers: readonly WebhookProviderConfig[]): string[] {
  const retention = retentionOf(props);
  if (Token.isUnresolved(retention.toSeconds())) return [];
  const floors: { seconds: number; what: string }[] = [];
  if (!props.workQueue) {
    floors.push({ seconds: deadLetterRetentionOf(props).toSeconds(), what: "the dead-letter queue's retention: a message redriven from it must find its row" });
  }
  for (const provider of providers) {
    floors.push({ seconds: PROVIDER_REDELIVERY_SECONDS[provider.adapter] ?? 0, what: `how long ${provider.name} may still deliver an event` });
    const [past, future] = [provider.pastTolerance, provider.futureTolerance];
    if (!Token.isUnresolved(past.toSeconds()) && !Token.isUnresolved(future.toSeconds())) {
      floors.push({
        seconds: past.toSeconds() + future.toSeconds(),
        what:
          `${provider.name}'s pastTolerance (${past.toHumanString()}) + futureTolerance (${future.toHumanString()}): ` +
          'a replay signed inside them must find its row, or it is processed again',
      });
    }
    if (provider.polling && !isRecoveredFromLog(provider)) {
      floors.push({ seconds: pollingRuntimeConfig(provider, provider.polling, 'secret').horizonSeconds, what: `${provider.name}'s polling horizon` });
    }
  }
  const sweepAfter = sweepAfterOf(props);
  const rate = reconcileRateSeconds(props);
  if (!Token.isUnresolved(sweepAfter.toSeconds())) {
    floors.push({
      seconds: sweepAfter.toSeconds() + (rate ?? 0),
      what:
        `sweepAfter (${sweepAfter.toHumanString()})${rate ? ` + the reconcile schedule's rate (${Duration.seconds(rate).toHumanString()})` : ''}: ` +
        'a row whose enqueue failed is enqueued again only then',
    });
  }
  const longest = floors.reduce((max, floor) => (floor.seconds > max.seconds ? floor : max), { seconds: 0, what: '' });
  return retention.toSeconds() < longest.seconds
    ? [`retention: must be at least ${Duration.seconds(longest.seconds).toHumanString()} (${longest.what}), got ${retention.toHumanString()}`]
    : [];
}

/**
 * A job's result outlives the deliveries that decided it: one still kept (a redelivery within
 * `retention` is a duplicate of it, a replay processes it again) must find its job's result, or it
 * is decided anew as a new job's.
 */
function resultRetentionProblems(props: WebhookInboxProps): string[] {
  const [resultRetention, retention] = [resultRetentionOf(props), retentionOf(props)];
  if (Token.isUnresolved(resultRetention.toSeconds()) || Token.isUnresolved(retention.toSeconds())) return [];
  return resultRetention.toSeconds() < retention.toSeconds()
    ? [
        `resultRetention: must be at least retention (${retention.toHumanString()}): a delivery still kept, replayed or redelivered, ` +
          `must find its job's result, or the job is decided anew; got ${resultRetention.toHumanString()}`,
      ]
    : [];
}

/**
 * A `sweepAfter` shorter than the floor (`sweepAfterFloorOf`) lets a sweep move its watermark past a
 * row whose write is still on its way to the pending index: the row would never be swept.
 */
function sweepAfterProblems(props: WebhookInboxProps): string[] {
  const sweepAfter = props.sweepAfter;
  const floor = sweepAfterFloorOf(props);
  if (!sweepAfter || !floor || Token.isUnresolved(sweepAfter.toSeconds()) || sweepAfter.toSeconds() >= floor.seconds) return [];
  return [
    `sweepAfter: must be at least ${Duration.seconds(floor.seconds).toHumanString()}, the ${floor.functionName}'s timeout ` +
      `(${floor.timeout.toHumanString()}) plus ${Limits.SWEEP_AFTER_MARGIN_SECONDS} seconds: a row's pending clock starts up to a function's ` +
      'timeout before its write reaches the pending index, and a sweep that read the index before that write would move its watermark ' +
      `past the row, which would then never be swept; got ${sweepAfter.toHumanString()} (lengthen sweepAfter or shorten the ${floor.functionName}'s timeout)`,
  ];
}

/**
 * A submission is looked at inside its deadline's warning margin only if a reconciler run falls
 * inside it: the margin is at least the schedule's rate (a cron schedule is not checked).
 */
function deadlineWarningProblems(props: WebhookInboxProps): string[] {
  const warning = props.deadlineWarning;
  if (!warning || Token.isUnresolved(warning.toSeconds())) return [];
  const seconds = warning.toSeconds();
  if (!Number.isInteger(seconds) || seconds < 60)
    return [`deadlineWarning: must be a whole number of seconds, at least 1 minute, got ${warning.toHumanString()}`];
  const rate = reconcileRateSeconds(props);
  return rate !== undefined && seconds < rate
    ? [`deadlineWarning: must be at least the reconcile schedule's rate (${Duration.seconds(rate).toHumanString()}), got ${warning.toHumanString()}`]
    : [];
}

/** Seconds between two reconciler runs; undefined for a cron schedule. */
function reconcileRateSeconds(props: WebhookInboxProps): number | undefined {
  return props.reconcileSchedule ? rateSeconds(props.reconcileSchedule) : Defaults.SWEEP_EVERY_MINUTES * 60;
}

/** A whole number within `range`, unless unset or a token. */
function checkRange(problems: string[], name: string, value: number | undefined, range: { readonly MIN: number; readonly MAX: number }): void {
  if (value === undefined || Token.isUnresolved(value)) return;
  if (!Number.isInteger(value) || value < range.MIN || value > range.MAX) {
    problems.push(`${name}: must be a whole number from ${range.MIN} to ${range.MAX}, got ${value}`);
  }
}
