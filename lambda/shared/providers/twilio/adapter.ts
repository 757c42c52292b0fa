import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { ConfigurationError } from '../../runtime/errors';
import { twilioSignedContent, verifyTwilio } from './signature';
import { buildAdapter, ProviderAdapter, utf8Key } from '../adapter';

/** What Twilio tells about a request beside its body: none of it signed, none of it a signature. */
const KEPT_HEADERS = ['i-twilio-idempotency-token', 'x-home-region'];

/**
 * Twilio: `X-Twilio-Signature` over the configured webhook URL with the request's query and the
 * sorted POST parameters (or, for a JSON body, its `bodySHA256` in the URL), keyed by the Auth
 * Token text. Twilio signs no time and no id (its idempotency token header is not signed): the
 * event id is the digest of the signed content, so a retry, which resends the same parameters,
 * is a duplicate, and a copy whose bytes differ but sign the same (its parameters reordered or
 * escaped otherwise) is the same event, quarantined as an altered copy instead of stored again.
 */
export function twilioAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  const webhookUrl = config.notificationUrl;
  if (!webhookUrl) throw new ConfigurationError(`provider ${config.name}: notificationUrl is required`);
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, _nowSeconds, _tolerance, request) => verifyTwilio(headers, body, keys, webhookUrl, request),
    admit: (headers, body, key, request) => {
      const content = twilioSignedContent(headers, body, webhookUrl, request, key);
      return typeof content === 'string' ? { kind: 'event', eventId: sha256Hex(content) } : { kind: 'malformed', detail: content.detail };
    },
    keptHeaders: KEPT_HEADERS,
  });
}
