import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { DedupeResult, DeliveryRecordMessage, MetricName, SignatureResult } from '../../lib/contract';
import { Admission, ProviderAdapter } from '../shared/providers/adapter';
import { logReference, resourceReference, sha256Hex, tenantReference } from '../shared/runtime/digest';
import { HandshakeAnswer, InboundRequest, IngressEvent, parseIngressEvent, Reason, respond, respondToHandshake } from '../shared/runtime/http';
import { admitDelivery, AdmissionResult, placement } from '../shared/admission';
import { BodyStore } from '../shared/stores/body-store';
import { deliveryKey, InboxStore } from '../shared/stores/inbox';
import { SecretCache, SecretStage, SecretVersion, usableVersions } from '../shared/signatures/secrets';
import { Acceptance, CERTIFICATE_STAGE, Verdict } from '../shared/signatures/signing-key';
import { SigningCertificates, SubscriptionConfirmer } from '../shared/providers/sns/sns-client';
import { ConfigurationError, safeErrorFields } from '../shared/runtime/errors';
import { LogFields, Telemetry } from '../shared/runtime/telemetry';
import { WorkQueue } from '../shared/stores/work-queue';
import { RejectionRecorder } from './rejections';

export interface VerifierDependencies {
  readonly adapters: ReadonlyMap<string, ProviderAdapter>;
  readonly secrets: SecretCache;
  /** The certificates requests name (SNS's); needed when a provider's requests name theirs. */
  readonly certificates?: SigningCertificates;
  /** Confirms the subscriptions a handshake asks to (SNS's); needed with `certificates`. */
  readonly confirmations?: SubscriptionConfirmer;
  readonly inbox: InboxStore;
  readonly queue: WorkQueue;
  /** Where bodies larger than `inlineBodyBytes` go; absent when every accepted body fits a row. */
  readonly bodies?: BodyStore;
  readonly inlineBodyBytes?: number;
  readonly telemetry: Telemetry;
  readonly now: () => number;
  readonly maxBodyBytes: number;
  readonly retentionSeconds: number;
  /** Leaves a bounded record of each request refused at the authenticity check; absent: none. */
  readonly rejections?: RejectionRecorder;
}

const METRIC_OF: Readonly<Record<Reason, string | undefined>> = {
  accepted: MetricName.ACCEPTED,
  duplicate: MetricName.DUPLICATE,
  quarantined: MetricName.QUARANTINED,
  test: MetricName.TEST_DELIVERY,
  not_final: MetricName.NOT_FINAL,
  filtered: MetricName.FILTERED,
  handshake: MetricName.HANDSHAKE,
  source_not_allowed: MetricName.SOURCE_NOT_ALLOWED,
  subscription_refused: MetricName.AUTHENTICATION_FAILED,
  bad_signature: MetricName.BAD_SIGNATURE,
  stale_timestamp: MetricName.STALE_TIMESTAMP,
  malformed: MetricName.MALFORMED,
  body_too_deep: MetricName.BODY_TOO_DEEP,
  too_large: MetricName.TOO_LARGE,
  store_error: MetricName.STORE_ERROR,
  secret_unavailable: MetricName.SECRET_UNAVAILABLE,
  certificate_unavailable: MetricName.CERTIFICATE_UNAVAILABLE,
  confirmation_failed: MetricName.CONFIRMATION_FAILED,
  unknown_provider: undefined,
  internal_error: undefined,
};

type Signature = (typeof SignatureResult)[keyof typeof SignatureResult];

