import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Headers, RequestContext } from '../../runtime/http';
import { Rejection, SigningKey, Verdict } from '../../signatures/signing-key';

const SIGNATURE_HEADER = 'x-twilio-signature';
/** Names the algorithm of a shared-key signature (`key=…,algorithm=HMAC_SHA256`); absent: the Auth Token's HMAC-SHA1. */
const SETTINGS_HEADER = 'x-twilio-webhooks-signature-settings';
const BODY_HASH_PARAMETER = 'bodySHA256';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const FORM_TYPE = 'application/x-www-form-urlencoded';
const FORM = /^application\/x-www-form-urlencoded\b/i;

/**
 * Twilio's signature: `X-Twilio-Signature` is the base64 HMAC (SHA-1 with the Auth Token, or
 * the algorithm the settings header names) of the content twilioSignedContent builds, for one of
 * the URLs Twilio may have requested (signedUrls). Nothing signed carries a time or an id.
 */
export function verifyTwilio(headers: Headers, body: Buffer, keys: readonly SigningKey[], webhookUrl: string, request: RequestContext | undefined): Verdict {
  const signature = headers[SIGNATURE_HEADER];
  if (!signature || !BASE64.test(signature)) return { ok: false, reason: 'malformed', detail: `header ${SIGNATURE_HEADER} is missing or not base64` };
  const algorithm = signatureAlgorithm(headers[SETTINGS_HEADER]);
  if (!algorithm) return { ok: false, reason: 'malformed', detail: `header ${SETTINGS_HEADER} names an algorithm Twilio does not sign with` };
  const signed = signedContents(headers, body, webhookUrl, request);
  if (!Array.isArray(signed)) return signed;
  const presented = Buffer.from(signature, 'base64');
  for (const key of keys) if (signed.some((content) => signs(algorithm, key, content, presented))) return { ok: true, key };
  const detail = `header ${SIGNATURE_HEADER} matches no auth token`;
  const query = request?.rawQueryString ?? '';
  if (query === '' || configuredUrlFor(webhookUrl, query) !== undefined) return { ok: false, reason: 'bad_signature', detail };
  // The likely cause when a query is not the configured one, said where the operator reads it.
  return { ok: false, reason: 'bad_signature', detail: `${detail} (${QUERY_HINT})` };
}

const QUERY_HINT =
  "the query is not webhookUrl's, and verifies only as sent: behind a REST API ingress, which passes it decoded, configure webhookUrl with the query Twilio requests";

/**
 * What Twilio signs: the full URL it requested, followed by each POST parameter's name and value,
 * sorted by name (a repeated name's distinct values sorted). A JSON body is covered instead by
 * the `bodySHA256` query parameter (its hex SHA-256), which the signed URL carries. `webhookUrl`
 * is the URL as configured in Twilio (behind API Gateway or a custom domain it cannot be rebuilt
 * from the request). A non-empty body that is neither form-encoded nor hashed into the URL is
 * covered by nothing and refused: signed over the URL alone, it would carry any bytes. Of two
 * URLs Twilio may have requested, the one `key` signed (the first when no key is given).
 */
export function twilioSignedContent(
  headers: Headers,
  body: Buffer,
  webhookUrl: string,
  request: RequestContext | undefined,
  key?: SigningKey,
): string | Rejection {
  const signed = signedContents(headers, body, webhookUrl, request);
  if (!Array.isArray(signed)) return signed;
  if (signed.length === 1 || !key) return signed[0];
  const presented = Buffer.from(headers[SIGNATURE_HEADER] ?? '', 'base64');
  const algorithm = signatureAlgorithm(headers[SETTINGS_HEADER]) ?? 'sha1';
  return signed.find((content) => signs(algorithm, key, content, presented)) ?? signed[0];
}

/** Whether `presented` is the HMAC of `content` under `key`. */
function signs(algorithm: 'sha1' | 'sha256', key: SigningKey, content: string, presented: Buffer): boolean {
  const expected = createHmac(algorithm, key.bytes).update(Buffer.from(content, 'utf8')).digest();
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}

/** The content Twilio signed for each URL it may have requested, or why the body is not covered. */
function signedContents(headers: Headers, body: Buffer, webhookUrl: string, request: RequestContext | undefined): string[] | Rejection {
  const query = request?.rawQueryString ?? '';
  const urls = signedUrls(webhookUrl, query);
  const bodyHash = new URLSearchParams(query).get(BODY_HASH_PARAMETER);
  if (bodyHash !== null) {
    // The body is covered by its hash in the signed URL: it must be that body.
    if (createHash('sha256').update(body).digest('hex') !== bodyHash.toLowerCase()) {
      return { ok: false, reason: 'bad_signature', detail: `query parameter ${BODY_HASH_PARAMETER} is not the body's SHA-256` };
    }
    return urls;
  }
  if (FORM.test(headers['content-type'] ?? '')) {
    const parameters = sortedParameters(formParameters(body));
    return urls.map((url) => url + parameters);
  }
  if (body.length === 0) return urls;
  return {
    ok: false,
    reason: 'malformed',
    detail: `header content-type is not ${FORM_TYPE} and the query has no ${BODY_HASH_PARAMETER}: nothing signs the body`,
  };
}

/**
 * The URLs Twilio may have requested, which it signed byte for byte. The configured URL's path
 * with the query as received: exact behind an HTTP API, which passes the query as sent. A REST
 * API passes it only as decoded parameters, in an order of its own, and the verifier reads it
 * rebuilt from them (`10:30` or `10%3A30`, `a+b` or `a%20b`, `debug` or `debug=` cannot be told
 * back). So when the request's parameters are the configured URL's own (beside the `bodySHA256`
 * Twilio appends to it), in any order, the configured URL as written comes first. Either may
 * verify: each is a URL whose query is this request's.
 */
function signedUrls(webhookUrl: string, query: string): string[] {
  const at = webhookUrl.indexOf('?');
  const asReceived = `${at < 0 ? webhookUrl : webhookUrl.slice(0, at)}${query ? `?${query}` : ''}`;
  const configured = configuredUrlFor(webhookUrl, query);
  return configured === undefined || configured === asReceived ? [asReceived] : [configured, asReceived];
}

/** The configured URL as Twilio requests it (with the `bodySHA256` it appends), when the query's parameters are its own; else undefined. */
function configuredUrlFor(webhookUrl: string, query: string): string | undefined {
  const at = webhookUrl.indexOf('?');
  if (at < 0) return undefined;
  const received = new URLSearchParams(query);
  const bodyHash = received.get(BODY_HASH_PARAMETER);
  received.delete(BODY_HASH_PARAMETER);
  if (!sameParameters(received, new URLSearchParams(webhookUrl.slice(at + 1)))) return undefined;
  return bodyHash === null ? webhookUrl : `${webhookUrl}${webhookUrl.endsWith('?') ? '' : '&'}${BODY_HASH_PARAMETER}=${bodyHash}`;
}

/** Whether two queries hold the same parameters, whatever their order. */
function sameParameters(a: URLSearchParams, b: URLSearchParams): boolean {
  const pairs = (params: URLSearchParams) => [...params].map((pair) => JSON.stringify(pair)).sort();
  return isDeepStrictEqual(pairs(a), pairs(b));
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
