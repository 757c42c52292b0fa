import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { verifyHmac } from '../../signatures/hmac';
import { buildAdapter, ProviderAdapter, utf8Key } from '../adapter';

const SCHEME = {
  signatureHeader: 'x-shopify-hmac-sha256',
  algorithm: 'sha256',
  encoding: 'base64',
  prefix: '',
  signedContent: '{body}',
  secretEncoding: 'utf8',
} as const;

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>` keyed by the app's client
 * secret. Shopify signs neither a timestamp nor `X-Shopify-Webhook-Id`, so the id proves nothing:
 * the event id is the body's digest (a retry resends the original payload, and a replay under a
 * fresh id is the same body, a duplicate); the delivery headers are kept as row metadata.
 */
export function shopifyAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME),
    admit: (_headers, body) => ({ kind: 'event', eventId: sha256Hex(body) }),
    keptHeaders: ['x-shopify-topic', 'x-shopify-webhook-id', 'x-shopify-event-id', 'x-shopify-triggered-at', 'x-shopify-shop-domain', 'x-shopify-api-version'],
  });
}
