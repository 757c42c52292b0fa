import { createHmac, timingSafeEqual } from 'node:crypto';
import { SIGNED_CONTENT_PLACEHOLDER, signedContentPlaceholders } from '../../../lib/contract';
import { Headers } from '../runtime/http';
import { acceptFresh, parseUnixSeconds, SigningKey, Tolerance, Verdict } from './signing-key';

export type HmacAlgorithm = 'sha256' | 'sha512';
export type SignatureEncoding = 'hex' | 'base64';

/**
 * A generic HMAC signature scheme: which header carries the signature, how it is encoded, and
 * which content is signed. The content template joins literal text with the placeholders
 * `{body}` (the raw bytes, exactly once), `{timestamp}` and `{id}` (header values).
 */
export interface HmacSchemeSpec {
  readonly signatureHeader: string;
  readonly algorithm: HmacAlgorithm;
  readonly encoding: SignatureEncoding;
  /** Text before each signature in the header, e.g. `sha256=`; empty when there is none. */
  readonly prefix: string;
  readonly signedContent: string;
  readonly timestampHeader?: string;
  readonly idHeader?: string;
}

/**
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, the scheme Meta's webhooks use and
 * GitHub's adopted: the body only, no timestamp, no id.
 */
export const HUB_SIGNATURE_256: HmacSchemeSpec = {
  signatureHeader: 'x-hub-signature-256',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: 'sha256=',
  signedContent: '{body}',
};

const DIGEST_BYTES: Readonly<Record<HmacAlgorithm, number>> = { sha256: 32, sha512: 64 };

function encodedLength(algorithm: HmacAlgorithm, encoding: SignatureEncoding): number {
  const bytes = DIGEST_BYTES[algorithm];
  return encoding === 'hex' ? bytes * 2 : Math.ceil(bytes / 3) * 4;
}

function decodeSignature(value: string, algorithm: HmacAlgorithm, encoding: SignatureEncoding): Buffer | undefined {
  if (value.length !== encodedLength(algorithm, encoding)) return undefined;
  const shape = encoding === 'hex' ? /^[0-9a-fA-F]+$/ : /^[A-Za-z0-9+/]+={0,2}$/;
  if (!shape.test(value)) return undefined;
  const decoded = Buffer.from(value, encoding);
  return decoded.length === DIGEST_BYTES[algorithm] ? decoded : undefined;
}

/** The MAC of the signed content, fed in pieces so the body is never copied into a string. */
export function hmacOf(key: Buffer, spec: HmacSchemeSpec, body: Buffer, values: { timestamp?: string; id?: string }): Buffer {
  const mac = createHmac(spec.algorithm, key);
  let last = 0;
  for (const match of spec.signedContent.matchAll(SIGNED_CONTENT_PLACEHOLDER)) {
    mac.update(spec.signedContent.slice(last, match.index));
    mac.update(match[1] === 'body' ? body : (values[match[1] as 'timestamp' | 'id'] ?? ''));
    last = match.index + match[0].length;
  }
  mac.update(spec.signedContent.slice(last));
  return mac.digest();
}

/**
 * Verifies a delivery under a generic HMAC scheme over the exact bytes received. The signature
 * header may hold several signatures (comma or space separated), each with the prefix; any may
 * match any key. Comparison is constant-time, after every header was checked for shape.
 */
export function verifyHmac(
  headers: Headers,
  body: Buffer,
  keys: readonly SigningKey[],
  nowSeconds: number,
  tolerance: Tolerance,
  spec: HmacSchemeSpec,
): Verdict {
  const values: { timestamp?: string; id?: string } = {};
  let timestamp: number | undefined;
  if (spec.timestampHeader) {
    timestamp = parseUnixSeconds(headers[spec.timestampHeader]);
    if (timestamp === undefined) {
      return { ok: false, reason: 'malformed', detail: `header ${spec.timestampHeader} is missing or not Unix seconds` };
    }
    // Sign the header text as received: a sender may write it zero-padded.
    values.timestamp = headers[spec.timestampHeader];
  }
  if (spec.idHeader && signedContentPlaceholders(spec.signedContent).includes('id')) {
    values.id = headers[spec.idHeader];
    if (!values.id || values.id.length > 256) {
      return { ok: false, reason: 'malformed', detail: `header ${spec.idHeader} is missing or too long` };
    }
  }
  const candidates = (headers[spec.signatureHeader] ?? '')
    .split(/[ ,]+/)
    .filter((entry) => entry.startsWith(spec.prefix))
    .map((entry) => decodeSignature(entry.slice(spec.prefix.length), spec.algorithm, spec.encoding))
    .filter((signature): signature is Buffer => signature !== undefined);
  if (candidates.length === 0) {
    return { ok: false, reason: 'malformed', detail: `header ${spec.signatureHeader} has no ${spec.prefix || spec.encoding} signature` };
  }
  for (const key of keys) {
    const expected = hmacOf(key.bytes, spec, body, values);
    if (candidates.some((candidate) => timingSafeEqual(candidate, expected))) {
      return timestamp === undefined ? { ok: true, key } : acceptFresh(key, timestamp, nowSeconds, tolerance, `header ${spec.timestampHeader}`);
    }
  }
  return { ok: false, reason: 'bad_signature', detail: `header ${spec.signatureHeader} matches no signing secret` };
}
