import { createHmac, timingSafeEqual } from 'node:crypto';
import { Headers } from '../../runtime/http';
import { acceptFresh, parseUnixSeconds, SigningKey, Tolerance, Verdict } from '../../signatures/signing-key';

const HEADER = 'paddle-signature';
const H1 = /^[0-9a-f]{64}$/;

/** The `name=value` pairs of a `Paddle-Signature` header, split at `;` and at each pair's first `=`, as sent (no trimming). */
function pairsOf(header: string | undefined): [name: string, value: string][] {
  return (header ?? '').split(';').map((pair) => {
    const at = pair.indexOf('=');
    return at < 0 ? ['', ''] : [pair.slice(0, at), pair.slice(at + 1)];
  });
}

/**
 * Verifies Paddle Billing's `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>…]` over `ts:body`
 * with HMAC-SHA256 keyed by the endpoint secret key's text. During a secret rotation Paddle sends
 * one `h1` per valid secret; any may match. Other schemes (`h2=`…) are ignored.
 */
export function verifyPaddle(headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number, tolerance: Tolerance): Verdict {
  const pairs = pairsOf(headers[HEADER]);
  const timestamps = pairs.filter(([name]) => name === 'ts');
  const timestamp = timestamps.length === 1 ? parseUnixSeconds(timestamps[0][1]) : undefined;
  if (timestamp === undefined) return { ok: false, reason: 'malformed', detail: `header ${HEADER} has no single ts= timestamp` };
  const candidates = pairs.filter(([name, value]) => name === 'h1' && H1.test(value)).map(([, value]) => Buffer.from(value, 'hex'));
  if (candidates.length === 0) return { ok: false, reason: 'malformed', detail: `header ${HEADER} has no h1 signature` };
  for (const key of keys) {
    // The timestamp is signed as its text arrived (a zero-padded one included).
    const expected = createHmac('sha256', key.bytes).update(`${timestamps[0][1]}:`).update(body).digest();
    if (candidates.some((candidate) => timingSafeEqual(candidate, expected))) {
      return acceptFresh(key, timestamp, nowSeconds, tolerance, `header ${HEADER} ts=`);
    }
  }
  return { ok: false, reason: 'bad_signature', detail: `header ${HEADER} matches no signing secret` };
}
