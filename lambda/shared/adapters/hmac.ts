import { ProviderRuntimeConfig } from '../../../lib/contract';
import { ConfigurationError } from '../errors';
import { verifyHmac } from '../hmac-signature';
import { decodeStandardWebhooksSecret } from '../standard-webhooks';
import { buildAdapter, eventIdAtPath, eventIdFrom, ProviderAdapter, utf8Key } from './adapter';

/** Any HMAC-signed webhook, described by the scheme the construct passes (`hmac()` provider). */
export function hmacAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  const scheme = config.hmac;
  if (!scheme) throw new ConfigurationError(`provider ${config.name}: the hmac adapter needs its scheme`);
  const { idHeader, idJsonPath, timestampHeader } = scheme;
  return buildAdapter(config, {
    // A base64 secret may carry a `whsec_` prefix, as several senders print it.
    decodeKey: scheme.secretEncoding === 'base64' ? (value) => ({ bytes: decodeStandardWebhooksSecret(value) }) : utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, scheme),
    admit: (headers, body) => (idHeader ? eventIdFrom(headers[idHeader], `header ${idHeader}`) : eventIdAtPath(body, idJsonPath ?? 'id')),
    keptHeaders: [idHeader, timestampHeader].filter((name): name is string => name !== undefined),
  });
}
