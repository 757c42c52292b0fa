import { Duration, Token } from 'aws-cdk-lib';
import {
  authoritativeReadProblems,
  DeliveryFilterConfig,
  deliveryFilterProblems,
  HmacRuntimeSettings,
  hmacSchemeProblems,
  isRotatedSecretFormat,
  jsonPathProblems,
  notificationUrlProblems,
  PollingDefaults,
  pollingProblems,
  POLLED_ADAPTERS,
  PollingRuntimeConfig,
  providerFactsOf,
  RECOVERED_KINDS,
  ProviderRuntimeConfig,
  providerRuntimeConfig,
  ROTATED_SECRET_FORMATS,
  sourceCidrProblems,
  topicArnProblems,
} from '../contract';
import { HmacAlgorithm, HmacProviderOptions, SecretEncoding, SignatureEncoding, WebhookProviderConfig } from '../provider';
import { isRecoveredFromLog, recoveryOptionProblems } from './recovery-runtime';

/** The runtime form of a generic HMAC scheme: header names lower-cased, defaults filled in. */
export function hmacRuntimeSettings(options: HmacProviderOptions): HmacRuntimeSettings {
  return {
    signatureHeader: options.signatureHeader.toLowerCase(),
    algorithm: options.algorithm ?? HmacAlgorithm.SHA256,
    encoding: options.signatureEncoding ?? SignatureEncoding.HEX,
    prefix: options.signaturePrefix ?? '',
    signedContent: options.signedContent ?? '{body}',
    timestampHeader: options.timestampHeader?.toLowerCase(),
    idHeader: options.idHeader?.toLowerCase(),
    idJsonPath: options.idJsonPath,
    ...(options.acknowledgeUnsignedIdHeader ? { acknowledgeUnsignedIdHeader: true } : {}),
    secretEncoding: options.secretEncoding ?? SecretEncoding.UTF8,
  };
}

/** Problems with a provider's configuration, each naming the provider. */
export function providerProblems(provider: WebhookProviderConfig): string[] {
  const runtime = providerRuntimeConfigOf(provider, 'secret');
  const problems = [
    ...(runtime.hmac ? hmacSchemeProblems(runtime.hmac).map((problem) => `hmac: ${problem}`) : []),
    ...(runtime.authoritativeRead ? authoritativeReadProblems(runtime.authoritativeRead).map((problem) => `authoritativeRead: ${problem}`) : []),
    ...(runtime.allowedSourceCidrs ? sourceCidrProblems(runtime.allowedSourceCidrs).map((problem) => `allowedSources: ${problem}`) : []),
    ...(runtime.tenantJsonPath !== undefined && !Token.isUnresolved(runtime.tenantJsonPath)
      ? jsonPathProblems(runtime.tenantJsonPath).map((problem) => `tenantJsonPath ${problem}`)
      : []),
    ...(runtime.filter ? filterProblems(provider, runtime.filter) : []),
  ];
  const facts = providerFactsOf(provider.adapter);
  if (provider.rotation) {
    const refusal =
      facts?.rotationRefusal ??
      (isRotatedSecretFormat(provider.secretFormat)
        ? undefined
        : `a ${provider.secretFormat} secret is not rotated: the rotation function makes ${ROTATED_SECRET_FORMATS.join(' and ')} secrets`);
    if (refusal) problems.push(`rotation: ${refusal}`);
    problems.push(...rotationScheduleProblems(provider.rotation.schedule));
  }
  // A URL built from a token (a custom domain's name) is checked at cold start.
  if (facts?.requests.signsUrl && !Token.isUnresolved(provider.notificationUrl)) {
    problems.push(...notificationUrlProblems(provider.notificationUrl).map((problem) => `notificationUrl ${problem}`));
    const unusable = facts.requests.unusableSignedUrl;
    if (unusable?.pattern.test(provider.notificationUrl ?? '')) problems.push(unusable.problem);
  }
  if (facts?.requests.certificateSigned) {
    // An ARN made of tokens (a topic of the app) is checked at cold start.
    problems.push(...topicArnProblems(provider.topicArns, (arn) => Token.isUnresolved(arn)).map((problem) => `topicArns ${problem}`));
    if (provider.signingSecret) problems.push('signingSecret: SNS signs with certificates; there is no secret to give');
  }
  if (facts?.requests.polledOnly) {
    const given = (['signingSecret', 'rotation', 'allowedSources'] as const).filter((name) => provider[name] !== undefined);
    problems.push(...given.map((name) => `${name}: this provider sends no webhooks (it is polled): it has no route and no signing secret`));
  }
  if (provider.polling && isRecoveredFromLog(provider)) {
    problems.push(...recoveryOptionProblems(provider));
  } else if (provider.polling) {
    const recoveryOnly = (['githubHook', 'baseUrl', 'eventTypes', 'stalledAfter'] as const).filter((name) => provider.polling![name] !== undefined);
    problems.push(...recoveryOnly.map((name) => `polling.${name}: only GitHub and Stripe are recovered from their own event log`));
    if (!POLLED_ADAPTERS.includes(provider.adapter)) {
      problems.push(`polling: only ${POLLED_TITLES} can be polled`);
    } else {
      problems.push(...pollingProblems(pollingRuntimeConfig(provider, provider.polling, 'secret')).map((problem) => `polling: ${problem}`));
    }
  }
  return problems.map((problem) => `providers: ${provider.name}: ${problem}`);
}

