import { Duration, Token } from 'aws-cdk-lib';
import {
  AdapterKind,
  authoritativeReadProblems,
  HmacRuntimeSettings,
  hmacSchemeProblems,
  jsonPathProblems,
  notificationUrlProblems,
  PollingDefaults,
  pollingProblems,
  POLLED_ONLY_ADAPTERS,
  PollingRuntimeConfig,
  ProviderRuntimeConfig,
  providerRuntimeConfig,
  sourceCidrProblems,
  topicArnProblems,
  URL_SIGNING_ADAPTERS,
} from '../contract';
import { HmacAlgorithm, HmacProviderOptions, SecretEncoding, SignatureEncoding, WebhookProviderConfig } from '../provider';

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
  ];
  if (provider.rotation && provider.secretFormat === 'json') {
    problems.push("rotation: this provider's secret is chosen in its own dashboard; stage the new value there and in the secret instead");
  }
  // A URL built from a token (a custom domain's name) is checked at cold start.
  if (URL_SIGNING_ADAPTERS.includes(provider.adapter) && !Token.isUnresolved(provider.notificationUrl)) {
    problems.push(...notificationUrlProblems(provider.notificationUrl).map((problem) => `notificationUrl ${problem}`));
    // Twilio appends bodySHA256 to the configured URL itself; one configured there could never match the body.
    if (provider.adapter === AdapterKind.TWILIO && /[?&]bodySHA256=/.test(provider.notificationUrl ?? '')) {
      problems.push(
        'notificationUrl (webhookUrl) names bodySHA256 in its query: Twilio appends it to the URL it signs for a JSON body; give the URL as configured in Twilio, without it',
      );
    }
  }
  if (provider.adapter === AdapterKind.SNS) {
    // An ARN made of tokens (a topic of the app) is checked at cold start.
    problems.push(...topicArnProblems(provider.topicArns, (arn) => Token.isUnresolved(arn)).map((problem) => `topicArns ${problem}`));
    if (provider.signingSecret) problems.push('signingSecret: SNS signs with certificates; there is no secret to give');
  }
  if (POLLED_ONLY_ADAPTERS.includes(provider.adapter)) {
    const given = (['signingSecret', 'rotation', 'allowedSources'] as const).filter((name) => provider[name] !== undefined);
    problems.push(...given.map((name) => `${name}: this provider sends no webhooks (it is polled): it has no route and no signing secret`));
  }
  if (provider.rotation && provider.adapter === AdapterKind.DISCORD) {
    problems.push("rotation: the stored value is the Discord application's public key, not a secret: there is nothing to rotate");
  }
  if (provider.polling) {
    if (!POLLED_ADAPTERS.includes(provider.adapter)) {
      problems.push('polling: only Answerline, Echonova and a message-batches API can be polled');
    } else {
      problems.push(...pollingProblems(pollingRuntimeConfig(provider, provider.polling, 'secret')).map((problem) => `polling: ${problem}`));
    }
  }
  return problems.map((problem) => `providers: ${provider.name}: ${problem}`);
}

/** The adapter kinds the reconciler can poll. */
const POLLED_ADAPTERS: readonly string[] = [AdapterKind.ANSWERLINE, AdapterKind.ECHONOVA, AdapterKind.MESSAGE_BATCHES];

/** How the reconciler polls a provider, the preset's defaults filled in. */
export function pollingRuntimeConfig(
  provider: WebhookProviderConfig,
  polling: NonNullable<WebhookProviderConfig['polling']>,
  apiKeySecretId: string,
): PollingRuntimeConfig {
  const defaults: { taskUrlTemplate?: string; horizonSeconds: number; recheckSeconds: number } =
    provider.adapter === AdapterKind.ANSWERLINE
      ? PollingDefaults.answerline
      : provider.adapter === AdapterKind.MESSAGE_BATCHES
        ? PollingDefaults['message-batches']
        : PollingDefaults.echonova;
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
  });
}
