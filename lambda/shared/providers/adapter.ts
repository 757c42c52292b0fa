import { BlockList, isIPv4, isIPv6 } from 'node:net';
import {
  Defaults,
  EffectDetail,
  EffectEvent,
  EVENT_TYPE_PATTERN,
  EventTypeLocation,
  Limits,
  providerFactsOf,
  ProviderRuntimeConfig,
} from '../../../lib/contract';
import { parseJsonObject, valueAtPath } from '../runtime/json-body';
import { nestsDeeperThan } from '../runtime/json-depth';
import { deliveryFilter, FilterVerdict } from './delivery-filter';
import { HandshakeAnswer, Headers, RequestContext } from '../runtime/http';
import { SecretStage, SecretVersion } from '../signatures/secrets';
import { Rejection, SigningKey, Tolerance, Verdict } from '../signatures/signing-key';

// Read here for every provider; re-exported for the adapters that read ids at a path.
export { parseJsonObject, valueAtPath };

/** What a verified body is to the inbox. */
export type Admission =
  | {
      readonly kind: 'event';
      readonly eventId: string;
      /**
       * A level rather than an edge (Echonova's `spending.exhausted`): repeats legitimately carry
       * other bodies, so a different digest is a duplicate, not an altered copy to quarantine.
       */
      readonly repeatable?: boolean;
      /**
       * The job reference the provider's body carries (Answerline: the exact `task.idempotencyKey`),
       * read at no extra cost; the row keeps it as `<provider>#<jobRef>` so that a submission
       * known only by that key finds its task.
       */
      readonly jobRef?: string;
      /**
       * The answer the provider requires once the event is stored, instead of the inbox's own
       * (Discord: an interaction response deferring the reply), for a duplicate too.
       */
      readonly answer?: HandshakeAnswer;
    }
  | { readonly kind: 'test' }
  /**
   * A signed request the provider sends to check the endpoint (Slack's `url_verification`,
   * Discord's PING): answered at the edge as the provider documents, never stored, counted.
   */
  | {
      readonly kind: 'handshake';
      readonly answer: HandshakeAnswer;
      /** A URL to request before answering, that confirms the subscription (SNS's `SubscribeURL`). */
      readonly confirmUrl?: string;
    }
  /**
   * A task that is not final yet: it carries no result, and storing it would make the final
   * delivery (same id, another body) an altered copy. Acknowledged, never stored.
   */
  | { readonly kind: 'not_final' }
  /**
   * An unsigned header that disagrees with the signed body (Echonova: an event name that is not
   * the job's signed status): the copy is quarantined under `eventId`, never a row of its own;
   * `detail` names the header.
   */
  | { readonly kind: 'anomaly'; readonly eventId: string; readonly detail: string }
  | { readonly kind: 'malformed'; readonly detail: string }
  /**
   * A body nested deeper than `Limits.MAX_JSON_DEPTH`: refused before the adapter reads it, since
   * nothing could carry it downstream (`detail` names the limit).
   */
  | { readonly kind: 'too_deep'; readonly detail: string };

/** A final result that a stored delivery reports for one logical job. */
export interface JobObservation {
  /** The logical job (Answerline: `task.idempotencyKey` without a trailing `-rN`). */
  readonly jobKey: string;
  readonly taskId: string;
  readonly status: FinalStatus;
  /** When the task was created, normalized by `parseInstant` (fixed width, 9 fraction digits). */
  readonly createdAt: string;
  /** The result as JSON text, stored as it came (a FAILED task's error included). */
  readonly response: string;
}

export type FinalStatus = 'COMPLETED' | 'FAILED';

/**
 * The effect of a stored event that is neither a job's result nor a plain webhook (a polled
 * batch's request or summary): its detail type, the fields beside the inbox and provider that
 * make its key, and what it adds to the detail.
 */
export interface EventEffect {
  readonly detailType: (typeof EffectEvent)['BATCH_CHILD_SETTLED' | 'BATCH_SETTLED'];
  readonly keyFields: readonly string[];
  readonly fields: Pick<EffectDetail, 'batchId' | 'customId' | 'childState' | 'batchOutcome'>;
}

/**
 * Everything that differs between providers: how deliveries are signed, which id is stable,
 * what a test delivery looks like and how a body maps onto a job. The inbox, the processor and
 * the reconciler are shared.
 */
