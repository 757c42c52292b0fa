import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import {
  AnswerlineFacts,
  DiscordFacts,
  EchonovaFacts,
  GitHubFacts,
  HmacFacts,
  LinearFacts,
  MessageBatchesFacts,
  MetaFacts,
  PaddleFacts,
  PagerDutyFacts,
  ProviderFacts,
  ShopifyFacts,
  SlackFacts,
  SnsFacts,
  SquareFacts,
  StandardWebhooksFacts,
  StripeFacts,
  TwilioFacts,
  ZoomFacts,
} from './contract';
import { DeliveryPredicate } from './delivery-predicate';
import { PresetExtras, presetConfig } from './private/presets';
import {
  AuthoritativeRead,
  HmacProviderOptions,
  ProviderPolling,
  SigningSecretRotation,
  SnsProviderOptions,
  SquareProviderOptions,
  TwilioProviderOptions,
  WebhookProviderOptions,
} from './provider-options';

// What the presets take is part of the provider's API: imported from here as before.
export * from './provider-options';
export * from './delivery-predicate';

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
  /** How long the previous secret stays valid after a rotation. */
  readonly previousSecretGracePeriod: Duration;
  /**
   * Automatic rotation.
   * @default - none
   */
  readonly rotation?: SigningSecretRotation;
  /**
   * The scheme of a generic HMAC provider.
   * @default - none: a preset
   */
  readonly hmacScheme?: HmacProviderOptions;
  /** The form of secret the provider uses, for the placeholder and for rotation: `whsec`, `text`, `json`, or `none` (SNS). */
  readonly secretFormat: string;
  /**
   * Recovery by polling.
   * @default - none
   */
  readonly polling?: ProviderPolling;
  /**
   * The authoritative read.
   * @default - none
   */
  readonly authoritativeRead?: AuthoritativeRead;
  /**
   * The source address ranges requests are verified from.
   * @default - any
   */
  readonly allowedSources?: string[];
  /**
   * The URL the provider signs with each delivery (Square's notification URL).
   * @default - none
   */
  readonly notificationUrl?: string;
  /**
   * The topics whose subscriptions post here (SNS).
   * @default - none
   */
  readonly topicArns?: string[];
  /**
   * Dotted path of the tenant's id in a delivery's JSON body, hashed into the delivery record.
   * @default - none
   */
  readonly tenantJsonPath?: string;
  /**
   * The throttle of the provider's route.
   * @default - the inbox's
   */
  readonly throttle?: apigwv2.ThrottleSettings;
  /**
   * The event types stored.
   * @default - every type
   */
  readonly eventTypes?: string[];
  /**
   * The condition a stored delivery's body meets.
   * @default - none
   */
  readonly keepWhen?: DeliveryPredicate;
}

/**
 * A webhook provider an inbox receives from: how its deliveries are signed, which id is stable,
 * what a test delivery looks like and how a delivery maps onto a job. Choose a preset with a
 * static factory, or describe any HMAC sender with `hmac()`.
 */
export abstract class WebhookProvider {
  /**
   * Answerline async-task results: Standard Webhooks signatures (`webhook-id`,
   * `webhook-timestamp`, `webhook-signature`), inbox keyed by `task.id` from the signed body,
   * `"test": true` deliveries acknowledged and dropped, a task that is not final yet answered
   * `not_final` and not stored, one result per `task.idempotencyKey` without its resubmission
   * suffix `-rN` (a keyless task is the job `~task:<task id>`).
   */
  public static answerline(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(AnswerlineFacts, options);
  }

  /**
   * Echonova: `X-Webhook-Event`, `X-Webhook-Timestamp`, `X-Webhook-Signature` (hex
   * HMAC-SHA256 of `timestamp.body`); a job's final event is keyed by its `jobId` (`<jobId>:job`)
   * and decided by the signed `status` (an event header that disagrees is quarantined),
   * `spending.*` by `apiKeyId` + event + the body's billing cycle or digest (repeats of
   * `spending.exhausted` are duplicates), any other event by its name and the body's digest.
   */
  public static echonova(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(EchonovaFacts, options);
  }