/** What each answer says of the event id (`dedupeResult` of the delivery record). */
const DEDUPE_OF: Readonly<Record<Reason, (typeof DedupeResult)[keyof typeof DedupeResult]>> = {
  accepted: DedupeResult.NEW,
  duplicate: DedupeResult.DUPLICATE,
  quarantined: DedupeResult.CONFLICT,
  store_error: DedupeResult.STORE_ERROR,
  test: DedupeResult.NOT_STORED,
  not_final: DedupeResult.NOT_STORED,
  filtered: DedupeResult.NOT_STORED,
  handshake: DedupeResult.NOT_STORED,
  source_not_allowed: DedupeResult.NOT_STORED,
  subscription_refused: DedupeResult.NOT_STORED,
  bad_signature: DedupeResult.NOT_STORED,
  stale_timestamp: DedupeResult.NOT_STORED,
  malformed: DedupeResult.NOT_STORED,
  body_too_deep: DedupeResult.NOT_STORED,
  too_large: DedupeResult.NOT_STORED,
  secret_unavailable: DedupeResult.NOT_STORED,
  certificate_unavailable: DedupeResult.NOT_STORED,
  confirmation_failed: DedupeResult.NOT_STORED,
  unknown_provider: DedupeResult.NOT_STORED,
  internal_error: DedupeResult.NOT_STORED,
};

/** Which staged version a verified delivery was signed with. */
const MATCHED_METRIC_OF: Readonly<Record<string, string>> = {
  [SecretStage.CURRENT]: MetricName.MATCHED_CURRENT_SECRET,
  [SecretStage.PENDING]: MetricName.MATCHED_PENDING_SECRET,
  [SecretStage.PREVIOUS]: MetricName.MATCHED_PREVIOUS_SECRET,
};

interface Decision {
  readonly reason: Reason;
  readonly detail?: string;
  readonly fields?: LogFields;
  /** The answer a handshake asks for, instead of the reason's own. */
  readonly answer?: HandshakeAnswer;
  /** The status the provider documents for this refusal, instead of the reason's own. */
  readonly status?: number;
  /** Refused at the authenticity check (source, signature, timestamp, signature headers, verify token): worth a rejection record. */
  readonly unauthentic?: boolean;
  /** How the authenticity check went; absent: it was not reached. */
  readonly signature?: Signature;
}

/**
 * The verifier: verify the raw bytes, write the row conditionally, answer. It answers 2xx only
 * once the row is durable; the enqueue that follows is best effort, because the reconciler's
 * sweep re-enqueues any row left pending.
 */
export function createVerifier(deps: VerifierDependencies) {
  return async (event: IngressEvent): Promise<APIGatewayProxyStructuredResultV2> => {
    const started = deps.now();
    let provider: string | undefined;
    let request: InboundRequest | undefined;
    let decision: Decision;
    try {
      const parsed = parseIngressEvent(event, deps.maxBodyBytes);
      const named = parsed.ok ? parsed.request.provider : parsed.provider;
      const adapter = named === undefined ? undefined : deps.adapters.get(named);
      // Only a served provider names a metric dimension or a log field: a path is the sender's to choose.
      provider = adapter?.name;
      if (parsed.ok) request = parsed.request;
      if (!adapter) {
        decision = { reason: 'unknown_provider', detail: 'no provider is served at this path' };
      } else if (!parsed.ok) {
        decision = parsed;
      } else if (!adapter.allowsSource(parsed.request.sourceIp)) {
        // Before any secret is read: an address outside the provider's ranges is not the provider.
        decision = { reason: 'source_not_allowed', detail: 'the source address is not one the provider sends from', unauthentic: true };
      } else if (parsed.request.method === 'GET') {
        decision = await checkSubscription(adapter, parsed.request, deps);
      } else {
        decision = await admit(adapter, parsed.request, deps);
      }
    } catch (error) {
      decision = { reason: 'internal_error', fields: safeErrorFields(error) };
    }
    const metric = METRIC_OF[decision.reason];
    if (metric) deps.telemetry.count(metric, provider);
    const response = decision.answer ? respondToHandshake(decision.answer) : respond(decision.reason, decision.detail, decision.status);
    if (decision.unauthentic && provider !== undefined && request !== undefined) {
      // Never throws, and bounded in time: the answer above is final.
      await deps.rejections?.record({ provider, reason: decision.reason, httpStatus: response.statusCode!, request });
    }
    // The delivery record's line (docs/DELIVERY-RECORD.md): one per request, never a body, a header's
    // value or a secret; the request's metrics ride in it.
    deps.telemetry.logAndFlush(response.statusCode! >= 500 ? 'ERROR' : 'INFO', DeliveryRecordMessage.RECEIVED, {
      provider,
      reason: decision.reason,
      detail: decision.detail,
      status: response.statusCode,
      signatureResult: decision.signature ?? SignatureResult.NOT_CHECKED,
      dedupeResult: DEDUPE_OF[decision.reason],
      receivedAt: new Date(started).toISOString(),
      requestId: event.requestContext?.requestId,
      durationMs: deps.now() - started,
      ...decision.fields,
    });
    return response;
  };
}

