import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { verifyHmac } from '../../signatures/hmac';
import { Admission, buildAdapter, eventIdFrom, parseJsonObject, ProviderAdapter, utf8Key, valueAtPath } from '../adapter';

const SCHEME = {
  signatureHeader: 'x-pagerduty-signature',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: 'v1=',
  signedContent: '{body}',
  secretEncoding: 'utf8',
} as const;

/** The event type of the test PagerDuty sends from a webhook subscription's settings. */
const PING_EVENT_TYPE = 'pagey.ping';

/** A verified v3 body: PagerDuty's ping is a test delivery; any other event is keyed by its `event.id`. */
function admitPagerDuty(body: Buffer): Admission {
  const parsed = parseJsonObject(body);
  if (!parsed) return { kind: 'malformed', detail: 'body is not a JSON object' };
  if (valueAtPath(parsed, 'event.event_type') === PING_EVENT_TYPE) return { kind: 'test' };
  return eventIdFrom(valueAtPath(parsed, 'event.id'), 'event.id');
}

/**
 * PagerDuty v3 webhooks: `X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the body>`, one `v1`
 * per valid secret (comma-separated) during a rotation. No timestamp is signed; the signed body's
 * `event.id` is the event id. The unsigned `X-Webhook-Id` is kept as row metadata.
 */
export function pagerdutyAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME),
    admit: (_headers, body) => admitPagerDuty(body),
    keptHeaders: ['x-webhook-id', 'x-webhook-subscription'],
    describes: { resourcePath: 'event.data.id' },
  });
}
