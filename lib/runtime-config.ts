import { HmacRuntimeSettings, hmacSchemeProblems, ProviderRuntimeConfig } from './contract';
import { HmacAlgorithm, HmacProviderOptions, SecretEncoding, SignatureEncoding, WebhookProviderConfig } from './provider';

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
    secretEncoding: options.secretEncoding ?? SecretEncoding.UTF8,
  };
}

/** Problems with a provider's configuration, each naming the provider. */
export function providerProblems(provider: WebhookProviderConfig): string[] {
  if (!provider.hmacScheme) return [];
  return hmacSchemeProblems(hmacRuntimeSettings(provider.hmacScheme)).map((problem) => `providers: ${provider.name}: ${problem}`);
}

/** What the handlers are told about a provider (serialized into their environment). */
export function providerRuntimeConfig(provider: WebhookProviderConfig, secretId: string): ProviderRuntimeConfig {
  return {
    name: provider.name,
    adapter: provider.adapter,
    secretId,
    tolerancePastSeconds: provider.pastTolerance.toSeconds(),
    toleranceFutureSeconds: provider.futureTolerance.toSeconds(),
    previousSecretGraceSeconds: provider.previousSecretGracePeriod.toSeconds(),
    ...(provider.hmacScheme ? { hmac: hmacRuntimeSettings(provider.hmacScheme) } : {}),
  };
}