/**
 * A provider's unsigned GET check of the endpoint (Meta's subscription): answered with what it
 * asks for when it presents the token stored beside the secret, refused 403 otherwise. Nothing is stored.
 */
async function checkSubscription(adapter: ProviderAdapter, request: InboundRequest, deps: VerifierDependencies): Promise<Decision> {
  if (!adapter.answerSubscriptionCheck) return { reason: 'unknown_provider', detail: 'this provider is not checked with a GET' };
  let keys;
  try {
    keys = adapter.signingKeys(usableFor(adapter, await deps.secrets.versions(adapter.secretId!), deps));
  } catch (error) {
    return { reason: 'secret_unavailable', fields: safeErrorFields(error) };
  }
  const answer = adapter.answerSubscriptionCheck(new URLSearchParams(request.rawQueryString), keys);
  return answer
    ? { reason: 'handshake', answer, signature: SignatureResult.VALID }
    : {
        reason: 'subscription_refused',
        detail: 'the verify token or the challenge is missing or wrong',
        unauthentic: true,
        signature: SignatureResult.BAD_SIGNATURE,
      };
}

/** The staged values a request may be verified with: AWSCURRENT, AWSPENDING, and AWSPREVIOUS within the provider's grace after a rotation. */
function usableFor(adapter: ProviderAdapter, versions: readonly SecretVersion[], deps: VerifierDependencies): SecretVersion[] {
  return usableVersions(versions, deps.now(), adapter.previousSecretGraceSeconds);
}

interface VerificationAttempt {
  readonly verdict: Verdict;
  /** Stages whose value was left out because it does not decode as a key. */
  readonly undecodableStages: readonly string[];
}

/** Verifies against the keys the staged values make; after a bad signature, tells which values could not make one. */
function verifyAgainst(adapter: ProviderAdapter, request: InboundRequest, nowSeconds: number, versions: readonly SecretVersion[]): VerificationAttempt {
  const keys = adapter.signingKeys(versions);
  const verdict = adapter.verify(request.headers, request.body, keys, nowSeconds, request);
  // Off the accepted path: only a bad signature asks which staged value was left out.
  if (verdict.ok || verdict.reason !== 'bad_signature' || keys.length === versions.length) return { verdict, undecodableStages: [] };
  const decoded = new Set(keys.map((key) => key.stage));
  return { verdict, undecodableStages: versions.filter((version) => !decoded.has(version.stage)).map((version) => version.stage) };
}

async function admit(adapter: ProviderAdapter, request: InboundRequest, deps: VerifierDependencies): Promise<Decision> {
  const attempt = adapter.signingCertificateUrl ? await verifyWithCertificate(adapter, request, deps) : await verifyWithSecrets(adapter, request, deps);
  if ('reason' in attempt) return attempt;
  const verdict = attempt.verdict;
  if (!verdict.ok) {
    // Junk signatures are forgery too: every refusal here feeds the signature-failure alarm.
    deps.telemetry.count(MetricName.AUTHENTICATION_FAILED, adapter.name);
    const refusal = {
      reason: verdict.reason,
      detail: verdict.detail,
      unauthentic: true,
      signature: verdict.reason,
      ...(adapter.refusalStatus ? { status: adapter.refusalStatus } : {}),
    };
    // Only a bad signature names undecodable stages: a mistyped AWSPENDING looks exactly like
    // forgery from outside, so say which value is at fault.
    if (attempt.undecodableStages.length === 0) return refusal;
    deps.telemetry.count(MetricName.UNUSABLE_SECRET_VERSION, adapter.name);
    return { ...refusal, fields: { unusableSecretStages: attempt.undecodableStages.join(',') } };
  }
  const matched = MATCHED_METRIC_OF[verdict.key.stage];
  if (matched) deps.telemetry.count(matched, adapter.name);
  const { eventType, fields } = describe(adapter, request, verdict);
  const decision = await admitVerified(adapter, request, verdict, eventType, deps);
  return { ...decision, signature: SignatureResult.VALID, fields: { ...fields, ...decision.fields } };
}

