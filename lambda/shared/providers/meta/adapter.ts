import { timingSafeEqual } from 'node:crypto';
import { MetaSubscriptionCheck, ProviderRuntimeConfig } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { HandshakeAnswer } from '../../runtime/http';
import { HUB_SIGNATURE_256, verifyHmac } from '../../signatures/hmac';
import { SigningKey } from '../../signatures/signing-key';
import { buildAdapter, ProviderAdapter } from '../adapter';

/** The longest challenge echoed back: Meta's are short numbers; anything long is not Meta. */
const MAX_CHALLENGE_LENGTH = 256;

/**
 * Meta (Facebook Pages, Instagram, Messenger, WhatsApp Cloud API): `X-Hub-Signature-256:
 * sha256=<hex HMAC-SHA256 of the body with the app secret>`. Meta signs no timestamp and no id,
 * and one notification batches several entries: the event id is the body's digest (a retry is
 * the same body, a duplicate). The endpoint is checked with an unsigned GET whose
 * `hub.verify_token` must be the one configured beside the app secret, answered with its
 * `hub.challenge` as plain text.
 */
export function metaAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: metaKey,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, HUB_SIGNATURE_256),
    admit: (_headers, body) => ({ kind: 'event', eventId: sha256Hex(body) }),
    answerSubscriptionCheck,
    keptHeaders: [],
  });
}

/** The stored value: JSON `{"appSecret": "…", "verifyToken": "…"}`, both non-empty. */
export function metaKey(value: string): Pick<SigningKey, 'bytes' | 'verifyToken'> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error('the Meta secret must be JSON {"appSecret": "…", "verifyToken": "…"}');
  }
  const { appSecret, verifyToken } = (parsed ?? {}) as { appSecret?: unknown; verifyToken?: unknown };
  if (typeof appSecret !== 'string' || appSecret === '') throw new Error('the Meta secret has no appSecret');
  if (typeof verifyToken !== 'string' || verifyToken === '') throw new Error('the Meta secret has no verifyToken');
  return { bytes: Buffer.from(appSecret, 'utf8'), verifyToken };
}

/** The challenge, when the check is a subscription and presents a configured verify token (any staged one). */
export function answerSubscriptionCheck(query: URLSearchParams, keys: readonly SigningKey[]): HandshakeAnswer | undefined {
  const token = query.get(MetaSubscriptionCheck.VERIFY_TOKEN);
  const challenge = query.get(MetaSubscriptionCheck.CHALLENGE);
  if (query.get(MetaSubscriptionCheck.MODE) !== MetaSubscriptionCheck.SUBSCRIBE || token === null || challenge === null) return undefined;
  if (challenge === '' || challenge.length > MAX_CHALLENGE_LENGTH) return undefined;
  const presented = Buffer.from(token, 'utf8');
  const matches = keys.some((key) => {
    const expected = Buffer.from(key.verifyToken ?? '', 'utf8');
    return expected.length > 0 && expected.length === presented.length && timingSafeEqual(expected, presented);
  });
  return matches ? { status: 200, contentType: 'text/plain', body: challenge } : undefined;
}
