import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { DeliveryPredicate } from './delivery-predicate';

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

  /**
   * Whether a deploy rotates the secret: when rotation is first set up, and again whenever the
   * schedule or the rotation function changes (CloudFormation's `RotateImmediatelyOnUpdate`). Off, a
   * deploy only tests the rotation function, and the first rotation comes with the schedule, so a
   * value you store after the first deploy (docs/DEPLOY.md) stays until then.
   * @default false
   */
  readonly rotateOnDeploy?: boolean;
}

/**
 * Recovery by polling. Answerline, Echonova and a message-batches API: the reconciler asks the
 * provider for recorded submissions that have no delivery past their horizon, and feeds final
 * results through the inbox as deliveries. GitHub and Stripe: each reconciler run reads the
 * provider's own event log (a hook's deliveries; the account's events) from a saved cursor and
 * admits what the inbox does not hold, marked recovered (docs/providers/github.md#recovery,
 * docs/providers/stripe.md#recovery).
 */
export interface ProviderPolling {
  /**
   * The secret whose current value is the provider's API credentials, as text or JSON `{"apiKey": "…"}` (sent as
   * `Authorization: Bearer`): the API key; GitHub: a token that may read the hook (or, for the App's own hook,
   * JSON `{"appId": "…", "privateKey": "…"}`); Stripe: a restricted key with Events read access.
   */
  readonly apiKeySecret: secretsmanager.ISecret;

  /**
   * GitHub: the hook whose deliveries are read.
   * @default - required for GitHub; not for other providers
   */
  readonly githubHook?: GitHubHook;

  /**
   * GitHub and Stripe: the API's base URL (GitHub Enterprise Server: `https://HOST/api/v3`); https, or plain http on a loopback address (a local fake).
   * @default - GitHub: `https://api.github.com`; Stripe: `https://api.stripe.com`
   */
  readonly baseUrl?: string;

  /**
   * Stripe: the event types the endpoint is subscribed to (at most 20), so that events it never receives are not recovered into the inbox.
   * @default - every type
   */
  readonly eventTypes?: string[];

  /**
   * GitHub and Stripe: how long a run with no success (a failing, rate-limited or deleted log) is allowed before the RecoveryStalled alarm.
   * @default Duration.hours(1)
   */
  readonly stalledAfter?: Duration;

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

/** Which kind of GitHub hook a recovery reads. */
export enum GitHubHookKind {
  /** A repository's hook: `GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries`. */
  REPOSITORY = 'repository',
  /** An organization's hook: `GET /orgs/{org}/hooks/{hook_id}/deliveries`. */
  ORGANIZATION = 'organization',
  /** A GitHub App's own hook: `GET /app/hook/deliveries`, read with the App's JWT. */
  APP = 'app',
}

/** The GitHub hook whose deliveries the reconciler reads to recover the ones that failed. */
export class GitHubHook {
  /** A repository's hook, e.g. `GitHubHook.repository('octo-org/octo-repo', 12345678)`. */
  public static repository(repository: string, hookId: number): GitHubHook {
    return new GitHubHook(GitHubHookKind.REPOSITORY, repository, hookId);
  }

  /** An organization's hook, by the organization's login. */
  public static organization(organization: string, hookId: number): GitHubHook {
    return new GitHubHook(GitHubHookKind.ORGANIZATION, organization, hookId);
  }

  /** The hook of the GitHub App whose credentials (`appId`, `privateKey`) the secret holds. */
  public static app(): GitHubHook {
    return new GitHubHook(GitHubHookKind.APP);
  }

  private constructor(
    /** The kind of hook. */
    public readonly kind: GitHubHookKind,
    /** `owner/repo` for a repository hook, the login for an organization's; none for an App's. */
    public readonly owner?: string,
    /** The hook's id in GitHub; none for an App's. */
    public readonly hookId?: number,
  ) {}
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
   * @default - no automatic rotation: the operator stages the provider's new secret (docs/ROTATION.md)
   */
  readonly rotation?: SigningSecretRotation;

  /**
   * Recover what the provider gave up delivering by polling its API: results of recorded submissions (Answerline, Echonova), or the provider's own event log (GitHub, Stripe).
   * @default - no polling: recorded submissions are only checked for a delivery, and counted overdue without one; nothing is recovered from GitHub or Stripe
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

  /**
   * The throttle of this provider's route (each of its methods): its own token bucket, so a flood on another route never gets this provider 429s, and a flood on this one gets only its senders 429s.
   * @default - the inbox's `throttle`
   */
  readonly throttle?: apigwv2.ThrottleSettings;

  /**
   * The event types stored, as the provider names them where its deliveries carry them (Stripe's
   * `type`, GitHub's `X-GitHub-Event`, Slack's `event.type`: docs/FILTERS.md): a verified delivery
   * of another type is answered 200 `filtered`, stored nowhere and counted (`Filtered`).
   * @default - every event type
   */
  readonly eventTypes?: string[];

  /**
   * A condition on a verified delivery's JSON body that it must meet to be stored (with
   * `eventTypes`, both must keep it); one that does not is answered 200 `filtered`, stored nowhere and counted.
   * @default - no condition
   */
  readonly keepWhen?: DeliveryPredicate;
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
