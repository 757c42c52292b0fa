import { verify as verifySignature } from 'node:crypto';
import { DiscordHeaders } from '../../../../lib/contract';
import { Headers } from '../../runtime/http';
import { acceptFresh, parseUnixSeconds, SigningKey, Tolerance, Verdict } from '../../signatures/signing-key';
import { ed25519PublicKey } from '../../signatures/standard-webhooks';

const PUBLIC_KEY = /^[0-9a-fA-F]{64}$/;
const SIGNATURE = /^[0-9a-fA-F]{128}$/;

/** Decodes the application's public key as the Developer Portal shows it: 64 hex characters (32 bytes). */
export function decodeDiscordPublicKey(value: string): Pick<SigningKey, 'bytes' | 'publicKey'> {
  if (!PUBLIC_KEY.test(value)) throw new Error("signing secret is not the application's public key (64 hex characters)");
  const raw = Buffer.from(value, 'hex');
  return { bytes: raw, publicKey: ed25519PublicKey(raw) };
}

/**
 * Verifies a Discord interaction: `X-Signature-Ed25519` is the hex Ed25519 signature of the
 * `X-Signature-Timestamp` text followed by the raw body, by the application's key; the signed
 * timestamp must be within the tolerance. Both headers are checked for shape before any key.
 */
export function verifyDiscord(headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number, tolerance: Tolerance): Verdict {
  const timestampText = headers[DiscordHeaders.TIMESTAMP];
  const timestamp = parseUnixSeconds(timestampText);
  if (timestamp === undefined) {
    return { ok: false, reason: 'malformed', detail: `header ${DiscordHeaders.TIMESTAMP} is missing or not Unix seconds` };
  }
  const signatureText = headers[DiscordHeaders.SIGNATURE] ?? '';
  if (!SIGNATURE.test(signatureText)) {
    return { ok: false, reason: 'malformed', detail: `header ${DiscordHeaders.SIGNATURE} is missing or not 128 hex characters` };
  }
  const signature = Buffer.from(signatureText, 'hex');
  // The timestamp is signed as the text received (parseUnixSeconds admits digits only).
  const content = Buffer.concat([Buffer.from(timestampText!, 'utf8'), body]);
  for (const key of keys) {
    if (key.publicKey && verifySignature(null, content, key.publicKey, signature)) {
      return acceptFresh(key, timestamp, nowSeconds, tolerance, `header ${DiscordHeaders.TIMESTAMP}`);
    }
  }
  return { ok: false, reason: 'bad_signature', detail: `header ${DiscordHeaders.SIGNATURE} matches no public key` };
}
