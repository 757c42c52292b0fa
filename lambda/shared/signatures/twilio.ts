import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Headers, RequestContext } from '../runtime/http';
import { Rejection, SigningKey, Verdict } from './signing-key';

const SIGNATURE_HEADER = 'x-twilio-signature';
/** Names the algorithm of a shared-key signature (`key=…,algorithm=HMAC_SHA256`); absent: the Auth Token's HMAC-SHA1. */
const SETTINGS_HEADER = 'x-twilio-webhooks-signature-settings';
const BODY_HASH_PARAMETER = 'bodySHA256';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const FORM_TYPE = 'application/x-www-form-urlencoded';
const FORM = /^application\/x-www-form-urlencoded\b/i;

/**
 * Twilio's signature: `X-Twilio-Signature` is the base64 HMAC (SHA-1 with the Auth Token, or
 * the algorithm the settings header names) of the content twilioSignedContent builds. Nothing
 * signed carries a time or an id.
 */
export function verifyTwilio(headers: Headers, body: Buffer, keys: readonly SigningKey[], webhookUrl: string, request: RequestContext | undefined): Verdict {
  const signature = headers[SIGNATURE_HEADER];
  if (!signature || !BASE64.test(signature)) return { ok: false, reason: 'malformed', detail: `header ${SIGNATURE_HEADER} is missing or not base64` };
  const algorithm = signatureAlgorithm(headers[SETTINGS_HEADER]);
  if (!algorithm) return { ok: false, reason: 'malformed', detail: `header ${SETTINGS_HEADER} names an algorithm Twilio does not sign with` };
  const content = twilioSignedContent(headers, body, webhookUrl, request);
  if (typeof content !== 'string') return content;
  const presented = Buffer.from(signature, 'base64');
  for (const key of keys) {
    const expected = createHmac(algorithm, key.bytes).update(Buffer.from(content, 'utf8')).digest();
    if (expected.length === presented.length && timingSafeEqual(expected, presented)) return { ok: true, key };
  }
  return { ok: false, reason: 'bad_signature', detail: `header ${SIGNATURE_HEADER} matches no auth token` };
}

/**
 * What Twilio signs: the full URL it requested, followed by each POST parameter's name and value,
 * sorted by name (a repeated name's distinct values sorted). A JSON body is covered instead by
 * the `bodySHA256` query parameter (its hex SHA-256), which the signed URL carries. `webhookUrl`
 * is the URL as configured in Twilio, without its query: behind API Gateway or a custom domain it
 * cannot be rebuilt from the request; the query is the request's. A non-empty body that is
 * neither form-encoded nor hashed into the URL is covered by nothing and refused: signed over
 * the URL alone, it would carry any bytes.
 */
export function twilioSignedContent(headers: Headers, body: Buffer, webhookUrl: string, request: RequestContext | undefined): string | Rejection {
  const query = request?.rawQueryString ?? '';
  const url = query ? `${webhookUrl}?${query}` : webhookUrl;
  const bodyHash = new URLSearchParams(query).get(BODY_HASH_PARAMETER);
  if (bodyHash !== null) {
    // The body is covered by its hash in the signed URL: it must be that body.
    if (createHash('sha256').update(body).digest('hex') !== bodyHash.toLowerCase()) {
      return { ok: false, reason: 'bad_signature', detail: `query parameter ${BODY_HASH_PARAMETER} is not the body's SHA-256` };
    }
    return url;
  }
  if (FORM.test(headers['content-type'] ?? '')) return url + sortedParameters(formParameters(body));
  if (body.length === 0) return url;
  return {
    ok: false,
    reason: 'malformed',
    detail: `header content-type is not ${FORM_TYPE} and the query has no ${BODY_HASH_PARAMETER}: nothing signs the body`,
  };
}

/** The hash of the settings header's `algorithm=`; SHA-1 without one. */
function signatureAlgorithm(settings: string | undefined): 'sha1' | 'sha256' | undefined {
  const named = settings
    ?.split(',')
    .map((part) => part.split('='))
    .find(([name]) => name?.trim() === 'algorithm')?.[1]
    ?.trim()
    .toUpperCase();
  if (!named || named === 'HMAC_SHA1') return 'sha1';
  return named === 'HMAC_SHA256' ? 'sha256' : undefined;
}

/**
 * The POST parameters of a form-encoded body. URLSearchParams takes a query and drops a leading
 * `?`; a form body keeps it in the first name, so the body is read after an empty `&` part.
 */
function formParameters(body: Buffer): Map<string, Set<string>> {
  const parameters = new Map<string, Set<string>>();
  for (const [name, value] of new URLSearchParams(`&${body.toString('utf8')}`)) parameters.set(name, (parameters.get(name) ?? new Set()).add(value));
  return parameters;
}

/** Each name followed by its value, names sorted, a repeated name's distinct values sorted. */
function sortedParameters(parameters: Map<string, Set<string>>): string {
  return [...parameters.keys()]
    .sort()
    .map((name) =>
      [...parameters.get(name)!]
        .sort()
        .map((value) => name + value)
        .join(''),
    )
    .join('');
}
