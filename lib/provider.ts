import { Duration } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { AdapterKind, Defaults } from './contract';

/** Options every provider preset accepts. */
export interface WebhookProviderOptions {
  /**
   * The provider's name: its path (`/hooks/<name>`), its key namespace in the inbox, and the
   * `Provider` dimension of its metrics. Lower-case letters, digits and hyphens.
   * @default - the preset's name, e.g. `answerline`
   */
  readonly name?: string;

  /**
   * The secret holding the signing secret the provider gave you.
   * @default - a new Secrets Manager secret with a random placeholder value, to be replaced by the provider's secret
   */
  readonly signingSecret?: secretsmanager.ISecret;

  /**
   * How far in the past a signed timestamp may lie before the delivery is refused as stale.
   * @default Duration.minutes(5)
   */
  readonly pastTolerance?: Duration;

  /**
   * How far in the future a signed timestamp may lie (clock skew at the provider).
   * @default Duration.minutes(5)
   */
  readonly futureTolerance?: Duration;
}

/** What a provider resolves to when an inbox binds it. */
export interface WebhookProviderConfig {
  /** Path segment, key namespace and metric dimension. */
  readonly name: string;
  /** The runtime adapter that verifies and interprets this provider's deliveries. */
  readonly adapter: string;
  /**
   * The signing secret.
   * @default - the inbox creates one
   */
  readonly signingSecret?: secretsmanager.ISecret;
  /** Accepted age of a signed timestamp. */
  readonly pastTolerance: Duration;
  /** Accepted lead of a signed timestamp. */
  readonly futureTolerance: Duration;
}

/**
 * A webhook provider an inbox receives from: how its deliveries are signed, which id is stable,
 * what a test delivery looks like and how a delivery maps onto a job. Choose a preset with a
 * static factory.
 */
export abstract class WebhookProvider {
  /**
   * Answerline async-task results: Standard Webhooks signatures (`webhook-id`,
   * `webhook-timestamp`, `webhook-signature`), inbox keyed by `task.id` from the signed body,
   * `"test": true` deliveries acknowledged and dropped, one result per
   * `task.idempotencyKey` without its `-rN` suffix.
   */
  public static answerline(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(AdapterKind.ANSWERLINE, options);
  }

  /** Resolves the provider for the inbox that serves it. */
  public abstract bind(scope: Construct): WebhookProviderConfig;
}

class PresetProvider extends WebhookProvider {
  constructor(
    private readonly adapter: string,
    private readonly options: WebhookProviderOptions,
  ) {
    super();
  }

  public bind(_scope: Construct): WebhookProviderConfig {
    return {
      name: this.options.name ?? this.adapter,
      adapter: this.adapter,
      signingSecret: this.options.signingSecret,
      pastTolerance: this.options.pastTolerance ?? Duration.seconds(Defaults.TIMESTAMP_TOLERANCE_SECONDS),
      futureTolerance: this.options.futureTolerance ?? Duration.seconds(Defaults.TIMESTAMP_TOLERANCE_SECONDS),
    };
  }
}
