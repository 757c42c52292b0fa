import { Duration } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
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
import { PresetExtras, presetConfig } from './private/presets';

/** Automatic rotation of a signing secret by the inbox's rotation function. */
export interface SigningSecretRotation {
  /**
   * How often the secret is rotated.
   * @default Duration.days(30)
   */
  readonly schedule?: Duration;

  /**
   * A function that registers the new secret with the provider (the `setSecret` step). It is
   * invoked with `{ "providerName", "secretId", "versionId", "secret" }` and must throw when the
   * provider refuses; the rotation then stops before the new secret becomes current.
   * @default - no registration: only for providers that accept the secret you configure there yourself
   */
  readonly registerFunction?: lambda.IFunction;
}

/**
 * Recovery by polling: the reconciler asks the provider for recorded submissions that have no
 * delivery past their horizon, and feeds final results through the inbox as deliveries.
 */
export interface ProviderPolling {
  /** The secret whose current value is the provider's API key, as text or JSON `{"apiKey": "…"}` (sent as `Authorization: Bearer`). */
  readonly apiKeySecret: secretsmanager.ISecret;

  /**
   * URL of one task, with `{taskId}` (or `{jobId}`) where the id goes.
   * @default - Answerline: `https://api.answerline.dev/v1/async/task/{taskId}`; required for Echonova
   */
  readonly taskUrlTemplate?: string;

  /**
   * How long after submission a task without a delivery is polled (and, still without a result, overdue).
   * @default - Answerline: 4 h 50 min 5 s (4 h queue + 5 min run + 45 min 5 s of delivery retries at worst); Echonova: 1 hour
   */
  readonly horizon?: Duration;

  /**
   * How often a task that is not final yet is asked about again.
   * @default - Answerline: 10 minutes; Echonova: 5 minutes
   */
  readonly recheckInterval?: Duration;
}

/**
 * The authoritative read (docs/providers/standard-webhooks.md#authoritative-read): before a
 * delivery's result is exposed, fetch the provider's resource it names. A missing or expired
 * resource (404/410) marks the row unavailable and never triggers a new generation.
 */
export interface AuthoritativeRead {
  /** `https://` URL of the resource with `{id}` where its id goes, e.g. `https://api.openai.com/v1/responses/{id}`. */
  readonly urlTemplate: string;
  /** Dotted path of the resource id in the delivery's JSON body, e.g. `data.id`. */
  readonly idJsonPath: string;
  /** The secret whose current value is the API key, as text or JSON `{"apiKey": "…"}` (sent as `Authorization: Bearer`). */
  readonly apiKeySecret: secretsmanager.ISecret;
}

/** Options every provider preset accepts. */
export interface WebhookProviderOptions {
  /**
   * The provider's name: its path (`/hooks/<name>`), its key namespace in the inbox, and the
   * `Provider` dimension of its metrics. Lower-case letters, digits and hyphens.
   * @default - the preset's name, e.g. `answerline`
   */
  readonly name?: string;

  /**
   * The secret holding the signing secret the provider gave you. One imported under a
   * customer-managed KMS key names the key (`Secret.fromSecretAttributes(scope, id, { secretCompleteArn, encryptionKey })`),
   * so that its readers are granted `kms:Decrypt`; imported without one, synth warns.
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

  /**
   * How long after a rotation the previous secret (`AWSPREVIOUS`) is still accepted, for
   * deliveries signed before the provider switched.
   * @default Duration.hours(24)
   */
  readonly previousSecretGracePeriod?: Duration;

  /**
   * Rotate the signing secret on a schedule with the inbox's rotation function.
   * @default - no automatic rotation: the operator stages the provider's new secret (README, "Rotating a signing secret")
   */
  readonly rotation?: SigningSecretRotation;

  /**
   * Recover results the provider gave up delivering by polling its API (Answerline, Echonova).
   * @default - no polling: recorded submissions are only checked for a delivery, and counted overdue without one
   */
  readonly polling?: ProviderPolling;

  /**
   * Fetch the provider's resource before a delivery's result is exposed.
   * @default - no read: the delivery's body is the result
   */
  readonly authoritativeRead?: AuthoritativeRead;

  /**
   * The only source address ranges (CIDR, IPv4 or IPv6) the provider sends from, for providers
   * that publish theirs: a request from elsewhere is answered 403 before any verification, and counted.
   * @default - any source: the signature alone decides
   */
  readonly allowedSources?: string[];

  /**
   * Dotted path of the tenant's id in a delivery's JSON body (e.g. `account.id`): the delivery
   * record logs its salted hash as `tenantRef`, never the value.
   * @default - no tenant reference in the delivery record
   */
  readonly tenantJsonPath?: string;
}

/** The HMAC hash function of a generic HMAC provider. */
export enum HmacAlgorithm {
  /** HMAC-SHA256. */
  SHA256 = 'sha256',
  /** HMAC-SHA512. */
  SHA512 = 'sha512',
}

