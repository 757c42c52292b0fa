/**
 * The shape of one provider's facts: everything the construct, the runtime and the local twin
 * need to know of a provider kind beyond its adapter. Each provider's file declares one; the
 * index lists them all and derives every table and list by kind from that list.
 */

/** The form of a provider's signing secret: what the placeholder stands for and what rotation makes. */
export const SecretFormat = {
  /** `whsec_` and the base64 of the key bytes (Standard Webhooks). */
  WHSEC: 'whsec',
  /** The secret's text, used as the provider issues it. */
  TEXT: 'text',
  /** A JSON object of values chosen in the provider's own dashboard (Meta's app secret and verify token). */
  JSON: 'json',
  /** No secret: requests name the certificate that signed them (SNS). */
  NONE: 'none',
} as const;
export type SecretFormat = (typeof SecretFormat)[keyof typeof SecretFormat];

/** The formats the rotation function makes a new secret of: `whsec_` and the base64 of 32 random bytes, or 64 random hex characters. */
export const ROTATED_SECRET_FORMATS = [SecretFormat.WHSEC, SecretFormat.TEXT] as const;
export type RotatedSecretFormat = (typeof ROTATED_SECRET_FORMATS)[number];

/** Whether the rotation function makes secrets of this format. */
export function isRotatedSecretFormat(format: string): format is RotatedSecretFormat {
  return (ROTATED_SECRET_FORMATS as readonly string[]).includes(format);
}

/**
 * Where a provider's deliveries name their event type: a header (lower-case, GitHub's
 * `x-github-event`) or a dotted path in the JSON body (Stripe's `type`). The delivery record
 * logs it and a provider's `eventTypes` filter keeps deliveries by it.
 */
export type EventTypeLocation = { readonly header: string; readonly jsonPath?: never } | { readonly jsonPath: string; readonly header?: never };

/** How the reconciler polls a provider by default. */
export interface PollingFacts {
  /** URL of one task, with `{taskId}` (or `{jobId}`, `{batchId}`) where its id goes; none when the provider names none. */
  readonly taskUrlTemplate?: string;
  /** How long after submission a task without a delivery is first polled. */
  readonly horizonSeconds: number;
  /** How often a task that is not final yet is asked about again. */
  readonly recheckSeconds: number;
}

/** A URL the provider's own rules make unusable as the one it signs, and the problem reported at synth. */
export interface UnusableSignedUrl {
  readonly pattern: RegExp;
  readonly problem: string;
}

/** How a provider's requests reach the inbox and what signs them. */
export interface RequestTraits {
  /**
   * Whether the provider signs the URL it posts to, configured with the preset (behind a custom
   * domain it cannot be rebuilt from the request).
   */
  readonly signsUrl: boolean;
  /** What its own rules refuse in that URL, beyond it being an https URL. */
  readonly unusableSignedUrl: UnusableSignedUrl | undefined;
  /** Whether the provider checks the endpoint with a `GET` (Meta's subscription): the API serves `GET /hooks/<name>` for it too. */
  readonly getChecked: boolean;
  /** Whether its requests name the certificate that signed them (SNS): no signing secret, the configured topics instead. */
  readonly certificateSigned: boolean;
  /** Whether it sends no webhooks and is only polled (a batch API): no route, no verifier, no signing secret. */
  readonly polledOnly: boolean;
  /** Whether its signature scheme is the one its configuration describes (the generic HMAC preset). */
  readonly configuredScheme: boolean;
}

/**
 * The requests of most providers: `POST`s signed with the signing secret over what they send, by
 * the preset's own scheme. A provider that differs spreads this and says how.
 */
export const SECRET_SIGNED_REQUESTS = {
  signsUrl: false,
  unusableSignedUrl: undefined,
  getChecked: false,
  certificateSigned: false,
  polledOnly: false,
  configuredScheme: false,
} as const satisfies RequestTraits;

/**
 * What one provider kind is known to do, from its documentation. Every field is required (an
 * absent fact is written `undefined`; most providers' requests are `SECRET_SIGNED_REQUESTS`), so a
 * provider that leaves one out fails to typecheck.
 */
export interface ProviderFacts {
  /** The adapter kind: the runtime's key for it, its preset's default name and path segment. */
  readonly kind: string;
  /** How messages name it, e.g. `Answerline` or `a message-batches API`. */
  readonly title: string;
  /** The form of its signing secret. */
  readonly secretFormat: SecretFormat;
  /**
   * How long after an event the provider may still deliver it (its retries, or a redelivery an
   * operator can ask for), in seconds. An inbox row must outlive it: a retry that finds its row
   * expired is stored and processed a second time.
   */
  readonly redeliverySeconds: number;
  /** The tolerances of a signed timestamp its preset defaults to, where the provider's own rules call for other than the inbox's. */
  readonly tolerance: { readonly pastSeconds?: number; readonly futureSeconds?: number } | undefined;
  /** How its requests reach the inbox and what signs them. */
  readonly requests: RequestTraits;
  /** How the reconciler polls it by default; undefined when it cannot be polled. */
  readonly polling: PollingFacts | undefined;
  /** Where its deliveries name their event type; undefined when they name none (Twilio, a generic HMAC sender). */
  readonly eventType: EventTypeLocation | undefined;
  /** Why its stored value cannot be rotated, when it cannot. */
  readonly rotationRefusal: string | undefined;
}