  /**
   * Any Standard Webhooks sender (OpenAI; Svix-powered senders such as Clerk and Resend; ...):
   * `webhook-*` or `svix-*` headers, `v1` HMAC-SHA256 (`whsec_` secret) or `v1a` Ed25519
   * (`whpk_` public key) signatures, event id from the signed `webhook-id` (`svix-id`). Name each
   * instance after its sender, e.g. `standardWebhooks({ name: 'clerk' })`.
   */
  public static standardWebhooks(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(StandardWebhooksFacts, options);
  }

  /**
   * Stripe: `Stripe-Signature: t=...,v1=...` (several `v1` during a secret roll), event id from
   * the body's `id`.
   */
  public static stripe(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(StripeFacts, options);
  }

  /**
   * GitHub: `X-Hub-Signature-256: sha256=...` over the body, event id the SHA-256 digest of the
   * body (`X-GitHub-Delivery` is not signed: it is kept as row metadata only), `ping` events
   * acknowledged as test deliveries. GitHub signs no timestamp.
   */
  public static github(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(GitHubFacts, options);
  }

  /**
   * Meta (Facebook Pages, Instagram, Messenger, WhatsApp Cloud API): `X-Hub-Signature-256:
   * sha256=...` over the body with the app secret, event id the SHA-256 digest of the body (Meta
   * signs no id and no timestamp). The endpoint also answers Meta's `GET` subscription check with
   * its `hub.challenge` when `hub.verify_token` matches. The signing secret holds JSON
   * `{"appSecret": "…", "verifyToken": "…"}`.
   */
  public static meta(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(MetaFacts, options);
  }

  /**
   * Slack (Events API, slash commands, interactivity): `X-Slack-Signature: v0=...`, hex
   * HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<body>` with the signing secret; the signed
   * `url_verification` request answered with its `challenge` as plain text and never stored;
   * event id the body's `event_id`, or `sha256:<digest of the body>` for a body without one
   * (form-encoded slash commands and interactivity payloads).
   */
  public static slack(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(SlackFacts, options);
  }

  /**
   * Zoom: `x-zm-signature: v0=...`, hex HMAC-SHA256 of `v0:<x-zm-request-timestamp>:<body>`
   * with the secret token; the signed `endpoint.url_validation` request answered with its
   * `plainToken` and `encryptedToken` (the token's HMAC) and never stored; event id the SHA-256
   * digest of the body (Zoom signs no delivery id: `x-zm-trackingid` is kept as row metadata only).
   */
  public static zoom(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(ZoomFacts, options);
  }

  /**
   * Shopify: `X-Shopify-Hmac-Sha256` (base64 HMAC-SHA256 of the body with the app's client
   * secret), event id the SHA-256 digest of the body: Shopify signs neither a timestamp nor
   * `X-Shopify-Webhook-Id`, which is kept as row metadata with the topic and the trigger time.
   */
  public static shopify(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(ShopifyFacts, options);
  }

  /**
   * Paddle Billing: `Paddle-Signature: ts=...;h1=...` (hex HMAC-SHA256 of `ts:body`; several
   * `h1` during a secret rotation), event id from the body's `event_id`. `pastTolerance`
   * defaults to 5 seconds, what Paddle's SDK accepts (Paddle signs every attempt anew).
   */
  public static paddle(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(PaddleFacts, options);
  }

  /**
   * PagerDuty v3 webhooks: `X-PagerDuty-Signature: v1=...` (hex HMAC-SHA256 of the body; one
   * `v1` per secret during a rotation), event id from the body's `event.id`, `pagey.ping`
   * acknowledged as a test delivery. PagerDuty signs no timestamp.
   */
  public static pagerduty(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(PagerDutyFacts, options);
  }

