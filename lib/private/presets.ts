import { Duration } from 'aws-cdk-lib';
import { Defaults, ProviderFacts } from '../contract';
// Types only: provider.ts builds its presets with this module, so a value import would be circular.
import type { HmacProviderOptions, WebhookProviderConfig, WebhookProviderOptions } from '../provider';

/** What some presets take beside the options every preset accepts. */
export interface PresetExtras {
  /** The generic HMAC preset's scheme. */
  readonly hmacScheme?: HmacProviderOptions;
  /** The URL the provider signs with each delivery (Square's notification URL, Twilio's webhook URL). */
  readonly signedUrl?: string;
  /** The topics whose subscriptions post here (SNS). */
  readonly topicArns?: string[];
}

/**
 * What a preset of the provider `facts` describe binds to: the options given, the facts filling in
 * the secret's format and the tolerances the provider's own rules call for.
 */
export function presetConfig(facts: ProviderFacts, options: WebhookProviderOptions, extras: PresetExtras = {}): WebhookProviderConfig {
  const tolerance = (given: Duration | undefined, preset: number | undefined) => given ?? Duration.seconds(preset ?? Defaults.TIMESTAMP_TOLERANCE_SECONDS);
  return {
    name: options.name ?? facts.kind,
    adapter: facts.kind,
    signingSecret: options.signingSecret,
    pastTolerance: tolerance(options.pastTolerance, facts.tolerance?.pastSeconds),
    futureTolerance: tolerance(options.futureTolerance, facts.tolerance?.futureSeconds),
    previousSecretGracePeriod: options.previousSecretGracePeriod ?? Duration.seconds(Defaults.PREVIOUS_SECRET_GRACE_SECONDS),
    rotation: options.rotation,
    hmacScheme: extras.hmacScheme,
    secretFormat: facts.secretFormat,
    polling: options.polling,
    authoritativeRead: options.authoritativeRead,
    allowedSources: options.allowedSources,
    notificationUrl: extras.signedUrl,
    topicArns: extras.topicArns,
    tenantJsonPath: options.tenantJsonPath,
    throttle: options.throttle,
    eventTypes: options.eventTypes,
    keepWhen: options.keepWhen,
  };
}
