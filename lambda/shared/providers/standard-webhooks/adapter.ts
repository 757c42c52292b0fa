import { ProviderRuntimeConfig } from '../../../../lib/contract';
import {
  decodeStandardWebhooksKey,
  standardWebhooksHeaderNames,
  STANDARD_WEBHOOKS_HEADERS,
  SVIX_HEADERS,
  verifyStandardWebhooks,
} from '../../signatures/standard-webhooks';
import { buildAdapter, eventIdFrom, ProviderAdapter } from '../adapter';

/**
 * Any Standard Webhooks sender (OpenAI, Svix, ...): `webhook-*` or `svix-*` headers, `v1` HMAC
 * and `v1a` Ed25519 signatures over `id.timestamp.body`. The signed `webhook-id` is the event id,
 * stable across retries.
 */
export function standardWebhooksAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: decodeStandardWebhooksKey,
    verify: (headers, body, keys, nowSeconds, tolerance) =>
      verifyStandardWebhooks(headers, body, keys, nowSeconds, tolerance, standardWebhooksHeaderNames(headers)),
    admit: (headers) => {
      const names = standardWebhooksHeaderNames(headers);
      return eventIdFrom(headers[names.id], `header ${names.id}`);
    },
    keptHeaders: [STANDARD_WEBHOOKS_HEADERS.id, STANDARD_WEBHOOKS_HEADERS.timestamp, SVIX_HEADERS.id, SVIX_HEADERS.timestamp],
    describes: { resourcePath: 'data.id' },
  });
}
