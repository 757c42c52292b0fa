import { createHmac, timingSafeEqual } from 'node:crypto';
import { Headers } from './http';
import { checkFreshness, parseUnixSeconds, SigningKey, Tolerance, Verdict } from './signing-key';

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

const SECRET_PREFIX = 'whsec_';
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
  const candidates = (headers[names.signature] ?? '')
    .split(' ')
    .filter((entry) => entry.startsWith('v1,') && V1_SIGNATURE.test(entry.slice(3)))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  if (candidates.length === 0) {
    return { ok: false, reason: 'malformed', detail: `header ${names.signature} has no v1 signature` };
  }
  for (const key of keys) {
    const expected = standardWebhooksMac(key.bytes, id, timestamp, body);
    if (candidates.some((candidate) => timingSafeEqual(candidate, expected))) {
      return checkFreshness(timestamp, nowSeconds, tolerance, `header ${names.timestamp}`) ?? { ok: true, key };
    }
  }
  return { ok: false, reason: 'bad_signature', detail: `header ${names.signature} matches no signing secret` };
}