/** How a signature (or a secret) is written as text. */
export enum SignatureEncoding {
  /** Hexadecimal. */
  HEX = 'hex',
  /** Standard base64. */
  BASE64 = 'base64',
}

/** How a stored signing secret turns into HMAC key bytes. */
export enum SecretEncoding {
  /** The secret's text, as UTF-8 bytes (GitHub, Stripe, most providers). */
  UTF8 = 'utf8',
  /** The secret's text is base64 of the key bytes. */
  BASE64 = 'base64',
}

/** A generic HMAC provider, for the long tail of webhook senders. */
export interface HmacProviderOptions extends WebhookProviderOptions {
  /** The header that carries the signature, e.g. `X-Shopify-Hmac-Sha256`. */
  readonly signatureHeader: string;

  /**
   * The hash function.
   * @default HmacAlgorithm.SHA256
   */
  readonly algorithm?: HmacAlgorithm;

  /**
   * How the signature is written in the header.
   * @default SignatureEncoding.HEX
   */
  readonly signatureEncoding?: SignatureEncoding;

  /**
   * Text in front of each signature, e.g. `sha256=`.
   * @default - none
   */
  readonly signaturePrefix?: string;

  /**
   * The signed content: literal text with `{body}` (the raw body, exactly once), `{timestamp}`
   * (the `timestampHeader` value) and `{id}` (the `idHeader` value), e.g. `{timestamp}.{body}`.
   * @default '{body}'
   */
  readonly signedContent?: string;

  /**
   * A header with the signing time in Unix seconds, checked against the tolerances.
   * @default - none: freshness is not checked, and a captured delivery can only be replayed as a duplicate
   */
  readonly timestampHeader?: string;

  /**
   * The header with the stable event id. It is the event id only when `signedContent` covers it
   * (`{id}`); see `acknowledgeUnsignedIdHeader`.
   * @default - the id is read from `idJsonPath`
   */
  readonly idHeader?: string;

  /**
   * The dotted path of the stable event id in the JSON body, e.g. `event.id`.
   * @default - the id is read from `idHeader`
   */
  readonly idJsonPath?: string;

  /**
   * Accept an `idHeader` that `signedContent` does not cover (Shopify signs the body only). Such a
   * header proves nothing, so it is not the event id: deliveries are then deduplicated by the
   * digest of their body, and the header is kept as row metadata. Without it, such a scheme is
   * refused at synth.
   * @default false
   */
  readonly acknowledgeUnsignedIdHeader?: boolean;

  /**
   * How the stored secret turns into key bytes.
   * @default SecretEncoding.UTF8
   */
  readonly secretEncoding?: SecretEncoding;
}

/** Options of the Square preset. */
export interface SquareProviderOptions extends WebhookProviderOptions {
  /**
   * The subscription's notification URL, exactly as registered with Square (https), e.g.
   * `https://hooks.example.com/hooks/square`: Square signs it with each body, and behind API
   * Gateway or a custom domain it cannot be rebuilt from the request.
   */
  readonly notificationUrl: string;
}

/** Options of the Twilio preset. */
export interface TwilioProviderOptions extends WebhookProviderOptions {
  /**
   * The webhook URL exactly as configured in Twilio (https), its query included, e.g.
   * `https://hooks.example.com/hooks/twilio?tenant=acme`: Twilio signs it with each request, and
   * behind API Gateway or a custom domain it cannot be rebuilt from the request. Behind a REST API
   * ingress, whose event carries the query decoded, the query Twilio requests verifies only as
   * written here (or written as a form encodes it); see docs/providers/twilio.md.
   */
  readonly webhookUrl: string;
}

/** Options of the Amazon SNS preset: SNS signs with certificates, so there is no signing secret to give or rotate. */
export interface SnsProviderOptions {
  /**
   * The provider's name: its path (`/hooks/<name>`), its key namespace and its metrics' `Provider` dimension.
   * @default 'sns'
   */
  readonly name?: string;

  /**
   * The ARNs of the topics whose HTTPS subscriptions post here (`topic.topicArn` of a topic in the
   * app, or a topic of another account): a message of any other topic is refused, since anyone
   * can subscribe an endpoint to a topic of their own and SNS signs its messages too.
   */
  readonly topicArns: string[];

  /**
   * How old a message's signed `Timestamp` may be: every retry of a message carries its first
   * attempt's signature, so this covers the delivery policy's whole retry window.
   * @default Duration.seconds(3900) - SNS's longest retry window (an hour) and 5 minutes of skew
   */
  readonly pastTolerance?: Duration;

  /**
   * How far in the future a signed `Timestamp` may lie.
   * @default Duration.minutes(5)
   */
  readonly futureTolerance?: Duration;

  /**
   * The only source address ranges (CIDR) requests are verified from (SNS sends from the
   * `AMAZON` ranges of its region in AWS's ip-ranges.json): a request from elsewhere is answered 403.
   * @default - any source: the signature and the topic decide
   */
  readonly allowedSources?: string[];
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
