import { createHmac } from 'node:crypto';
import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { HandshakeAnswer } from '../../runtime/http';
import { verifyHmac } from '../../signatures/hmac';
import { SigningKey } from '../../signatures/signing-key';
import { Admission, buildAdapter, keyFieldProblem, parseJsonObject, ProviderAdapter, utf8Key, valueAtPath } from '../adapter';

const SCHEME = {
  signatureHeader: 'x-zm-signature',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: 'v0=',
  signedContent: 'v0:{timestamp}:{body}',
  timestampHeader: 'x-zm-request-timestamp',
} as const;

const URL_VALIDATION = 'endpoint.url_validation';
/** The longest event name and `plainToken` taken, in UTF-8 bytes (Zoom's tokens have 22 characters). */
const MAX_FIELD_BYTES = 512;

/**
 * Zoom: `x-zm-signature: v0=<hex HMAC-SHA256 of v0:timestamp:body>` with
 * `x-zm-request-timestamp`, keyed by the secret token. The signed `endpoint.url_validation`
 * request is answered with its `plainToken` and the token's HMAC under the key it verified with.
 * Zoom signs no delivery id (`x-zm-trackingid` is kept as metadata only): the event id is the
 * body's digest.
 */
export function zoomAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME),
    admit: (_headers, body, key) => admitZoom(body, key),
    keptHeaders: ['x-zm-trackingid'],
    describes: { resourcePath: 'payload.object.id' },
  });
}

/** What a verified Zoom body is: the URL validation, or an event keyed by its digest. */
function admitZoom(body: Buffer, key?: SigningKey): Admission {
  const parsed = parseJsonObject(body);
  if (!parsed) return { kind: 'malformed', detail: 'body is not a JSON object' };
  const eventProblem = keyFieldProblem(parsed.event, MAX_FIELD_BYTES);
  if (eventProblem !== undefined) return { kind: 'malformed', detail: `event ${eventProblem}` };
  if (parsed.event !== URL_VALIDATION) return { kind: 'event', eventId: sha256Hex(body) };
  const plainToken = valueAtPath(parsed, 'payload.plainToken');
  const tokenProblem = keyFieldProblem(plainToken, MAX_FIELD_BYTES);
  if (tokenProblem !== undefined) return { kind: 'malformed', detail: `payload.plainToken ${tokenProblem}` };
  // The verifier always passes the key; only a direct call without one lands here.
  if (!key) return { kind: 'malformed', detail: 'payload.plainToken cannot be answered without the verified secret token' };
  return { kind: 'handshake', answer: urlValidationAnswer(plainToken as string, key.bytes) };
}

/** Zoom's URL validation answer: 200 JSON with the token and its hex HMAC-SHA256 under the secret token. */
function urlValidationAnswer(plainToken: string, secret: Buffer): HandshakeAnswer {
  const encryptedToken = createHmac('sha256', secret).update(plainToken, 'utf8').digest('hex');
  return { status: 200, contentType: 'application/json', body: JSON.stringify({ plainToken, encryptedToken }) };
}
