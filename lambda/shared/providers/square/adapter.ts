import { ProviderRuntimeConfig, SQUARE_SIGNATURE_HEADER } from '../../../../lib/contract';
import { ConfigurationError } from '../../runtime/errors';
import { HmacSchemeSpec, verifyHmac } from '../../signatures/hmac';
import { buildAdapter, eventIdAtPath, ProviderAdapter, utf8Key } from '../adapter';

/** What Square tells about a delivery beside its body (none of it signed, none of it a signature). */
const KEPT_HEADERS = ['square-environment', 'square-initial-delivery-timestamp', 'square-retry-number', 'square-retry-reason'];

/**
 * Square: `X-Square-HmacSha256-Signature` is the base64 HMAC-SHA256 of the notification URL, as
 * registered with Square, followed by the raw body, keyed by the subscription's signature key
 * text. Square signs no time: the event id is the signed body's `event_id`, the same on every
 * retry, so a replay is a duplicate.
 */
export function squareAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  if (!config.notificationUrl) throw new ConfigurationError(`provider ${config.name}: notificationUrl is required`);
  const scheme = squareScheme(config.notificationUrl);
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, scheme),
    admit: (_headers, body) => eventIdAtPath(body, 'event_id'),
    keptHeaders: KEPT_HEADERS,
    describes: { resourcePath: 'data.id' },
  });
}

/**
 * The URL is the literal text before `{body}`: it can hold no other placeholder, since a URL
 * holds no braces unencoded (refused with the configuration, at synth and at cold start).
 */
function squareScheme(notificationUrl: string): HmacSchemeSpec {
  return { signatureHeader: SQUARE_SIGNATURE_HEADER, algorithm: 'sha256', encoding: 'base64', prefix: '', signedContent: `${notificationUrl}{body}` };
}