  /**
   * Linear: `Linear-Signature` (hex HMAC-SHA256 of the body), freshness from the signed body's
   * `webhookTimestamp` (`pastTolerance` and `futureTolerance` default to 60 seconds, as Linear
   * recommends), event id from the signed body: `webhookId`, `type`, `action`, `data.id` and
   * `createdAt` (`Linear-Delivery` is not signed: it is kept as row metadata).
   */
  public static linear(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(LinearFacts, options);
  }
  /**
   * Discord interactions: `X-Signature-Ed25519` (hex Ed25519 signature of
   * `<X-Signature-Timestamp><body>`) verified with the application's public key (64 hex
   * characters, stored as the signing secret), a refused signature answered 401 as Discord
   * requires. A PING is answered `{"type":1}` and an autocomplete with no choices, neither
   * stored; any other interaction is stored under its `id` and answered with a deferred response
   * (`{"type":5}`, `{"type":6}` for a component) the app follows up within 15 minutes.
   */
  public static discord(options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(DiscordFacts, options);
  }

  /**
   * Square: `X-Square-HmacSha256-Signature` (base64 HMAC-SHA256 of the notification URL
   * followed by the body, with the subscription's signature key), event id from the body's
   * `event_id`. Square signs no timestamp: a replay is a duplicate.
   */
  public static square(options: SquareProviderOptions): WebhookProvider {
    return new PresetProvider(SquareFacts, options, { signedUrl: options.notificationUrl });
  }

  /**
   * Twilio (Messaging, Voice and status callbacks): `X-Twilio-Signature`, the base64 HMAC-SHA1
   * of the URL Twilio requested (the configured webhook URL's path with the request's query)
   * followed by the POST parameters sorted by name (a JSON body through its `bodySHA256` query
   * parameter), keyed by the Auth Token; event id the SHA-256 digest of that signed content.
   * Twilio signs no timestamp and no id: a replay is a duplicate.
   */
  public static twilio(options: TwilioProviderOptions): WebhookProvider {
    return new PresetProvider(TwilioFacts, options, { signedUrl: options.webhookUrl });
  }

  /**
   * Amazon SNS HTTPS subscriptions of the configured topics: each message signed
   * (`SignatureVersion` 1 SHA1withRSA, 2 SHA256withRSA) with the key of the certificate at its
   * `SigningCertURL`, fetched only from SNS's host of the topic's region and cached; a
   * `SubscriptionConfirmation` confirmed at its `SubscribeURL` and never stored; a `Notification`
   * stored under its `MessageId`; an `UnsubscribeConfirmation` stored for the app to see (nothing
   * resubscribes). Raw message delivery is refused: it is unsigned. No signing secret.
   */
  public static sns(options: SnsProviderOptions): WebhookProvider {
    return new PresetProvider(SnsFacts, options, { topicArns: options.topicArns });
  }

  /**
   * A message-batches API (Anthropic Message Batches; docs/providers/message-batches.md): it sends
   * no webhooks, so the inbox gives it no route and no signing secret. The app records each batch with the custom
   * ids of its requests (`SubmissionLedger.recordBatch`); the reconciler polls the batch until it
   * has ended, then stores each request's result (succeeded, errored, canceled, expired) as a row
   * of its own and the batch's summary as one more, each with its own effect (`BatchChildSettled`,
   * `BatchSettled`).
   * @param batchApi how the batch API is polled: its `apiKeySecret` holds the API key; `taskUrlTemplate` defaults to `https://api.anthropic.com/v1/messages/batches/{batchId}`, the first look 1 minute after submission, then every 5 minutes
   * @param options the options of every preset (its `polling` is replaced by the first argument)
   */
  public static messageBatches(batchApi: ProviderPolling, options: WebhookProviderOptions = {}): WebhookProvider {
    return new PresetProvider(MessageBatchesFacts, { ...options, polling: batchApi });
  }

  /** Any HMAC-signed webhook, described by its header, signed content, encoding and id. */
  public static hmac(options: HmacProviderOptions): WebhookProvider {
    return new PresetProvider(HmacFacts, options, { hmacScheme: options });
  }

  /** Resolves the provider for the inbox that serves it. */
  public abstract bind(scope: Construct): WebhookProviderConfig;
}

/** A preset: what it binds to follows from its provider's facts and the options given. */
class PresetProvider extends WebhookProvider {
  constructor(
    private readonly facts: ProviderFacts,
    private readonly options: WebhookProviderOptions,
    private readonly extras: PresetExtras = {},
  ) {
    super();
  }

  public bind(_scope: Construct): WebhookProviderConfig {
    return presetConfig(this.facts, this.options, this.extras);
  }
}