export interface ProviderAdapter {
  readonly name: string;
  /** The Secrets Manager secret holding this provider's signing secret; absent when requests name their certificate. */
  readonly secretId?: string;
  /** How long after a rotation the AWSPREVIOUS secret still verifies, in seconds. */
  readonly previousSecretGraceSeconds: number;
  /**
   * Turns the stored secret versions into signing keys; throws when the AWSCURRENT value is
   * unusable, and leaves out another version whose value is (it cannot sign anything).
   */
  signingKeys(versions: readonly StagedValue[]): SigningKey[];
  /**
   * Checks authenticity and freshness over the exact bytes received (and, for a provider that
   * signs them, the request's URL and method).
   */
  verify(headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number, request?: RequestContext): Verdict;
  /**
   * Reads the stable event id of a verified body, or recognises a test delivery or a handshake
   * (`key` is the key the request verified with: some handshakes answer with a value derived from it;
   * `request`: what beside the body the signature covered, e.g. the query Twilio signs).
   */
  admit(headers: Headers, body: Buffer, key?: SigningKey, request?: RequestContext): Admission;
  /**
   * Where the certificate that signed a request is (SNS's `SigningCertURL`), checked to be the
   * provider's own; a rejection when it is not. Absent: requests are verified with the stored secret.
   */
  readonly signingCertificateUrl?: (headers: Headers, body: Buffer) => { readonly url: string } | Rejection;
  /** The status a refused signature is answered with, when the provider documents one. @default 400 */
  readonly refusalStatus?: number;
  /** Whether a request from this address may be verified at all (the provider's published ranges). */
  allowsSource(sourceIp: string): boolean;
  /**
   * The answer to the provider's unsigned GET subscription check (Meta's `hub.challenge`), or
   * undefined when it does not present what the keys hold; absent: the provider sends none.
   */
  readonly answerSubscriptionCheck?: (query: URLSearchParams, keys: readonly SigningKey[]) => HandshakeAnswer | undefined;
  /** The delivery metadata worth keeping on the row: no signature, no credentials. */
  metadata(headers: Headers): Record<string, string>;
  /**
   * The final result a stored delivery reports, or undefined when it reports none. `meta` is the
   * metadata kept on the row. Throws MalformedDeliveryError naming the field when the body
   * cannot be interpreted.
   */
  observe(body: Buffer, meta: Readonly<Record<string, string>>): JobObservation | undefined;
  /**
   * Whether a stored delivery belongs to a job's lifecycle (Answerline tasks, Echonova `job.*`).
   * Such deliveries cause an effect only when their job's winner changes; a delivery of any other
   * kind (Stripe, GitHub, Standard Webhooks, Echonova `spending.*`) is an effect of its own.
   */
  reportsJob(meta: Readonly<Record<string, string>>): boolean;
  /** The effect of a stored event of its own kind; undefined: a `WebhookReceived` (or a job's result). */
  effectOf(body: Buffer): EventEffect | undefined;
  /**
   * What the delivery record names of a verified delivery: the provider's event type and resource
   * id where it has them, and the tenant's value at the configured `tenantJsonPath`.
   */
  describe(headers: Headers, body: Buffer): EventDescription;
  /**
   * Whether the provider's filter (docs/FILTERS.md) keeps a verified event, given its event type
   * as `describe` read it: undefined when it does, why not when it drops it.
   */
  filter(eventType: string | undefined, body: Buffer): FilterVerdict;
}

/** A verified delivery as the delivery record names it; each member absent when the delivery has none. */
export interface EventDescription {
  readonly eventType?: string;
  /** The resource's plain id: hashed before it is logged. */
  readonly resourceId?: string;
  /** The tenant's plain value: hashed before it is logged. */
  readonly tenant?: string;
}

/** Where a provider's deliveries carry the resource they are about (their event type is a fact of the provider: `ProviderFacts.eventType`). */
export interface DescriptionRule {
  /** Dotted path of the resource the event is about in a JSON body (an authoritative read's `idJsonPath` takes its place). */
  readonly resourcePath?: string;
}

/** What a signing key is made of: a stored value and the stage it came from. */
export type StagedValue = Pick<SecretVersion, 'stage' | 'value'>;

/** What makes one provider's adapter; `buildAdapter` adds the parts every adapter shares. */
export interface AdapterParts {
  /** Turns one stored secret value into key material. */
  readonly decodeKey: (value: string) => Pick<SigningKey, 'bytes' | 'publicKey' | 'verifyToken'>;
  readonly verify: (headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number, tolerance: Tolerance, request?: RequestContext) => Verdict;
  readonly admit: (headers: Headers, body: Buffer, key?: SigningKey, request?: RequestContext) => Admission;
  readonly refusalStatus?: number;
  readonly answerSubscriptionCheck?: ProviderAdapter['answerSubscriptionCheck'];
  /** Provider headers worth keeping on the row (never a signature). */
  readonly keptHeaders: readonly string[];
  readonly observe?: ProviderAdapter['observe'];
  /** Absent: no delivery of this provider belongs to a job. */
  readonly reportsJob?: ProviderAdapter['reportsJob'];
  /** Absent: every event is a `WebhookReceived`. */
  readonly effectOf?: ProviderAdapter['effectOf'];
  /** Absent: the record names no resource. */
  readonly describes?: DescriptionRule;
}

