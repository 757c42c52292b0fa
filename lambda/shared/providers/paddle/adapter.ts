import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { verifyPaddle } from './signature';
import { buildAdapter, eventIdAtPath, ProviderAdapter, utf8Key } from '../adapter';

/**
 * Paddle Billing: `Paddle-Signature: ts=…;h1=…` (several `h1` during a secret rotation); the
 * event id is the body's `event_id` (`evt_…`), the same on every retry and every replay of the
 * event. The notification id (one per destination and replay) is not the key.
 */
export function paddleAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: verifyPaddle,
    admit: (_headers, body) => eventIdAtPath(body, 'event_id'),
    keptHeaders: [],
    describes: { resourcePath: 'data.id' },
  });
}
