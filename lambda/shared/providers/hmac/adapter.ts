import { ProviderRuntimeConfig, signedContentPlaceholders } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { ConfigurationError } from '../../runtime/errors';
import { verifyHmac } from '../../signatures/hmac';
import { decodeStandardWebhooksSecret } from '../../signatures/standard-webhooks';
import { buildAdapter, eventIdAtPath, eventIdFrom, ProviderAdapter, utf8Key } from '../adapter';

/**
 * Any HMAC-signed webhook, described by the scheme the construct passes (`hmac()` provider). The
 * event id is the signed `idHeader`, or `idJsonPath` in the body; an `idHeader` the signature does
 * not cover (acknowledged at synth) proves nothing, so those deliveries are keyed by the body's
 * digest: a byte-identical repeat is a duplicate, whatever id it claims.
 */
export function hmacAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  const scheme = config.hmac;
  if (!scheme) throw new ConfigurationError(`provider ${config.name}: the hmac adapter needs its scheme`);
  const { idHeader, idJsonPath, timestampHeader } = scheme;
  const signsId = signedContentPlaceholders(scheme.signedContent).includes('id');
  return buildAdapter(config, {
    // A base64 secret may carry a `whsec_` prefix, as several senders print it.
    decodeKey: scheme.secretEncoding === 'base64' ? (value) => ({ bytes: decodeStandardWebhooksSecret(value) }) : utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, scheme),
    admit: (headers, body) => {
      if (!idHeader) return eventIdAtPath(body, idJsonPath ?? 'id');
      return signsId ? eventIdFrom(headers[idHeader], `header ${idHeader}`) : { kind: 'event', eventId: sha256Hex(body) };
    },
    keptHeaders: [idHeader, timestampHeader].filter((name): name is string => name !== undefined),
  });
}