const COMMON_KEPT_HEADERS = ['content-type', 'content-length', 'user-agent'];

export function buildAdapter(config: ProviderRuntimeConfig, parts: AdapterParts): ProviderAdapter {
  const tolerance: Tolerance = { pastSeconds: config.tolerancePastSeconds, futureSeconds: config.toleranceFutureSeconds };
  const kept = [...parts.keptHeaders, ...COMMON_KEPT_HEADERS];
  return {
    name: config.name,
    secretId: config.secretId,
    previousSecretGraceSeconds: config.previousSecretGraceSeconds ?? Defaults.PREVIOUS_SECRET_GRACE_SECONDS,
    signingKeys: (versions) => versions.flatMap((version) => signingKey(version, parts.decodeKey)),
    verify: (headers, body, keys, nowSeconds, request) => parts.verify(headers, body, keys, nowSeconds, tolerance, request),
    admit: refusingDeepBodies(config.authoritativeRead ? withResourceId(parts.admit, config.authoritativeRead.idJsonPath) : parts.admit),
    ...(parts.refusalStatus ? { refusalStatus: parts.refusalStatus } : {}),
    ...(parts.answerSubscriptionCheck ? { answerSubscriptionCheck: parts.answerSubscriptionCheck } : {}),
    allowsSource: sourceAllowList(config.allowedSourceCidrs),
    metadata: (headers) => pickHeaders(headers, kept),
    observe: parts.observe ?? (() => undefined),
    reportsJob: parts.reportsJob ?? (() => false),
    effectOf: parts.effectOf ?? (() => undefined),
    describe: describer(parts.describes ?? {}, providerFactsOf(config.adapter)?.eventType, config),
    filter: deliveryFilter(config.filter),
  };
}

/** Reads a delivery's description; the body is parsed (once) only when a path is asked for. */
function describer(rule: DescriptionRule, typeAt: EventTypeLocation | undefined, config: ProviderRuntimeConfig): ProviderAdapter['describe'] {
  const resourcePath = config.authoritativeRead?.idJsonPath ?? rule.resourcePath;
  const tenantPath = config.tenantJsonPath;
  const readsBody = [typeAt?.jsonPath, resourcePath, tenantPath].some((path) => path !== undefined);
  return (headers, body) => {
    const parsed = readsBody ? parseJsonObject(body) : undefined;
    const at = (path: string | undefined) => (path !== undefined && parsed ? valueAtPath(parsed, path) : undefined);
    const eventType = eventTypeName(typeAt?.header !== undefined ? headers[typeAt.header] : at(typeAt?.jsonPath));
    const resourceId = scalarText(at(resourcePath));
    const tenant = scalarText(at(tenantPath));
    return { ...(eventType ? { eventType } : {}), ...(resourceId ? { resourceId } : {}), ...(tenant ? { tenant } : {}) };
  };
}

/** A JSON string, or a finite number as text; undefined for anything else and for an empty string. */
function scalarText(value: unknown): string | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/** An event type the record may carry as it came: a name (EVENT_TYPE_PATTERN), never free text. */
function eventTypeName(value: unknown): string | undefined {
  const text = scalarText(value);
  return text !== undefined && EVENT_TYPE_PATTERN.test(text) ? text : undefined;
}

/**
 * Whatever the provider, a body nested deeper than `Limits.MAX_JSON_DEPTH` is refused before it is
 * read: admitted, it could never be processed, as the effect that carries it could not be
 * serialized (the stack overflows) nor published (EventBridge stops at 1,000 levels). A delivery
 * and a polled result alike.
 */
function refusingDeepBodies(admit: AdapterParts['admit']): AdapterParts['admit'] {
  const limit = Limits.MAX_JSON_DEPTH;
  return (headers, body, key, request) =>
    nestsDeeperThan(body, limit)
      ? { kind: 'too_deep', detail: `body nests JSON arrays and objects deeper than ${limit} levels` }
      : admit(headers, body, key, request);
}

/**
 * An event of a provider with an authoritative read must name its resource: the processor reads
 * it before anything is exposed, so a body without one is refused at the edge, never admitted to
 * fail every attempt.
 */
function withResourceId(admit: AdapterParts['admit'], idJsonPath: string): AdapterParts['admit'] {
  return (headers, body, key, request) => {
    const admission = admit(headers, body, key, request);
    if (admission.kind !== 'event') return admission;
    const read = readResourceId(body, idJsonPath);
    return typeof read === 'string' ? admission : { kind: 'malformed', detail: `${read.field} ${read.problem}` };
  };
}