/** What is wrong with a provider's `eventTypes` and `keepWhen`, named as the props name them; tokens are checked at cold start. */
function filterProblems(provider: WebhookProviderConfig, filter: DeliveryFilterConfig): string[] {
  if (provider.eventTypes?.some((type) => Token.isUnresolved(type))) return [];
  if (providerFactsOf(provider.adapter)?.requests.polledOnly)
    return ['eventTypes, keepWhen: this provider sends no webhooks (it is polled): there is nothing to filter'];
  return deliveryFilterProblems(provider.adapter, filter).map((problem) => problem.replace(/^predicate/, 'keepWhen'));
}

/** The filter the verifier applies to a provider's verified deliveries; undefined when it keeps every one. */
function deliveryFilterOf(provider: WebhookProviderConfig): DeliveryFilterConfig | undefined {
  if (provider.eventTypes === undefined && provider.keepWhen === undefined) return undefined;
  return {
    ...(provider.eventTypes !== undefined ? { eventTypes: provider.eventTypes } : {}),
    ...(provider.keepWhen !== undefined ? { predicate: provider.keepWhen._rule } : {}),
  };
}

/** How a message names the providers that can be polled: `Answerline, Echonova and a message-batches API`. */
const POLLED_TITLES = [...POLLED_ADAPTERS, ...RECOVERED_KINDS]
  .map((kind) => providerFactsOf(kind)!.title)
  .join(', ')
  .replace(/, ([^,]*)$/, ' and $1');

/** How the reconciler polls a provider, the preset's defaults filled in. */
export function pollingRuntimeConfig(
  provider: WebhookProviderConfig,
  polling: NonNullable<WebhookProviderConfig['polling']>,
  apiKeySecretId: string,
): PollingRuntimeConfig {
  const defaults: { taskUrlTemplate?: string; horizonSeconds: number; recheckSeconds: number } =
    providerFactsOf(provider.adapter)?.polling ?? PollingDefaults.ledgerOnly;
  return {
    provider: provider.name,
    taskUrlTemplate: polling.taskUrlTemplate ?? defaults.taskUrlTemplate ?? '',
    apiKeySecretId,
    horizonSeconds: seconds(polling.horizon) ?? defaults.horizonSeconds,
    recheckSeconds: seconds(polling.recheckInterval) ?? defaults.recheckSeconds,
  };
}

function seconds(duration: Duration | undefined): number | undefined {
  return duration?.toSeconds();
}

/** What the handlers are told about a provider (serialized into their environment). */
export function providerRuntimeConfigOf(provider: WebhookProviderConfig, secretId: string | undefined): ProviderRuntimeConfig {
  const filter = deliveryFilterOf(provider);
  return providerRuntimeConfig({
    name: provider.name,
    adapter: provider.adapter,
    ...(secretId !== undefined ? { secretId } : {}),
    tolerancePastSeconds: provider.pastTolerance.toSeconds(),
    toleranceFutureSeconds: provider.futureTolerance.toSeconds(),
    previousSecretGraceSeconds: provider.previousSecretGracePeriod.toSeconds(),
    ...(provider.hmacScheme ? { hmac: hmacRuntimeSettings(provider.hmacScheme) } : {}),
    ...(provider.authoritativeRead
      ? {
          authoritativeRead: {
            urlTemplate: provider.authoritativeRead.urlTemplate,
            idJsonPath: provider.authoritativeRead.idJsonPath,
            apiKeySecretId: provider.authoritativeRead.apiKeySecret.secretArn,
          },
        }
      : {}),
    ...(provider.allowedSources?.length ? { allowedSourceCidrs: provider.allowedSources } : {}),
    ...(provider.notificationUrl !== undefined ? { notificationUrl: provider.notificationUrl } : {}),
    ...(provider.topicArns !== undefined ? { topicArns: provider.topicArns } : {}),
    ...(provider.tenantJsonPath !== undefined ? { tenantJsonPath: provider.tenantJsonPath } : {}),
    ...(filter ? { filter } : {}),
  });
}

/** Secrets Manager rotates a secret at most every 4 hours and at least every 1,000 days. */
function rotationScheduleProblems(schedule: Duration | undefined): string[] {
  if (!schedule || Token.isUnresolved(schedule.toSeconds())) return [];
  const seconds = schedule.toSeconds();
  return seconds < 4 * 3600 || seconds > 1000 * 86_400 ? [`rotation.schedule: must be from 4 hours to 1000 days, got ${schedule.toHumanString()}`] : [];
}
