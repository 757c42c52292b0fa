import { createHmac, timingSafeEqual } from 'node:crypto';
import { Headers } from '../../runtime/http';
import { acceptFresh, parseUnixSeconds, SigningKey, Tolerance, Verdict } from '../../signatures/signing-key';

const HEADER = 'stripe-signature';
const V1 = /^[0-9a-f]{64}$/;

/**
 * Verifies Stripe's `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]` over `t.body` with
 * HMAC-SHA256 keyed by the endpoint secret's text. During a secret roll Stripe sends one `v1` per
 * valid secret; any may match.
 */
export function verifyStripe(headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number, tolerance: Tolerance): Verdict {
  const pairs = (headers[HEADER] ?? '').split(',').map((pair) => {
    const at = pair.indexOf('=');
    return at < 0 ? ['', ''] : [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
  });
  const timestamps = pairs.filter(([name]) => name === 't');
  const timestamp = timestamps.length === 1 ? parseUnixSeconds(timestamps[0][1]) : undefined;
  if (timestamp === undefined) return { ok: false, reason: 'malformed', detail: `header ${HEADER} has no single t= timestamp` };
  const candidates = pairs.filter(([name, value]) => name === 'v1' && V1.test(value)).map(([, value]) => Buffer.from(value, 'hex'));
  if (candidates.length === 0) return { ok: false, reason: 'malformed', detail: `header ${HEADER} has no v1 signature` };
  for (const key of keys) {
    const expected = createHmac('sha256', key.bytes).update(`${timestamp}.`).update(body).digest();
    if (candidates.some((candidate) => timingSafeEqual(candidate, expected))) {
      return acceptFresh(key, timestamp, nowSeconds, tolerance, `header ${HEADER} t=`);
    }
  }
  return { ok: false, reason: 'bad_signature', detail: `header ${HEADER} matches no signing secret` };
}
