import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { verifyStripe } from './signature';
import { buildAdapter, eventIdAtPath, ProviderAdapter, utf8Key } from '../adapter';

/** Stripe: `Stripe-Signature: t=…,v1=…`; the event id is the body's `id` (`evt_…`). */
export function stripeAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: verifyStripe,
    admit: (_headers, body) => eventIdAtPath(body, 'id'),
    keptHeaders: [],
    describes: { resourcePath: 'data.object.id' },
  });
}
