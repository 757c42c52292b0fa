import { createHmac, createPublicKey, KeyObject, timingSafeEqual, verify as verifySignature } from 'node:crypto';
import { Headers } from '../runtime/http';
import { acceptFresh, parseUnixSeconds, SigningKey, Tolerance, Verdict } from './signing-key';

/** Header names of a Standard Webhooks signature (Svix senders use the `svix-` prefix). */
export interface StandardWebhooksHeaderNames {
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
}

export const STANDARD_WEBHOOKS_HEADERS: StandardWebhooksHeaderNames = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
};

/** The same headers as Svix names them. */
export const SVIX_HEADERS: StandardWebhooksHeaderNames = {
  id: 'svix-id',
  timestamp: 'svix-timestamp',
  signature: 'svix-signature',
};

/**
 * The header set a delivery uses: the one with more of its headers present, `webhook-*` on a tie,
 * so that a rejection names the header actually missing (`svix-signature` beside `svix-id` and
 * `svix-timestamp`).
 */
export function standardWebhooksHeaderNames(headers: Headers): StandardWebhooksHeaderNames {
  const present = (names: StandardWebhooksHeaderNames) => Object.values(names).filter((name) => headers[name] !== undefined).length;
  return present(SVIX_HEADERS) > present(STANDARD_WEBHOOKS_HEADERS) ? SVIX_HEADERS : STANDARD_WEBHOOKS_HEADERS;
}

const SECRET_PREFIX = 'whsec_';
const PUBLIC_KEY_PREFIX = 'whpk_';
/** DER header of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const V1A_SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const V1_SIGNATURE = /^[A-Za-z0-9+/]{43}=$/;
const MAX_ID_LENGTH = 256;

/** Decodes a `whsec_<base64>` secret (the prefix is optional) into key bytes. */
export function decodeStandardWebhooksSecret(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (encoded.length === 0 || !BASE64.test(encoded)) {
    throw new Error('signing secret is not whsec_ followed by base64');
  }
  return Buffer.from(encoded, 'base64');
}

/**
 * Decodes a stored Standard Webhooks key: `whsec_<base64>` is an HMAC secret (v1),
 * `whpk_<base64>` an Ed25519 public key (v1a).
 */
export function decodeStandardWebhooksKey(value: string): Pick<SigningKey, 'bytes' | 'publicKey'> {
  if (!value.startsWith(PUBLIC_KEY_PREFIX)) return { bytes: decodeStandardWebhooksSecret(value) };
  const raw = decodeStandardWebhooksSecret(value.slice(PUBLIC_KEY_PREFIX.length));
  if (raw.length !== 32) throw new Error('whpk_ key is not a 32-byte Ed25519 public key');
  return { bytes: raw, publicKey: ed25519PublicKey(raw) };
}

/** The verification key of 32 raw Ed25519 public key bytes (Standard Webhooks `v1a`, Discord). */
export function ed25519PublicKey(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

function standardWebhooksMac(key: Buffer, id: string, timestamp: number, body: Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The `v1,<base64>` signature entry of `id.timestamp.body`, as a sender writes it. */
export function signStandardWebhooks(key: Buffer, id: string, timestamp: number, body: Buffer): string {
  return `v1,${standardWebhooksMac(key, id, timestamp, body).toString('base64')}`;
}

/**
 * Verifies a Standard Webhooks delivery over the exact bytes received. Any `v1` entry of the
 * space-separated signature list may match any key. Comparison is constant-time; every header
 * is checked for shape first so that a malformed header is a clear rejection, never an exception.
 */
export function verifyStandardWebhooks(
  headers: Headers,
  body: Buffer,
  keys: readonly SigningKey[],
  nowSeconds: number,
  tolerance: Tolerance,
  names: StandardWebhooksHeaderNames = STANDARD_WEBHOOKS_HEADERS,
): Verdict {
  const id = headers[names.id];
  if (!id || id.length > MAX_ID_LENGTH) {
    return { ok: false, reason: 'malformed', detail: `header ${names.id} is missing or too long` };
  }
  const timestamp = parseUnixSeconds(headers[names.timestamp]);
  if (timestamp === undefined) {
    return { ok: false, reason: 'malformed', detail: `header ${names.timestamp} is missing or not Unix seconds` };
  }
  const entries = signatureEntries(headers[names.signature]);
  const v1 = signaturesOf(entries, 'v1,', V1_SIGNATURE);
  const v1a = signaturesOf(entries, 'v1a,', V1A_SIGNATURE);
  if (v1.length === 0 && v1a.length === 0) {
    return { ok: false, reason: 'malformed', detail: `header ${names.signature} has no v1 or v1a signature` };
  }
  const matches = (key: SigningKey): boolean => {
    if (key.publicKey) {
      const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
      return v1a.some((signature) => verifySignature(null, content, key.publicKey!, signature));
    }
    if (v1.length === 0) return false;
    const expected = standardWebhooksMac(key.bytes, id, timestamp, body);
    return v1.some((candidate) => timingSafeEqual(candidate, expected));
  };
  for (const key of keys) {
    if (matches(key)) {
      return acceptFresh(key, timestamp, nowSeconds, tolerance, `header ${names.timestamp}`);
    }
  }
  return { ok: false, reason: 'bad_signature', detail: `header ${names.signature} matches no signing secret` };
}

/**
 * The entries of a signature header: space-separated, as the specification writes them; a comma
 * before a version tag also separates them, because API Gateway joins a header sent twice with
 * commas (`v1,AAA,v1,BBB`; some clients join with `, `) and base64 never holds a comma.
 */
function signatureEntries(header: string | undefined): string[] {
  return (header ?? '').split(/,? +|,(?=v1a?,)/);
}

function signaturesOf(entries: readonly string[], version: string, shape: RegExp): Buffer[] {
  return entries
    .filter((entry) => entry.startsWith(version) && shape.test(entry.slice(version.length)))
    .map((entry) => Buffer.from(entry.slice(version.length), 'base64'));
}