/** What the delivery record names of a verified delivery: its type (which the filter reads too), signed time, and its resource and tenant hashed. */
function describe(adapter: ProviderAdapter, request: InboundRequest, verdict: Acceptance): { eventType?: string; fields: LogFields } {
  const { eventType, resourceId, tenant } = adapter.describe(request.headers, request.body);
  return {
    eventType,
    fields: {
      eventType,
      resourceRef: resourceId === undefined ? undefined : resourceReference(adapter.name, resourceId),
      eventTimestamp: verdict.signedAtMs === undefined ? undefined : new Date(verdict.signedAtMs).toISOString(),
      tenantRef: tenant === undefined ? undefined : tenantReference(tenant),
    },
  };
}

/** A verified request: a handshake or a test answered, a task not final or an event the filter drops acknowledged, or an event stored. */
async function admitVerified(
  adapter: ProviderAdapter,
  request: InboundRequest,
  verdict: Acceptance,
  eventType: string | undefined,
  deps: VerifierDependencies,
): Promise<Decision> {
  const { headers, body } = request;
  const admission = adapter.admit(headers, body, verdict.key, request);
  if (admission.kind === 'handshake') return handshake(admission, deps);
  if (admission.kind === 'test') return { reason: 'test' };
  if (admission.kind === 'not_final') return { reason: 'not_final' };
  if (admission.kind === 'malformed') return { reason: 'malformed', detail: admission.detail };
  if (admission.kind === 'too_deep') return { reason: 'body_too_deep', detail: admission.detail };
  if (admission.kind === 'event') {
    // After authentication only: an unverified request never learns what the filter keeps.
    const dropped = adapter.filter(eventType, body);
    // The answer is the bare `filtered` (or the one the provider requires to every event: Discord's);
    // why is the record's to say, not the sender's.
    if (dropped !== undefined) return { reason: 'filtered', fields: { filterDetail: dropped }, ...(admission.answer ? { answer: admission.answer } : {}) };
  }

  const stored = await store(adapter, request, admission, verdict, deps);
  // The answer a provider requires to a stored event (Discord's deferred interaction response), whatever the row's outcome.
  const answer = admission.kind === 'event' ? admission.answer : undefined;
  return answer && STORED_REASONS.includes(stored.reason) ? { ...stored, answer } : stored;
}

/** Verifies against the secret's staged values, reading them again (at a bounded rate) after a bad signature. */
async function verifyWithSecrets(adapter: ProviderAdapter, request: InboundRequest, deps: VerifierDependencies): Promise<VerificationAttempt | Decision> {
  try {
    const nowSeconds = Math.floor(deps.now() / 1000);
    const verifyWith = (versions: readonly SecretVersion[]) => verifyAgainst(adapter, request, nowSeconds, usableFor(adapter, versions, deps));
    const attempt = verifyWith(await deps.secrets.versions(adapter.secretId!));
    if (attempt.verdict.ok || attempt.verdict.reason !== 'bad_signature') return attempt;
    // The secret may have changed since it was cached: read it again, at a bounded rate.
    const refreshed = await deps.secrets.refreshAfterMiss(adapter.secretId!);
    return refreshed ? verifyWith(refreshed) : attempt;
  } catch (error) {
    return { reason: 'secret_unavailable', fields: safeErrorFields(error) };
  }
}

/** Verifies with the certificate the request names, once the adapter has checked it is the provider's. */
async function verifyWithCertificate(adapter: ProviderAdapter, request: InboundRequest, deps: VerifierDependencies): Promise<VerificationAttempt | Decision> {
  const located = adapter.signingCertificateUrl!(request.headers, request.body);
  if ('ok' in located) return { verdict: located, undecodableStages: [] };
  if (!deps.certificates) throw new ConfigurationError(`provider ${adapter.name}: no certificate source is configured`);
  let publicKey;
  try {
    publicKey = await deps.certificates.publicKey(located.url, deps.now());
  } catch (error) {
    return { reason: 'certificate_unavailable', detail: 'the signing certificate could not be fetched', fields: safeErrorFields(error) };
  }
  const key = { stage: CERTIFICATE_STAGE, bytes: Buffer.alloc(0), publicKey };
  return { verdict: adapter.verify(request.headers, request.body, [key], Math.floor(deps.now() / 1000), request), undecodableStages: [] };
}

