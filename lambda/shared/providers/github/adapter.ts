import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { HUB_SIGNATURE_256, verifyHmac } from '../../signatures/hmac';
import { buildAdapter, ProviderAdapter, utf8Key } from '../adapter';

const EVENT_HEADER = 'x-github-event';
const DELIVERY_HEADER = 'x-github-delivery';
/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC of the body>`; `ping` is the test delivery.
 * GitHub signs neither a timestamp nor the `X-GitHub-Delivery` GUID, so the GUID proves nothing:
 * the event id is the body's digest (a redelivery, or a replay under a fresh GUID, is the same
 * body, a duplicate); the GUID is kept as row metadata for GitHub's delivery log.
 */
export function githubAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, HUB_SIGNATURE_256),
    admit: (headers, body) => (headers[EVENT_HEADER] === 'ping' ? { kind: 'test' } : { kind: 'event', eventId: sha256Hex(body) }),
    keptHeaders: [EVENT_HEADER, DELIVERY_HEADER, 'x-github-hook-id'],
  });
}
