import { ProviderRuntimeConfig } from '../../../lib/contract';
import { verifyHmac } from '../hmac-signature';
import { buildAdapter, eventIdFrom, ProviderAdapter, utf8Key } from './adapter';

const EVENT_HEADER = 'x-github-event';
const DELIVERY_HEADER = 'x-github-delivery';
const SCHEME = {
  signatureHeader: 'x-hub-signature-256',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: 'sha256=',
  signedContent: '{body}',
  secretEncoding: 'utf8',
} as const;

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC of the body>`; the event id is the
 * `X-GitHub-Delivery` GUID (kept on redelivery); `ping` is the test delivery. GitHub signs
 * neither a timestamp nor the delivery id.
 */
export function githubAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME),
    admit: (headers) =>
      headers[EVENT_HEADER] === 'ping' ? { kind: 'test' } : eventIdFrom(headers[DELIVERY_HEADER], `header ${DELIVERY_HEADER}`),
    keptHeaders: [EVENT_HEADER, DELIVERY_HEADER, 'x-github-hook-id'],
  });
}