/** A handshake's answer, once the subscription it asks to confirm (SNS's) is confirmed. */
async function handshake(admission: Extract<Admission, { kind: 'handshake' }>, deps: VerifierDependencies): Promise<Decision> {
  if (admission.confirmUrl !== undefined) {
    if (!deps.confirmations) throw new ConfigurationError('no subscription confirmer is configured');
    try {
      await deps.confirmations.confirm(admission.confirmUrl);
    } catch (error) {
      return { reason: 'confirmation_failed', detail: 'the subscription could not be confirmed', fields: safeErrorFields(error) };
    }
  }
  return { reason: 'handshake', answer: admission.answer };
}

/** The outcomes of a stored delivery: each is a 2xx, acknowledging it to the provider. */
const STORED_REASONS: readonly Reason[] = ['accepted', 'duplicate', 'quarantined'];

/** Writes a verified event's row conditionally (or sets an anomaly's copy aside); the decision says how it went. */
async function store(
  adapter: ProviderAdapter,
  request: InboundRequest,
  admission: Extract<Admission, { kind: 'event' | 'anomaly' }>,
  verdict: Acceptance,
  deps: VerifierDependencies,
): Promise<Decision> {
  const { headers, body } = request;
  const now = deps.now();
  const meta = adapter.metadata(headers);
  const key = deliveryKey(adapter.name, admission.eventId);
  const digest = sha256Hex(body);
  // The stage that verified is the line's Matched<Stage>Secret metric.
  const fields: LogFields = { eventRef: logReference(key), digest };
  let admitted: AdmissionResult;
  try {
    if (admission.kind === 'anomaly') {
      // Kept aside under the key it would claim, never a row or a result of its own.
      const { location, expiresAt } = await placement(deps, { provider: adapter.name, body, digest, now });
      await deps.inbox.quarantine(key, { provider: adapter.name, digest, ...location, meta, receivedAt: now, expiresAt });
      return { reason: 'quarantined', detail: admission.detail, fields };
    }
    // A level event's repeats carry other bodies legitimately (Echonova's spending.exhausted): no need to compare.
    admitted = await admitDelivery(deps, {
      provider: adapter.name,
      eventId: admission.eventId,
      body,
      digest,
      meta,
      now,
      jobRef: admission.jobRef,
      readsOriginal: !admission.repeatable,
      eventAt: verdict.signedAtMs,
    });
    if (admitted.kind === 'exists') {
      const { original, location, expiresAt } = admitted;
      if (admission.repeatable || original?.digest === digest) return { reason: 'duplicate', fields };
      // The row vanished between the two reads (expired): let the sender retry into a clean insert.
      if (original === undefined) return { reason: 'store_error', fields: { ...fields, error: 'RowVanished' } };
      // The reconciler fed this row from the provider's API after the deliveries were given up:
      // the same result, serialized anew (Answerline's credits move on), not an altered copy.
      if (original.recovered) return { reason: 'duplicate', fields: { ...fields, originalDigest: original.digest, recoveredByPoll: true } };
      await deps.inbox.quarantine(key, { provider: adapter.name, digest, ...location, meta, receivedAt: now, expiresAt });
      return { reason: 'quarantined', fields: { ...fields, originalDigest: original.digest } };
    }
  } catch (error) {
    return { reason: 'store_error', fields: { ...fields, ...safeErrorFields(error) } };
  }
  if (admitted.enqueueError !== undefined) {
    deps.telemetry.count(MetricName.ENQUEUE_FAILED, adapter.name);
    return { reason: 'accepted', fields: { ...fields, enqueue: 'failed', ...safeErrorFields(admitted.enqueueError) } };
  }
  return { reason: 'accepted', fields };
}
