import type { KeyObject } from 'node:crypto';

/** One usable signing key, with the Secrets Manager stage it came from (for metrics and logs). */
export interface SigningKey {
  /** HMAC key bytes (for an asymmetric key: the raw public key). */
  readonly bytes: Buffer;
  readonly stage: string;
  /** Set for an asymmetric (Ed25519) verification key instead of an HMAC secret. */
  readonly publicKey?: KeyObject;
  /** The token a provider's unsigned subscription check must present (Meta's `hub.verify_token`), stored beside the secret. */
  readonly verifyToken?: string;
}

/** The stage a request's own signing certificate (SNS's) is counted under: it is no staged secret. */
export const CERTIFICATE_STAGE = 'certificate';

/** A failed authenticity check; the reason is also the metric and the log code. */
export interface Rejection {
  readonly ok: false;
  readonly reason: 'malformed' | 'stale_timestamp' | 'bad_signature';
  /** Names the header or field at fault; safe to return to the sender and to log. */
  readonly detail: string;
}

export interface Acceptance {
  readonly ok: true;
  readonly key: SigningKey;
  /** When the provider signed the delivery (epoch ms), for a scheme that signs a time; the delivery record's event timestamp. */
  readonly signedAtMs?: number;
}

export type Verdict = Acceptance | Rejection;

/** How far a signed timestamp may stray from now, in each direction. */
export interface Tolerance {
  readonly pastSeconds: number;
  readonly futureSeconds: number;
}

/**
 * Rejects a timestamp outside the tolerance window; undefined when it is fresh. `field` names
 * where the timestamp came from (e.g. `header webhook-timestamp`), so the sender is told.
 */
export function checkFreshness(timestampSeconds: number, nowSeconds: number, tolerance: Tolerance, field = 'timestamp'): Rejection | undefined {
  if (nowSeconds - timestampSeconds > tolerance.pastSeconds) {
    return { ok: false, reason: 'stale_timestamp', detail: `${field} is older than the tolerance` };
  }
  if (timestampSeconds - nowSeconds > tolerance.futureSeconds) {
    return { ok: false, reason: 'stale_timestamp', detail: `${field} is too far in the future` };
  }
  return undefined;
}

/** A verified signature over a signed time: accepted with that time when it is fresh, refused as stale otherwise. */
export function acceptFresh(key: SigningKey, timestampSeconds: number, nowSeconds: number, tolerance: Tolerance, field: string): Verdict {
  return checkFreshness(timestampSeconds, nowSeconds, tolerance, field) ?? { ok: true, key, signedAtMs: timestampSeconds * 1000 };
}

/** Parses a whole number of seconds, as signature headers carry it; undefined when it is not one. */
export function parseUnixSeconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,12}$/.test(value)) return undefined;
  return Number(value);
}