/** Whether an address is in the provider's allowed ranges; every address when it names none. */
function sourceAllowList(cidrs: readonly string[] | undefined): (sourceIp: string) => boolean {
  if (!cidrs || cidrs.length === 0) return () => true;
  const allowed = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/');
    const family = isIPv6(address) ? 'ipv6' : 'ipv4';
    allowed.addSubnet(address, Number(prefix ?? (family === 'ipv6' ? 128 : 32)), family);
  }
  return (sourceIp) => {
    const family = isIPv6(sourceIp) ? 'ipv6' : isIPv4(sourceIp) ? 'ipv4' : undefined;
    return family !== undefined && allowed.check(sourceIp, family);
  };
}

/** The resource id at `path` of a JSON body (a string, or a number as text), or what is wrong with it. */
export function readResourceId(body: Buffer, path: string): string | { readonly field: string; readonly problem: string } {
  const parsed = parseJsonObject(body);
  if (!parsed) return { field: 'body', problem: 'is not a JSON object' };
  const value = valueAtPath(parsed, path);
  const id = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  const problem = idProblem(id);
  return problem === undefined ? (id as string) : { field: path, problem };
}

/**
 * One version as a signing key. A mistyped AWSPENDING or an old AWSPREVIOUS value that does not
 * decode must not take the provider down: it is left out. A bad AWSCURRENT value is an error.
 */
function signingKey(version: StagedValue, decodeKey: AdapterParts['decodeKey']): SigningKey[] {
  try {
    return [{ stage: version.stage, ...decodeKey(version.value) }];
  } catch (error) {
    if (version.stage === SecretStage.CURRENT) throw error;
    return [];
  }
}

/**
 * The secret's text as key bytes (GitHub, Stripe, Echonova, most HMAC senders). An empty value is
 * no key: HMAC accepts a zero-length key, and anyone can sign with it.
 */
export function utf8Key(value: string): Pick<SigningKey, 'bytes'> {
  if (value === '') throw new Error('signing secret is empty');
  return { bytes: Buffer.from(value, 'utf8') };
}

/**
 * The longest id a body or a header may carry, in UTF-8 bytes. Ids become DynamoDB keys: the
 * inbox key `<provider>#<eventId>` and the job-ref index key `<provider>#<jobRef>` hold at most
 * 2,048 bytes (provider names at most 63 characters), and a composite event id escapes its
 * fields (up to three bytes per byte): one id of this size beside an event name and a billing
 * cycle still fits.
 */
export const MAX_ID_BYTES = 512;

/** A UTF-16 surrogate without its pair: no UTF-8 text (and no DynamoDB key) can hold one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * What is wrong with a key field (a non-empty, well-formed string of at most `maxBytes` in UTF-8),
 * as a detail follows the field's name; undefined when it is usable.
 */
export function keyFieldProblem(value: unknown, maxBytes: number): string | undefined {
  if (typeof value !== 'string' || value === '') return 'is missing or not a string';
  if (value.search(LONE_SURROGATE) >= 0) return 'is not well-formed Unicode';
  return Buffer.byteLength(value, 'utf8') > maxBytes ? `is longer than ${maxBytes} bytes` : undefined;
}

/** What is wrong with an id, or undefined when it is usable. */
export function idProblem(value: unknown): string | undefined {
  return keyFieldProblem(value, MAX_ID_BYTES);
}

/**
 * An event id made of several fields: each escaped with encodeURIComponent (so none holds a `:`)
 * and joined with `:`, so that two different field lists never make one id. A field the edge
 * refuses (a lone surrogate) never throws here: it is replaced, and no row carries it anyway.
 */
export function compositeEventId(...fields: string[]): string {
  return fields.map((field) => encodeURIComponent(field.replace(LONE_SURROGATE, '\ufffd'))).join(':');
}

/** An event admission for a usable id, or a malformed one naming where the id should be. */
export function eventIdFrom(value: unknown, where: string): Admission {
  const problem = idProblem(value);
  return problem === undefined ? { kind: 'event', eventId: value as string } : { kind: 'malformed', detail: `${where} ${problem}` };
}

/** Reads the event id at a JSON path of the body. */
export function eventIdAtPath(body: Buffer, path: string): Admission {
  const parsed = parseJsonObject(body);
  return parsed ? eventIdFrom(valueAtPath(parsed, path), path) : { kind: 'malformed', detail: 'body is not a JSON object' };
}

/** Keeps only the named headers that are present. */
export function pickHeaders(headers: Headers, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (value !== undefined) picked[name] = value.slice(0, 512);
  }
  return picked;
}
