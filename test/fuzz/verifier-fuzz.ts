/**
 * Property-based fuzzing of the verifier, run by `test/fuzz/verifier.test.ts` (3,000 cases in
 * `npm test`, 100,000 with `npm run fuzz`): one verifier serving every preset (Answerline, Echonova, Standard Webhooks
 * with `webhook-*` and `svix-*` headers, Standard Webhooks `v1a` Ed25519, Stripe, GitHub, Shopify,
 * Paddle, PagerDuty, Linear, Discord (Ed25519, answered as Discord requires), Square (signed with
 * its notification URL), Twilio (form parameters and query signed over its webhook URL, JSON
 * through `bodySHA256`, signed by the `twilio` library), Slack and Zoom (their URL checks answered at the edge) and two generic HMAC schemes) against the emulators, the Secrets Manager stand-in and an S3 body store.
 *
 * A case is a plan (plain data, so fast-check can print and shrink it) that is materialized into
 * API Gateway events at run time: most plans start from a delivery the provider would really
 * send, signed independently with node:crypto (Twilio's with its own library), and then garble its headers, body, encoding,
 * size, timestamp, signature list, path, query and event shape; the rest are fully random events. Ids
 * come from a per-execution nonce, so every execution (shrinking included) is independent.
 *
 * Properties of every invocation:
 * - the handler never throws and never answers 5xx (the store is up);
 * - the answer's `result` is a documented reason with its documented status (HTTP_STATUS);
 * - a 4xx answer's detail names a header, a field, the path or the size limit;
 * - an unauthenticated delivery (wrong secret, no signature, altered bytes, another provider's
 *   path, a random event) is never answered 2xx; where the plan pins the outcome down (an intact
 *   signed delivery) the exact reason, and for a stored one the exact inbox key, are checked;
 * - a provider's own answer (Discord's interaction responses, Slack's and Zoom's URL checks) is
 *   exactly the one it documents, and only ever given to an authentic request;
 * - an authentic, fresh body that nests JSON arrays and objects deeper than 512 levels is refused
 *   400 body_too_deep, whatever the preset and whatever the body says (nothing is admitted that
 *   could not be processed); depths up to what the body limit holds are generated;
 * - no log line carries a body, a secret or a signature (the fixture's capture, expectLogsClean).
 * After a run, `audit()` checks the real table and queue: the inbox holds exactly the rows of the
 * invocations answered accepted (one delivery row each) and quarantined (one quarantine item per
 * altered digest), and the work queue exactly one message per accepted invocation.
 */
import { createHash, generateKeyPairSync, KeyObject, randomBytes, sign as signEd25519 } from 'node:crypto';
import { parse as parseForm } from 'node:querystring';
import { isDeepStrictEqual } from 'node:util';
import { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import * as fc from 'fast-check';
import twilio from 'twilio';
import { AdapterKind, Defaults, DeliveryStatus, InboxItemKind, ProviderRuntimeConfig } from '../../lib/contract';
import { HmacAlgorithm, SecretEncoding, SignatureEncoding } from '../../lib/provider';
import { hmacRuntimeSettings } from '../../lib/private/provider-runtime';
import { logReference } from '../../lambda/shared/runtime/digest';
import { HTTP_STATUS, Reason } from '../../lambda/shared/runtime/http';
import { deliveryKey } from '../../lambda/shared/stores/inbox';
import { createBodyBucket } from '#twin/testing';
import { apiGatewayEvent, InboxHarness, Item, LogRecord, newSigningSecret, SecretsFixture, sha256Hex, TOLERANCE_SECONDS } from '../support/inbox-fixture';
import { fixtureGateway } from '../support/iam-fixture';
import { HeaderMap, hmacText, oddJson, signedContent, stripeSecret, textSecret, UNICODE_NOTE } from '../support/senders';

export const MAX_BODY_BYTES = Defaults.MAX_BODY_BYTES;
export const INLINE_BODY_BYTES = Defaults.INLINE_BODY_BYTES;
/**
 * The deepest a body may nest JSON arrays and objects (docs/DESIGN.md): stated here, not imported
 * from the verifier's limits, so that a change there shows up as a failure here.
 */
const MAX_JSON_DEPTH = 512;
/** The deepest array a body within the limit holds (`[` and `]` per level, one value inside); nested objects need three times the room. */
const DEEPEST_ARRAY = Math.floor((MAX_BODY_BYTES - 1) / 2);
/** The deepest member a payload within the limit holds, its other members beside it. */
const DEEPEST_MEMBER = Math.floor(MAX_BODY_BYTES / 2) - 4096;

/**
 * How deep the bytes nest JSON arrays and objects, their own strings left out (read as latin1, so
 * every byte stays one character; an unterminated string runs to the end). The strings are left
 * out (a string ends at the first quote preceded by an even number of backslashes), then the
 * brackets that are left are counted; never a parse, which would refuse the bodies that do not
 * parse, nor a regular expression, whose backtracking overflows the stack on a 6 MB string.
 */
function nestingDepth(bytes: Buffer): number {
  const structure = withoutStrings(bytes.toString('latin1'));
  let depth = 0;
  let deepest = 0;
  for (const char of structure) {
    if (char === '[' || char === '{') deepest = Math.max(deepest, ++depth);
    else if ((char === ']' || char === '}') && depth > 0) depth--;
  }
  return deepest;
}
/** `text` with its JSON strings, quotes included, left out. */
function withoutStrings(text: string): string {
  const parts: string[] = [];
  let at = 0;
  for (;;) {
    const open = text.indexOf('"', at);
    if (open < 0) return parts.join('') + text.slice(at);
    parts.push(text.slice(at, open));
    let close = text.indexOf('"', open + 1);
    for (;;) {
      if (close < 0) return parts.join('');
      let backslashes = 0;
      while (close - 1 - backslashes > open && text[close - 1 - backslashes] === '\\') backslashes++;
      if (backslashes % 2 === 0) break;
      close = text.indexOf('"', close + 1);
    }
    at = close + 1;
  }
}
const BILLING_CYCLE = '2026-09';
/** The longest billing cycle the edge takes: 64 bytes in UTF-8. */
const LONGEST_CYCLE = 'é'.repeat(32);

/** How an Echonova spending event names its billing cycle (the cycle is part of its event id). */
export type CyclePlan = 'named' | 'alias' | 'long' | 'longest' | 'number' | 'missing';

function cycleMembers(plan: CyclePlan): Record<string, unknown> {
  switch (plan) {
    case 'named':
      return { billingCycle: BILLING_CYCLE };
    case 'alias':
      return { cycle: `${BILLING_CYCLE}-b` };
    case 'long':
      return { billingCycle: `${BILLING_CYCLE}-${'c'.repeat(3000)}` };
    case 'longest':
      return { billingCycle: LONGEST_CYCLE };
    case 'number':
      return { billingCycle: 202609 };
    case 'missing':
      return {};
  }
}

/**
 * The cycle in the event id: the one the body names (a string; refused when longer than 64 bytes),
 * or none (undefined: the id takes the body's digest instead, never the attempt's timestamp).
 */
function expectedCycle(plan: CyclePlan): string | 'too long' | undefined {
  switch (plan) {
    case 'named':
      return BILLING_CYCLE;
    case 'alias':
      return `${BILLING_CYCLE}-b`;
    case 'long':
      return 'too long';
    case 'longest':
      return LONGEST_CYCLE;
    default:
      return undefined;
  }
}

/** Whether a body built from the draft carries this case's id (ids of 16 characters or more hold the case's nonce). */
const carriesCaseId = (d: Draft) => typeof d.id === 'string' && d.id.length >= 16;

/** The rule for composite ids: each field escaped with encodeURIComponent, joined with `:`. */
const composite = (...fields: string[]) => fields.map(encodeURIComponent).join(':');

/**
 * Echonova styles: the event header, and the status a job body signs. `job.completed:failed` and
 * `relabel` are a genuine delivery replayed with another event header (the header is unsigned).
 */
const ECHONOVA_JOB_STYLES: Readonly<Record<string, { header: string; status: string }>> = {
  'job.completed': { header: 'job.completed', status: 'completed' },
  'job.failed': { header: 'job.failed', status: 'failed' },
  'job.completed:failed': { header: 'job.completed', status: 'failed' },
  relabel: { header: 'invoice.paid', status: 'completed' },
};
const echonovaHeader = (style: string) => ECHONOVA_JOB_STYLES[style]?.header ?? style;

// =============================================================================================
// Presets: how each provider signs, where its id is, which headers the verifier reads
// =============================================================================================

export const PRESETS = [
  'answerline',
  'echonova',
  'openai',
  'ed25519',
  'stripe',
  'github',
  'meta',
  'slack',
  'acme',
  'shopify',
  'paddle',
  'pagerduty',
  'linear',
  'discord',
  'square',
  'slack-events',
  'zoom',
  'twilio',
] as const;
export type PresetName = (typeof PRESETS)[number];

/** What a delivery is made of before it is signed. */
interface Draft {
  readonly preset: PresetName;
  readonly style: string;
  /** The id as planned: a string, or any JSON value where the body carries it. */
  readonly id: unknown;
  readonly note: string;
  /** Echonova spending.*: how the body names its billing cycle. */
  readonly cycle: CyclePlan;
  /** The signing time as the plan writes it: Linear dates its body with it. */
  readonly timestamp: string;
}

interface Signer {
  /** The stored secret value (for `v1a`, the public key). */
  readonly stored: string;
  /** Signs the content bytes with the real key, or with another one of the same kind; absent where the provider's own library signs (keyText). */
  readonly sign?: (content: Buffer, wrong: boolean) => string;
  /** The real key's text, or the other one's, for a provider whose own library signs (Twilio's). */
  readonly keyText?: (wrong: boolean) => string;
}

interface Preset {
  readonly adapter: string;
  readonly config?: Partial<ProviderRuntimeConfig>;
  readonly styles: readonly string[];
  /** Where the id lives: in the body (JSON path) or in a header. */
  readonly idIn: 'body' | 'header';
  /** The key is the body's digest (GitHub signs no id): a body that carries no id of this case may be another case's. */
  readonly keyedByBody?: boolean;
  /** Longest id the preset admits, in characters (a longer one is malformed); every id is also bounded in bytes. */
  readonly maxIdLength: number;
  readonly idPrefix: string;
  /** Every header the verifier reads for this preset (verification and admission). */
  readonly readHeaders: (style: string) => readonly string[];
  readonly signatureHeader: (style: string) => string;
  /** Header carrying the signed timestamp; undefined when none is signed (GitHub) or it sits in the signature (Stripe). */
  readonly timestampHeader?: (style: string) => string;
  readonly signsTimestamp: boolean;
  /**
   * The timestamp is a field of the signed body (Linear's `webhookTimestamp`, milliseconds): read
   * only once the MAC matched, so a bad one is answered after bad_signature, never before.
   */
  readonly timestampInBody?: boolean;
  readonly newSigner: () => Signer;
  /** The status a refused signature (or signature header) is answered with, where the provider documents one (Discord: 401). */
  readonly refusalStatus?: number;
  /**
   * The body the provider requires in answer to `reason` instead of the inbox's own (Discord's
   * interaction responses, Slack's and Zoom's URL checks), given the bytes received and the stored
   * secret: a string is the answer's text as sent, anything else its JSON value; undefined: the
   * inbox's own answer.
   */
  readonly ownAnswer?: (reason: Reason, received: Buffer, stored: string) => unknown;
  readonly payload: (draft: Draft) => Record<string, unknown>;
  /** The body of a payload, padded to `size` bytes when asked; absent: its JSON. */
  readonly bodyText?: (draft: Draft, payload: Record<string, unknown>, size?: number) => string;
  /** The signed headers of `body` (with any unsigned ones the sender adds); `keyText` is the signing key's text where the signer has one. */
  readonly headers: (draft: Draft, body: Buffer, timestamp: string, signature: (content: Buffer) => string, keyText?: string) => HeaderMap;
  /** The query string the provider requests with `body`, which its signature covers (Twilio); absent: none, and none is read. */
  readonly query?: (draft: Draft, body: Buffer) => string;
  /**
   * Whether bytes other than the signed ones carry the same signed content (Twilio's form
   * parameters reordered or escaped otherwise); absent: only the signed bytes do.
   */
  readonly signsSame?: (draft: Draft, signed: Buffer, received: Buffer) => boolean;
  /** The preset never reads the body (Twilio): admission is decided for any bytes, not only for a payload. */
  readonly opaqueBody?: boolean;
  /** Extra entries for the signature list that can never verify and never make the list unparsable. */
  readonly extraEntry: (shape: number, bytes: Buffer) => string;
  readonly listSeparator: string;
  /** How the admission of an intact delivery is decided by the plan. */
  readonly admission: (draft: Draft, bytes: Buffer, parses: boolean) => Admission;
}

type Admission =
  | { kind: 'test' }
  /** Answered at the edge as the provider asks (Discord's PING and autocomplete), never stored. */
  | { kind: 'handshake' }
  | { kind: 'not_final' }
  | { kind: 'malformed' }
  /** `shared`: the id is a digest of a body that carries no id of this case, so another case may have stored it first. */
  | { kind: 'event'; eventId: string; repeatable: boolean; shared?: boolean }
  /** The signed body and an unsigned header disagree: a quarantined copy under `eventId`, never a row. */
  | { kind: 'anomaly'; eventId: string }
  | { kind: 'unknown' };

/** Every id becomes part of a DynamoDB key: at most 512 bytes in UTF-8, whatever the characters. */
const MAX_ID_BYTES = 512;
/** A signed id header's shape, checked before any MAC (Standard Webhooks, the generic scheme): present, at most 256 characters. */
const headerIdFits = (id: unknown): boolean => typeof id === 'string' && id.length > 0 && id.length <= 256;
/** A surrogate without its pair: no UTF-8 key holds one, so such an id is refused. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const validId = (id: unknown, max: number): id is string =>
  typeof id === 'string' && id.length > 0 && id.length <= max && !LONE_SURROGATE.test(id) && Buffer.byteLength(id, 'utf8') <= MAX_ID_BYTES;
/** A key field of at most `maxBytes` in UTF-8 (Linear bounds each field of its composite id). */
const fitsBytes = (id: unknown, maxBytes: number): id is string =>
  typeof id === 'string' && id.length > 0 && !LONE_SURROGATE.test(id) && Buffer.byteLength(id, 'utf8') <= maxBytes;
const LINEAR_CREATED_AT = '2026-09-18T10:00:00.000Z';
const idOrMalformed = (id: unknown, max: number, eventId: (id: string) => string = (x) => x, repeatable = false): Admission =>
  validId(id, max) ? { kind: 'event', eventId: eventId(id), repeatable } : { kind: 'malformed' };

/** Standard Webhooks v1 (HMAC-SHA256, base64) over `id.timestamp.body`, keyed by the whsec_ secret's bytes. */
function whsecSigner(): Signer {
  const secret = newSigningSecret();
  const wrong = newSigningSecret();
  const keyOf = (value: string) => Buffer.from(value.slice('whsec_'.length), 'base64');
  return { stored: secret, sign: (content, useWrong) => `v1,${hmacText('sha256', 'base64', keyOf(useWrong ? wrong : secret), content)}` };
}

/** Standard Webhooks v1a: Ed25519 over `id.timestamp.body`; the inbox stores the public key (whpk_). */
function ed25519Signer(): Signer {
  const pair = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519');
  const raw = Buffer.from(pair.publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const signWith = (key: KeyObject, content: Buffer) => `v1a,${signEd25519(null, content, key).toString('base64')}`;
  return { stored: `whpk_${raw.toString('base64')}`, sign: (content, useWrong) => signWith(useWrong ? other.privateKey : pair.privateKey, content) };
}

/** Discord: hex Ed25519 over `timestamp + body`; the inbox stores the application's public key in hex. */
function discordSigner(): Signer {
  const pair = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519');
  const raw = Buffer.from(pair.publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return {
    stored: raw.toString('hex'),
    sign: (content, useWrong) => signEd25519(null, content, useWrong ? other.privateKey : pair.privateKey).toString('hex'),
  };
}

/** The interaction types of the Discord styles: a command, a component, a modal submit, a PING, an autocomplete. */
const DISCORD_INTERACTION_TYPES: Readonly<Record<string, number>> = { command: 2, component: 3, modal: 5, ping: 1, autocomplete: 4 };

/**
 * What Discord must read in answer (it waits for an interaction response): PONG to a PING, no
 * choices to an autocomplete, a deferral to a stored interaction (the update kind, 6, for a
 * component; 5 otherwise); a refusal is the inbox's own answer.
 */
function discordAnswer(reason: Reason, received: Buffer): Record<string, unknown> | undefined {
  let type: unknown;
  try {
    type = (JSON.parse(received.toString('utf8')) as { type?: unknown }).type;
  } catch {
    return undefined;
  }
  if (reason === 'handshake') return type === 1 ? { type: 1 } : { type: 8, data: { choices: [] } };
  if (reason === 'accepted' || reason === 'duplicate' || reason === 'quarantined') return { type: type === 3 ? 6 : 5 };
  return undefined;
}

/** The notification URL the fuzzed Square provider is registered with: Square signs it before the body. */
const SQUARE_NOTIFICATION_URL = 'https://hooks.example.com/hooks/square';

/**
 * Twilio, as its documentation states the rule (stated here on its own): the signed content is
 * the webhook URL as configured, with the query Twilio requests, followed by each POST parameter's
 * name and value, names sorted, a repeated name's distinct values sorted; a JSON body is signed
 * through its hex SHA-256 in the URL's `bodySHA256` parameter instead. The `twilio` library signs.
 */
const TWILIO_WEBHOOK_URL = 'https://hooks.example.com/hooks/twilio';
/**
 * Form bodies (space as `+`, escapes in capitals, a charset parameter, the settings header's
 * HMAC-SHA256; `form-query`: space as `%20`, every other byte escaped in lower case, a query with
 * escapes, an empty and a repeated parameter) and JSON bodies through `bodySHA256`.
 */
const TWILIO_STYLES = ['form', 'form-query', 'form-sha256', 'json', 'json-query'] as const;
const TWILIO_QUERY = 'tenant=acme&note=caf%C3%A9+cr%C3%A8me&empty=&n=2&n=1';
const twilioIsJson = (style: string) => style.startsWith('json');

/** The parameters of a Twilio message status callback: a repeated one (with a duplicate value), an empty one, unicode, `+`, `%` and `&` in values. */
function twilioParams(d: Draft): Record<string, string | string[]> {
  const id = d.id === undefined ? undefined : typeof d.id === 'string' ? d.id : JSON.stringify(d.id);
  return {
    AccountSid: 'AC0123456789abcdef0123456789abcdef',
    ...(id === undefined ? {} : { MessageSid: id }),
    MessageStatus: 'delivered',
    Body: d.note,
    From: '+15017122661',
    To: '+15558675310',
    MediaUrl0: ['https://api.twilio.com/m/b?x=1&y=2', 'https://api.twilio.com/m/a', 'https://api.twilio.com/m/b?x=1&y=2'],
    ErrorCode: '',
    'Price Unit': '100% + tax',
    Ünïcode: '東京 🚀 e\u0301',
  };
}

/** A form encoding: bytes outside [A-Za-z0-9*-._] percent-escaped (capitals, space as `+`), or every byte but letters and digits (lower case, space as `%20`). */
function formEscape(text: string, style: string): string {
  const loose = style !== 'form-query';
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      if (/[A-Za-z0-9]/.test(char) || (loose && /[*\-._]/.test(char))) return char;
      if (byte === 0x20 && loose) return '+';
      const escaped = `%${byte.toString(16).padStart(2, '0')}`;
      return loose ? escaped.toUpperCase() : escaped;
    })
    .join('');
}

function twilioForm(params: Record<string, unknown>, style: string): string {
  return Object.entries(params)
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one) => `${formEscape(name, style)}=${formEscape(String(one), style)}`))
    .join('&');
}

/** The query Twilio requests: a JSON body's hash in `bodySHA256`, beside the configured query where the style has one. */
function twilioQuery(d: Draft, body: Buffer): string {
  const hash = `bodySHA256=${sha256Hex(body)}`;
  switch (d.style) {
    case 'form-query':
      return TWILIO_QUERY;
    case 'json':
      return hash;
    case 'json-query':
      return `${TWILIO_QUERY}&${hash}`;
    default:
      return '';
  }
}

/**
 * The parameters of a form body as a receiver decodes them (node:querystring; no limit on their
 * number). Repeated values are copied into this realm's arrays: under jest, an array made by a
 * core module fails the `instanceof Array` by which the twilio library recognises one.
 */
function decodedForm(body: Buffer): Record<string, string | string[]> {
  const parsed = parseForm(body.toString('utf8'), '&', '=', { maxKeys: 0 });
  return Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name, Array.isArray(value) ? [...value] : (value ?? '')]));
}

/** What Twilio signs for `body` at `query`, by the rule above. */
function twilioSignedContent(d: Draft, body: Buffer, query: string): string {
  const url = query ? `${TWILIO_WEBHOOK_URL}?${query}` : TWILIO_WEBHOOK_URL;
  if (twilioIsJson(d.style)) return url;
  const params = decodedForm(body);
  const sorted = Object.keys(params)
    .sort()
    .map((name) =>
      [...new Set(([] as string[]).concat(params[name]))]
        .sort()
        .map((value) => name + value)
        .join(''),
    );
  return url + sorted.join('');
}

/** An Auth Token: 32 hex characters. */
function twilioSigner(): Signer {
  const token = randomBytes(16).toString('hex');
  const wrong = randomBytes(16).toString('hex');
  return { stored: token, keyText: (useWrong) => (useWrong ? wrong : token) };
}

/** A member of a JSON object body at a dotted path; undefined when the body is no JSON object. */
function bodyField(received: Buffer, path: string): unknown {
  let node: unknown;
  try {
    node = JSON.parse(received.toString('utf8'));
  } catch {
    return undefined;
  }
  for (const key of path.split('.')) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** Slack's answer to its signed URL check: the challenge, as plain text. */
function slackAnswer(reason: Reason, received: Buffer): unknown {
  return reason === 'handshake' ? bodyField(received, 'challenge') : undefined;
}

/** Zoom's answer to its signed URL validation: the plainToken and its hex HMAC-SHA256 under the secret token. */
function zoomAnswer(reason: Reason, received: Buffer, stored: string): unknown {
  const plainToken = bodyField(received, 'payload.plainToken');
  if (reason !== 'handshake' || typeof plainToken !== 'string') return undefined;
  return { plainToken, encryptedToken: hmacText('sha256', 'hex', stored, Buffer.from(plainToken, 'utf8')) };
}

function textSigner(algorithm: 'sha256' | 'sha512', encoding: 'hex' | 'base64', prefix: string, newSecret: () => string = textSecret): Signer {
  const secret = newSecret();
  const wrong = newSecret();
  return { stored: secret, sign: (content, useWrong) => `${prefix}${hmacText(algorithm, encoding, useWrong ? wrong : secret, content)}` };
}

/** Meta's stored value: JSON of the app secret (the HMAC key) beside the verify token of its GET check. */
function metaSigner(): Signer {
  const appSecret = textSecret();
  const wrong = textSecret();
  return {
    stored: JSON.stringify({ appSecret, verifyToken: textSecret() }),
    sign: (content, useWrong) => `sha256=${hmacText('sha256', 'hex', useWrong ? wrong : appSecret, content)}`,
  };
}

/** A base64 secret stored with a whsec_ prefix (the generic scheme's `secretEncoding: base64`). */
function base64Signer(): Signer {
  const key = randomBytes(32);
  const wrong = randomBytes(32);
  return { stored: `whsec_${key.toString('base64')}`, sign: (content, useWrong) => hmacText('sha512', 'base64', useWrong ? wrong : key, content) };
}

const SW = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' };
const SVIX = { id: 'svix-id', timestamp: 'svix-timestamp', signature: 'svix-signature' };
const SW_ALL = [...Object.values(SW), ...Object.values(SVIX)];
const swNames = (style: string) => (style === 'svix' ? SVIX : SW);

const b64 = (bytes: Buffer, length: number) => Buffer.concat([bytes, bytes, bytes]).subarray(0, length).toString('base64');
const hex = (bytes: Buffer, length: number) => Buffer.concat([bytes, bytes, bytes]).subarray(0, length).toString('hex');

/** Standard Webhooks extras: wrong v1/v1a entries of the right shape, other versions, junk without spaces. */
const swExtra = (shape: number, bytes: Buffer): string =>
  [`v1,${b64(bytes, 32)}`, `v1a,${b64(bytes, 64)}`, `v2,${b64(bytes, 32)}`, 'v1,', `v1,${b64(bytes, 31)}`, 'junk', `v1,${b64(bytes, 32).replace(/=$/, '')}`][
    shape % 7
  ];

const standardWebhooksPreset = (newSigner: () => Signer, styles: readonly string[]): Preset => ({
  adapter: AdapterKind.STANDARD_WEBHOOKS,
  styles,
  idIn: 'header',
  maxIdLength: 256,
  idPrefix: 'msg_',
  readHeaders: () => SW_ALL,
  signatureHeader: (style) => swNames(style).signature,
  timestampHeader: (style) => swNames(style).timestamp,
  signsTimestamp: true,
  newSigner,
  payload: (d) => ({ object: 'event', id: 'evt_fuzz', type: 'response.completed', created_at: 1789000000, data: { id: 'resp_fuzz', note: d.note } }),
  headers: (d, body, timestamp, signature) => {
    const names = swNames(d.style);
    const id = typeof d.id === 'string' ? d.id : '';
    return { [names.id]: id, [names.timestamp]: timestamp, [names.signature]: signature(signedContent('{id}.{timestamp}.{body}', body, { id, timestamp })) };
  },
  extraEntry: swExtra,
  listSeparator: ' ',
  admission: (d) => idOrMalformed(d.id, 256),
});

const PRESET: Record<PresetName, Preset> = {
  answerline: {
    adapter: AdapterKind.ANSWERLINE,
    // `running`: a task delivered before it is final (only COMPLETED and FAILED are): acknowledged, never stored.
    styles: ['task', 'task', 'test', 'test-as-text', 'running'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'tsk_',
    readHeaders: () => Object.values(SW),
    signatureHeader: () => SW.signature,
    timestampHeader: () => SW.timestamp,
    signsTimestamp: true,
    newSigner: whsecSigner,
    payload: (d) => ({
      ...(d.style === 'test' ? { test: true } : d.style === 'test-as-text' ? { test: 'true' } : {}),
      task: {
        id: d.id,
        status: d.style === 'running' ? 'PROCESSING' : 'COMPLETED',
        idempotencyKey: `job-${String(d.id).slice(0, 40)}`,
        createdAt: '2026-09-18T10:00:00.000Z',
      },
      credits: { charged: 1, remaining: 499 },
      response: { result: { answer: d.note, confidence: 0.93 } },
    }),
    headers: (_d, body, timestamp, signature) => {
      // Answerline's webhook-id is not the inbox key (task.id is), but it is signed.
      const id = `msg_${sha256Hex(body).slice(0, 24)}`;
      return { [SW.id]: id, [SW.timestamp]: timestamp, [SW.signature]: signature(signedContent('{id}.{timestamp}.{body}', body, { id, timestamp })) };
    },
    extraEntry: swExtra,
    listSeparator: ' ',
    admission: (d, _bytes, parses) => {
      if (!parses) return { kind: 'malformed' };
      if (d.style === 'test') return { kind: 'test' };
      const task = idOrMalformed(d.id, 512);
      return task.kind === 'event' && d.style === 'running' ? { kind: 'not_final' } : task;
    },
  },
  echonova: {
    adapter: AdapterKind.ECHONOVA,
    styles: ['job.completed', 'job.failed', 'spending.threshold', 'spending.exhausted', 'invoice.paid', 'bad event!', 'job.completed:failed', 'relabel'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'job_',
    readHeaders: () => ['x-webhook-event', 'x-webhook-timestamp', 'x-webhook-signature'],
    signatureHeader: () => 'x-webhook-signature',
    timestampHeader: () => 'x-webhook-timestamp',
    signsTimestamp: true,
    newSigner: () => textSigner('sha256', 'hex', ''),
    payload: (d) =>
      d.style.startsWith('spending.')
        ? { apiKeyId: d.id, ...cycleMembers(d.cycle), spentUsd: 12.5, note: d.note }
        : ECHONOVA_JOB_STYLES[d.style]
          ? { jobId: d.id, status: ECHONOVA_JOB_STYLES[d.style].status, createdAt: '2026-09-18T10:00:00.000Z', transcript: d.note }
          : { invoiceId: d.id, note: d.note },
    headers: (d, body, timestamp, signature) => ({
      'x-webhook-event': echonovaHeader(d.style),
      'x-webhook-timestamp': timestamp,
      'x-webhook-signature': signature(signedContent('{timestamp}.{body}', body, { timestamp })),
    }),
    extraEntry: (shape, bytes) => [hex(bytes, 32), hex(bytes, 31), 'sha256', hex(bytes, 32).toUpperCase()][shape % 4],
    listSeparator: ',',
    admission: (d, bytes, parses) => {
      if (d.style === 'bad event!') return { kind: 'malformed' };
      if (!parses) return { kind: 'malformed' };
      const job = ECHONOVA_JOB_STYLES[d.style];
      // A job body (no jobId member: none) is keyed by its jobId alone; its outcome is the signed status.
      if (job && d.id !== undefined) {
        if (!validId(d.id, 512)) return { kind: 'malformed' };
        const eventId = composite(d.id, 'job');
        return job.header === `job.${job.status}` ? { kind: 'event', eventId, repeatable: false } : { kind: 'anomaly', eventId };
      }
      if (job?.header.startsWith('job.')) return { kind: 'malformed' };
      const header = echonovaHeader(d.style);
      if (d.style.startsWith('spending.')) {
        if (!validId(d.id, 512)) return { kind: 'malformed' };
        const cycle = expectedCycle(d.cycle);
        if (cycle === 'too long') return { kind: 'malformed' };
        const eventId = cycle === undefined ? composite(d.id, d.style, 'sha256', sha256Hex(bytes)) : composite(d.id, d.style, cycle);
        return { kind: 'event', eventId, repeatable: d.style === 'spending.exhausted' };
      }
      return { kind: 'event', eventId: composite(header, sha256Hex(bytes)), repeatable: false, shared: !carriesCaseId(d) };
    },
  },
  openai: standardWebhooksPreset(whsecSigner, ['webhook', 'svix']),
  ed25519: standardWebhooksPreset(ed25519Signer, ['webhook', 'svix']),
  stripe: {
    adapter: AdapterKind.STRIPE,
    styles: ['event'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'evt_',
    readHeaders: () => ['stripe-signature'],
    signatureHeader: () => 'stripe-signature',
    signsTimestamp: true,
    newSigner: () => textSigner('sha256', 'hex', '', stripeSecret),
    payload: (d) => ({ id: d.id, object: 'event', type: 'charge.succeeded', data: { object: { id: 'ch_fuzz', amount: 500, description: d.note } } }),
    headers: (_d, body, timestamp, signature) => ({
      'stripe-signature': `t=${timestamp},v1=${signature(signedContent('{timestamp}.{body}', body, { timestamp }))}`,
    }),
    extraEntry: (shape, bytes) =>
      [`v1=${hex(bytes, 32)}`, `v0=${hex(bytes, 32)}`, `v1=${hex(bytes, 31)}`, 'scheme=x', 'junk', `v1=${hex(bytes, 32).toUpperCase()}`][shape % 6],
    listSeparator: ',',
    admission: (d, _bytes, parses) => (parses ? idOrMalformed(d.id, 512) : { kind: 'malformed' }),
  },
  github: {
    adapter: AdapterKind.GITHUB,
    styles: ['issues', 'push', 'ping'],
    idIn: 'header',
    maxIdLength: 512,
    idPrefix: '',
    readHeaders: () => ['x-hub-signature-256', 'x-github-event', 'x-github-delivery'],
    signatureHeader: () => 'x-hub-signature-256',
    signsTimestamp: false,
    newSigner: () => textSigner('sha256', 'hex', 'sha256='),
    keyedByBody: true,
    payload: (d) => ({ action: 'opened', issue: { number: 42, node_id: d.id, title: d.note }, repository: { full_name: 'octo/hello' } }),
    headers: (d, body, _timestamp, signature) => ({
      'x-github-event': d.style,
      'x-github-delivery': typeof d.id === 'string' ? d.id : '',
      'x-github-hook-id': '492013017',
      'x-hub-signature-256': signature(body),
      'user-agent': 'GitHub-Hookshot/a1b2c3d',
    }),
    extraEntry: (shape, bytes) => [`sha256=${hex(bytes, 32)}`, `sha1=${hex(bytes, 20)}`, `sha256=${hex(bytes, 31)}`, 'sha256='][shape % 4],
    listSeparator: ',',
    // Nothing signs X-GitHub-Delivery: the key is the body's digest, a replay under a fresh GUID a duplicate.
    admission: (d, bytes) =>
      d.style === 'ping' ? { kind: 'test' } : { kind: 'event', eventId: sha256Hex(bytes), repeatable: false, shared: !carriesCaseId(d) },
  },
  slack: {
    adapter: AdapterKind.HMAC,
    config: {
      hmac: hmacRuntimeSettings({
        signatureHeader: 'X-Slack-Signature',
        signaturePrefix: 'v0=',
        signedContent: 'v0:{timestamp}:{body}',
        timestampHeader: 'X-Slack-Request-Timestamp',
        idJsonPath: 'event_id',
      }),
    },
    styles: ['event_callback'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'Ev',
    readHeaders: () => ['x-slack-signature', 'x-slack-request-timestamp'],
    signatureHeader: () => 'x-slack-signature',
    timestampHeader: () => 'x-slack-request-timestamp',
    signsTimestamp: true,
    newSigner: () => textSigner('sha256', 'hex', 'v0='),
    payload: (d) => ({ token: 'x', team_id: 'T1', event_id: d.id, type: 'event_callback', event: { type: 'message', text: d.note } }),
    headers: (_d, body, timestamp, signature) => ({
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature(signedContent('v0:{timestamp}:{body}', body, { timestamp })),
    }),
    extraEntry: (shape, bytes) => [`v0=${hex(bytes, 32)}`, `v1=${hex(bytes, 32)}`, `v0=${hex(bytes, 33)}`, 'v0='][shape % 4],
    listSeparator: ',',
    admission: (d, _bytes, parses) => (parses ? idOrMalformed(d.id, 512) : { kind: 'malformed' }),
  },
  acme: {
    adapter: AdapterKind.HMAC,
    config: {
      hmac: hmacRuntimeSettings({
        signatureHeader: 'X-Acme-Signature',
        algorithm: HmacAlgorithm.SHA512,
        signatureEncoding: SignatureEncoding.BASE64,
        signedContent: '{id}.{timestamp}.{body}',
        timestampHeader: 'X-Acme-Timestamp',
        idHeader: 'X-Acme-Id',
        secretEncoding: SecretEncoding.BASE64,
      }),
    },
    styles: ['order'],
    idIn: 'header',
    maxIdLength: 256,
    idPrefix: 'acme_',
    readHeaders: () => ['x-acme-signature', 'x-acme-timestamp', 'x-acme-id'],
    signatureHeader: () => 'x-acme-signature',
    timestampHeader: () => 'x-acme-timestamp',
    signsTimestamp: true,
    newSigner: base64Signer,
    payload: (d) => ({ kind: 'order.created', order: { sku: 'A-1', quantity: 3, note: d.note } }),
    headers: (d, body, timestamp, signature) => {
      const id = typeof d.id === 'string' ? d.id : '';
      return {
        'x-acme-id': id,
        'x-acme-timestamp': timestamp,
        'x-acme-signature': signature(signedContent('{id}.{timestamp}.{body}', body, { id, timestamp })),
      };
    },
    extraEntry: (shape, bytes) => [b64(bytes, 64), b64(bytes, 32), b64(bytes, 63), 'sha512'][shape % 4],
    listSeparator: ',',
    admission: (d) => idOrMalformed(d.id, 256),
  },
  meta: {
    adapter: AdapterKind.META,
    styles: ['messages', 'statuses'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'wamid.',
    readHeaders: () => ['x-hub-signature-256'],
    signatureHeader: () => 'x-hub-signature-256',
    signsTimestamp: false,
    newSigner: metaSigner,
    keyedByBody: true,
    payload: (d) => ({
      object: 'whatsapp_business_account',
      entry: [
        { id: '102290129340398', changes: [{ field: d.style, value: { messaging_product: 'whatsapp', [d.style]: [{ id: d.id, text: { body: d.note } }] } }] },
      ],
    }),
    headers: (_d, body, _timestamp, signature) => ({ 'x-hub-signature-256': signature(body), 'user-agent': 'facebookexternalua' }),
    extraEntry: (shape, bytes) => [`sha256=${hex(bytes, 32)}`, `sha1=${hex(bytes, 20)}`, `sha256=${hex(bytes, 31)}`, 'sha256='][shape % 4],
    listSeparator: ',',
    // Meta signs no id: the key is the body's digest, a retry (the same body) a duplicate.
    admission: (d, bytes) => ({ kind: 'event', eventId: sha256Hex(bytes), repeatable: false, shared: !carriesCaseId(d) }),
  },
  shopify: {
    adapter: AdapterKind.SHOPIFY,
    styles: ['orders/create', 'app/uninstalled'],
    idIn: 'header',
    maxIdLength: 512,
    idPrefix: '',
    readHeaders: () => ['x-shopify-hmac-sha256', 'x-shopify-topic', 'x-shopify-webhook-id'],
    signatureHeader: () => 'x-shopify-hmac-sha256',
    signsTimestamp: false,
    newSigner: () => textSigner('sha256', 'base64', ''),
    keyedByBody: true,
    payload: (d) => ({ id: 820982911946154500, admin_graphql_api_id: d.id, note: d.note, total_price: '12.50' }),
    headers: (d, body, _timestamp, signature) => ({
      'x-shopify-topic': d.style,
      'x-shopify-hmac-sha256': signature(body),
      'x-shopify-webhook-id': typeof d.id === 'string' ? d.id : '',
      'x-shopify-triggered-at': '2026-09-18T10:00:00.000Z',
    }),
    extraEntry: (shape, bytes) => [b64(bytes, 32), b64(bytes, 31), hex(bytes, 32), 'sha256='][shape % 4],
    listSeparator: ',',
    // Nothing signs X-Shopify-Webhook-Id: the key is the body's digest, a replay under a fresh id a duplicate.
    admission: (d, bytes) => ({ kind: 'event', eventId: sha256Hex(bytes), repeatable: false, shared: !carriesCaseId(d) }),
  },
  paddle: {
    adapter: AdapterKind.PADDLE,
    styles: ['transaction.paid'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'evt_',
    readHeaders: () => ['paddle-signature'],
    signatureHeader: () => 'paddle-signature',
    signsTimestamp: true,
    newSigner: () => textSigner('sha256', 'hex', ''),
    payload: (d) => ({
      event_id: d.id,
      event_type: d.style,
      occurred_at: '2026-09-18T10:00:00.000000Z',
      notification_id: 'ntf_fuzz',
      data: { id: 'txn_fuzz', custom_data: { note: d.note } },
    }),
    headers: (_d, body, timestamp, signature) => ({
      'paddle-signature': `ts=${timestamp};h1=${signature(signedContent('{timestamp}:{body}', body, { timestamp }))}`,
    }),
    extraEntry: (shape, bytes) =>
      [`h1=${hex(bytes, 32)}`, `h2=${hex(bytes, 32)}`, `h1=${hex(bytes, 31)}`, 'scheme=x', 'junk', `h1=${hex(bytes, 32).toUpperCase()}`][shape % 6],
    listSeparator: ';',
    admission: (d, _bytes, parses) => (parses ? idOrMalformed(d.id, 512) : { kind: 'malformed' }),
  },
  pagerduty: {
    adapter: AdapterKind.PAGERDUTY,
    styles: ['incident.triggered', 'incident.resolved', 'pagey.ping'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: '01',
    readHeaders: () => ['x-pagerduty-signature'],
    signatureHeader: () => 'x-pagerduty-signature',
    signsTimestamp: false,
    newSigner: () => textSigner('sha256', 'hex', 'v1='),
    payload: (d) => ({
      event: {
        id: d.id,
        event_type: d.style,
        resource_type: d.style === 'pagey.ping' ? 'pagey' : 'incident',
        occurred_at: '2026-09-18T10:00:00.000Z',
        agent: null,
        client: null,
        data: { id: 'PGR0VU2', title: d.note },
      },
    }),
    headers: (_d, body, _timestamp, signature) => ({ 'x-pagerduty-signature': signature(body), 'x-webhook-id': 'fuzz-webhook' }),
    extraEntry: (shape, bytes) => [`v1=${hex(bytes, 32)}`, `v0=${hex(bytes, 32)}`, `v1=${hex(bytes, 31)}`, 'v1='][shape % 4],
    listSeparator: ',',
    // The ping is recognised by its signed event type, before its id is read.
    admission: (d, _bytes, parses) => (!parses ? { kind: 'malformed' } : d.style === 'pagey.ping' ? { kind: 'test' } : idOrMalformed(d.id, 512)),
  },
  linear: {
    adapter: AdapterKind.LINEAR,
    styles: ['Issue:update', 'Comment:create'],
    idIn: 'body',
    maxIdLength: 128,
    idPrefix: 'wh-',
    readHeaders: () => ['linear-signature'],
    signatureHeader: () => 'linear-signature',
    // No header timestamp is checked before the MAC: it is in the body (timestampInBody).
    signsTimestamp: false,
    timestampInBody: true,
    newSigner: () => textSigner('sha256', 'hex', ''),
    payload: (d) => ({
      action: d.style.split(':')[1],
      type: d.style.split(':')[0],
      createdAt: LINEAR_CREATED_AT,
      data: { id: 'issue-fuzz', title: d.note },
      organizationId: 'org-fuzz',
      webhookId: d.id,
      // Milliseconds; a text that is no Unix seconds stays text, which the preset refuses.
      webhookTimestamp: CANONICAL_SECONDS.test(d.timestamp) ? Number(d.timestamp) * 1000 : d.timestamp,
    }),
    headers: (_d, body, _timestamp, signature) => ({ 'linear-signature': signature(body), 'linear-delivery': 'fuzz-delivery', 'linear-event': 'Issue' }),
    extraEntry: (shape, bytes) => [hex(bytes, 32), hex(bytes, 31), 'sha256', hex(bytes, 32).toUpperCase()][shape % 4],
    listSeparator: ',',
    // webhookId (at most 128 bytes), type, action, data.id, createdAt; a retry dated anew is a repeat.
    admission: (d, _bytes, parses) => {
      if (!parses || !fitsBytes(d.id, 128)) return { kind: 'malformed' };
      const [type, action] = d.style.split(':');
      return { kind: 'event', eventId: composite(d.id, type, action, 'issue-fuzz', LINEAR_CREATED_AT), repeatable: true };
    },
  },
  discord: {
    adapter: AdapterKind.DISCORD,
    styles: Object.keys(DISCORD_INTERACTION_TYPES),
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: '',
    readHeaders: () => ['x-signature-ed25519', 'x-signature-timestamp'],
    signatureHeader: () => 'x-signature-ed25519',
    timestampHeader: () => 'x-signature-timestamp',
    signsTimestamp: true,
    newSigner: discordSigner,
    refusalStatus: 401,
    ownAnswer: discordAnswer,
    payload: (d) => ({
      application_id: '1162853462716543108',
      id: d.id,
      type: DISCORD_INTERACTION_TYPES[d.style],
      token: 'aW50ZXJhY3Rpb246ZnV6eg',
      version: 1,
      data: { name: 'note', options: [{ name: 'text', type: 3, value: d.note }] },
    }),
    headers: (_d, body, timestamp, signature) => ({
      'x-signature-ed25519': signature(Buffer.concat([Buffer.from(timestamp, 'utf8'), body])),
      'x-signature-timestamp': timestamp,
    }),
    // Discord sends exactly one signature, and the preset reads exactly one: nothing to add beside it.
    extraEntry: () => '',
    listSeparator: '',
    // A PING and an autocomplete are answered at the edge whatever their id; any other interaction is keyed by its id.
    admission: (d, _bytes, parses) => {
      if (!parses) return { kind: 'malformed' };
      if (d.style === 'ping' || d.style === 'autocomplete') return { kind: 'handshake' };
      return idOrMalformed(d.id, 512);
    },
  },
  square: {
    adapter: AdapterKind.SQUARE,
    config: { notificationUrl: SQUARE_NOTIFICATION_URL },
    styles: ['payment.updated', 'webhooks.test_notification'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: '',
    readHeaders: () => ['x-square-hmacsha256-signature'],
    signatureHeader: () => 'x-square-hmacsha256-signature',
    signsTimestamp: false,
    newSigner: () => textSigner('sha256', 'base64', '', () => randomBytes(16).toString('base64url')),
    payload: (d) => ({
      merchant_id: '6SSW7HV8K2ST5',
      type: d.style,
      event_id: d.id,
      created_at: '2026-09-18T10:00:00.000Z',
      data: { type: 'payment', id: 'pay_fuzz', object: { payment: { id: 'pay_fuzz', note: d.note } } },
    }),
    headers: (_d, body, _timestamp, signature) => ({
      'x-square-hmacsha256-signature': signature(signedContent(`${SQUARE_NOTIFICATION_URL}{body}`, body)),
      'square-environment': 'Sandbox',
    }),
    extraEntry: (shape, bytes) => [b64(bytes, 32), b64(bytes, 31), hex(bytes, 32), 'sha256='][shape % 4],
    listSeparator: ',',
    // Square signs no timestamp; the key is the signed body's event_id.
    admission: (d, _bytes, parses) => (parses ? idOrMalformed(d.id, 512) : { kind: 'malformed' }),
  },
  // The Slack preset (the generic scheme's Slack-style entry above has no URL check).
  'slack-events': {
    adapter: AdapterKind.SLACK,
    styles: ['event_callback', 'url_verification', 'app_rate_limited'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'Ev',
    readHeaders: () => ['x-slack-signature', 'x-slack-request-timestamp'],
    signatureHeader: () => 'x-slack-signature',
    timestampHeader: () => 'x-slack-request-timestamp',
    signsTimestamp: true,
    newSigner: () => textSigner('sha256', 'hex', 'v0='),
    ownAnswer: slackAnswer,
    payload: (d) =>
      d.style === 'url_verification'
        ? { token: d.note, challenge: d.id, type: 'url_verification' }
        : d.style === 'app_rate_limited'
          ? { token: d.note, type: 'app_rate_limited', team_id: 'T1', minute_rate_limited: 1789000000, api_app_id: d.id }
          : { token: 'x', team_id: 'T1', api_app_id: 'A1', event_id: d.id, type: 'event_callback', event: { type: 'message', text: d.note } },
    headers: (_d, body, timestamp, signature) => ({
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature(signedContent('v0:{timestamp}:{body}', body, { timestamp })),
      'x-slack-retry-num': '1',
    }),
    extraEntry: (shape, bytes) => [`v0=${hex(bytes, 32)}`, `v1=${hex(bytes, 32)}`, `v0=${hex(bytes, 33)}`, 'v0='][shape % 4],
    listSeparator: ',',
    // The URL check is answered with its challenge; an Events API event is keyed by its event_id;
    // a body that is no JSON object (a form body) or names no id, by `sha256:<digest>`.
    admission: (d, bytes, parses) => {
      const digest: Admission = { kind: 'event', eventId: composite('sha256', sha256Hex(bytes)), repeatable: false, shared: !carriesCaseId(d) };
      if (!parses || d.style === 'app_rate_limited') return digest;
      if (d.style === 'url_verification') return validId(d.id, 512) ? { kind: 'handshake' } : { kind: 'malformed' };
      return idOrMalformed(d.id, 512);
    },
  },
  zoom: {
    adapter: AdapterKind.ZOOM,
    styles: ['meeting.started', 'endpoint.url_validation'],
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: '',
    readHeaders: () => ['x-zm-signature', 'x-zm-request-timestamp'],
    signatureHeader: () => 'x-zm-signature',
    timestampHeader: () => 'x-zm-request-timestamp',
    signsTimestamp: true,
    newSigner: () => textSigner('sha256', 'hex', 'v0='),
    ownAnswer: zoomAnswer,
    payload: (d) =>
      d.style === 'endpoint.url_validation'
        ? { payload: { plainToken: d.id }, event_ts: 1789000000000, event: d.style }
        : { event: d.style, event_ts: 1789000000000, payload: { account_id: 'acct_fuzz', object: { id: d.id, topic: d.note } } },
    headers: (_d, body, timestamp, signature) => ({
      'x-zm-request-timestamp': timestamp,
      'x-zm-signature': signature(signedContent('v0:{timestamp}:{body}', body, { timestamp })),
      'x-zm-trackingid': 'v=2.0&s=fuzz&r=VA',
    }),
    extraEntry: (shape, bytes) => [`v0=${hex(bytes, 32)}`, `v1=${hex(bytes, 32)}`, `v0=${hex(bytes, 33)}`, 'v0='][shape % 4],
    listSeparator: ',',
    // Zoom signs no delivery id: an event is keyed by the body's digest; the URL validation is answered with the token's HMAC.
    admission: (d, bytes, parses) => {
      if (!parses) return { kind: 'malformed' };
      if (d.style !== 'endpoint.url_validation') return { kind: 'event', eventId: sha256Hex(bytes), repeatable: false, shared: !carriesCaseId(d) };
      return validId(d.id, 512) ? { kind: 'handshake' } : { kind: 'malformed' };
    },
  },
  twilio: {
    adapter: AdapterKind.TWILIO,
    config: { notificationUrl: TWILIO_WEBHOOK_URL },
    styles: TWILIO_STYLES,
    idIn: 'body',
    maxIdLength: 512,
    idPrefix: 'SM',
    readHeaders: () => ['x-twilio-signature', 'x-twilio-webhooks-signature-settings', 'content-type'],
    signatureHeader: () => 'x-twilio-signature',
    signsTimestamp: false,
    newSigner: twilioSigner,
    opaqueBody: true,
    payload: (d) =>
      twilioIsJson(d.style)
        ? { specversion: '1.0', type: 'com.twilio.messaging.message.delivered', id: d.id, data: { messageSid: d.id, body: d.note } }
        : twilioParams(d),
    bodyText: (d, payload, size) => {
      if (twilioIsJson(d.style)) return payloadText(payload, size);
      const text = twilioForm(payload, d.style);
      const room = size === undefined ? -1 : size - Buffer.byteLength(text) - '&Pad='.length;
      return room < 0 ? text : `${text}&Pad=${'x'.repeat(room)}`;
    },
    query: twilioQuery,
    headers: (d, body, _timestamp, _signature, keyText) => {
      const query = twilioQuery(d, body);
      const url = query ? `${TWILIO_WEBHOOK_URL}?${query}` : TWILIO_WEBHOOK_URL;
      const algorithm = d.style === 'form-sha256' ? 'HMAC_SHA256' : undefined;
      // The parameters Twilio sent, where the body is their encoding; otherwise what a receiver decodes from it.
      const intended = twilioParams(d);
      const params = twilioIsJson(d.style) ? {} : body.toString('utf8') === twilioForm(intended, d.style) ? intended : decodedForm(body);
      return {
        'content-type': twilioIsJson(d.style)
          ? 'application/json; charset=utf-8'
          : d.style === 'form'
            ? 'application/x-www-form-urlencoded; charset=UTF-8'
            : 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(keyText!, url, params, algorithm),
        ...(algorithm ? { 'x-twilio-webhooks-signature-settings': `key=webhooks_sharedkey_fuzz,algorithm=${algorithm}` } : {}),
        'i-twilio-idempotency-token': `idem-${sha256Hex(body).slice(0, 12)}`,
        'user-agent': 'TwilioProxy/1.1',
      };
    },
    // Twilio sends exactly one signature, and the preset reads exactly one: nothing to add beside it.
    extraEntry: () => '',
    listSeparator: '',
    signsSame: (d, signed, received) => !twilioIsJson(d.style) && twilioSignedContent(d, signed, '') === twilioSignedContent(d, received, ''),
    // Twilio signs no id: any body is keyed by the digest of what it signs, the URL and its query included.
    admission: (d, bytes) => ({
      kind: 'event',
      eventId: sha256Hex(twilioSignedContent(d, bytes, twilioQuery(d, bytes))),
      repeatable: false,
      shared: !carriesCaseId(d),
    }),
  },
};

/** Every header name any preset reads: a 4xx detail naming a header names one of these. */
const KNOWN_HEADERS = new Set(PRESETS.flatMap((name) => PRESET[name].styles.flatMap((style) => PRESET[name].readHeaders(style))));
/** Every body field an id is read from. */
const KNOWN_FIELDS = [
  'task.id',
  'task.status',
  'task.createdAt',
  'task.idempotencyKey',
  'jobId',
  'apiKeyId',
  'billingCycle',
  'cycle',
  'id',
  'event_id',
  'event.id',
  'webhookId',
  'type',
  'action',
  'data.id',
  'createdAt',
  'webhookTimestamp',
  'challenge',
  'event',
  'payload.plainToken',
];
/** Every query parameter a preset reads (Twilio's JSON body hash). */
const KNOWN_QUERY_PARAMETERS = ['bodySHA256'];

// =============================================================================================
// Plans: what fast-check generates and shrinks
// =============================================================================================

export type IdPlan =
  | { readonly kind: 'nonce' }
  | { readonly kind: 'length'; readonly length: number; readonly fill?: string }
  | { readonly kind: 'unicode'; readonly suffix: string }
  | { readonly kind: 'notString'; readonly value: unknown };

export type JsonEdit =
  'bom' | 'duplicate-keys' | 'big-numbers' | 'deep' | 'trailing-space' | 'trailing-garbage' | 'array' | 'odd-layout' | 'escaped' | 'nan' | 'proto-key';

export type BodyPlan =
  | { readonly kind: 'payload' }
  | { readonly kind: 'edit'; readonly edit: JsonEdit; readonly depth: number }
  | { readonly kind: 'size'; readonly size: number }
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'empty' }
  | { readonly kind: 'deep'; readonly depth: number; readonly open: '[' | '{"a":' };

export type TimestampPlan = { readonly kind: 'offset'; readonly seconds: number } | { readonly kind: 'text'; readonly template: string };

export interface ExtraSignature {
  readonly shape: number;
  readonly seed: number;
  readonly before: boolean;
}

export type HeaderRole = 'signature' | 'timestamp' | 'id' | 'read' | 'any';

export type HeaderOp =
  | { readonly kind: 'remove' }
  | { readonly kind: 'duplicate'; readonly separator: ',' | ', ' }
  | { readonly kind: 'garble'; readonly at: number; readonly char: string }
  | { readonly kind: 'replace'; readonly value: string }
  | { readonly kind: 'huge'; readonly length: number }
  | { readonly kind: 'empty' }
  | { readonly kind: 'upper-name' }
  | { readonly kind: 'pad' }
  | { readonly kind: 'truncate'; readonly count: number }
  | { readonly kind: 'null' };

export type BodyOp =
  | { readonly kind: 'flip'; readonly at: number; readonly bit: number }
  | { readonly kind: 'truncate'; readonly count: number }
  | { readonly kind: 'extend'; readonly bytes: Uint8Array }
  | { readonly kind: 'bom' }
  /** The `&`-separated parts of the body rotated by one (a form's parameters reordered); two bytes swapped when there are none. */
  | { readonly kind: 'reorder' };

/** A change to the query the request carries: a character flipped, its parameters reordered, one dropped, one appended. */
export type QueryOp =
  { readonly kind: 'flip'; readonly at: number } | { readonly kind: 'reorder' } | { readonly kind: 'drop'; readonly at: number } | { readonly kind: 'append' };

export type Mutation =
  | { readonly kind: 'header'; readonly role: HeaderRole; readonly index: number; readonly op: HeaderOp }
  | { readonly kind: 'junk-header'; readonly name: string; readonly value: string }
  | { readonly kind: 'body'; readonly op: BodyOp }
  | { readonly kind: 'query'; readonly op: QueryOp };

export type EncodingPlan = 'utf8' | 'base64' | 'base64-junk' | 'base64-unpadded' | 'base64-spaced' | 'base64url' | 'latin1';

export type PathPlan = 'own' | 'slash' | 'prefix' | 'double' | 'other' | 'upper' | 'encoded' | 'query' | 'bare' | 'missing';

export interface ShapePlan {
  readonly headers: 'object' | 'missing' | 'null';
  readonly body: 'string' | 'null' | 'missing';
  readonly context: boolean;
  readonly base64Flag: boolean;
  readonly extraFields: boolean;
}

/** `reencoded`: the delivery again with its body's parts reordered (for Twilio's form, the same parameters in other bytes). */
export type FollowUp = 'replay' | 'retry' | 'altered' | 'concurrent' | 'reencoded';

export interface DeliveryPlan {
  readonly kind: 'delivery';
  readonly preset: PresetName;
  readonly style: number;
  readonly note: string;
  readonly id: IdPlan;
  readonly body: BodyPlan;
  readonly timestamp: TimestampPlan;
  readonly signing: 'valid' | 'wrong-secret' | 'unsigned';
  readonly extras: readonly ExtraSignature[];
  readonly mutations: readonly Mutation[];
  readonly encoding: EncodingPlan;
  readonly path: PathPlan;
  readonly shape: ShapePlan;
  readonly followUp?: FollowUp;
  /** Echonova spending.* only; default: named. */
  readonly cycle?: CyclePlan;
}

export interface RandomPlan {
  readonly kind: 'random';
  readonly rawPath?: string;
  readonly headers?: Readonly<Record<string, string>> | null;
  /** A string as API Gateway sends it, or what a direct invocation may pass (null, a number, an object). */
  readonly body?: unknown;
  readonly isBase64Encoded?: boolean;
  readonly context: boolean;
}

export type FuzzPlan = DeliveryPlan | RandomPlan;

// --- arbitraries -----------------------------------------------------------------------------

const NOW_TOKEN = '<now>';
const UNICODE_BITS = [
  '🚀',
  '東京',
  'é',
  'e\u0301',
  '\u0000',
  '\u0001',
  '\u007f',
  '\u2028',
  '\ud800',
  '\udfff',
  '\ufffe',
  '\uffff',
  '\ufeff',
  '#',
  '"',
  '\\',
  ' ',
  '\t',
  '/',
  '%00',
  '\u202e',
  '\r\n',
];
const HEADER_NAMES = [...KNOWN_HEADERS, 'content-type', 'content-length', 'user-agent', 'host', 'x-github-hook-id'];

const noteArb = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constant(UNICODE_NOTE) },
);

const idArb: fc.Arbitrary<IdPlan> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'nonce' as const }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { kind: fc.constant('length' as const), length: fc.constantFrom(0, 1, 255, 256, 257, 511, 512, 513, 2048), fill: fc.constantFrom('x', '東', 'é') },
      { requiredKeys: ['kind', 'length'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('unicode' as const),
      suffix: fc.array(fc.constantFrom(...UNICODE_BITS), { minLength: 1, maxLength: 3 }).map((bits) => bits.join('')),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('notString' as const),
      value: fc.constantFrom<unknown>(undefined, null, 42, 1e400, true, [], ['tsk_1'], { id: 'x' }, ''),
    }),
  },
);

const bodyArb: fc.Arbitrary<BodyPlan> = fc.oneof(
  { weight: 14, arbitrary: fc.constant({ kind: 'payload' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('edit' as const),
      edit: fc.constantFrom<JsonEdit>(
        'bom',
        'duplicate-keys',
        'big-numbers',
        'deep',
        'trailing-space',
        'trailing-garbage',
        'array',
        'odd-layout',
        'escaped',
        'nan',
        'proto-key',
      ),
      // A member nested `depth` deep inside the body's object: around the nesting limit, and as deep as the body limit holds.
      depth: fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: 1, max: 64 }) },
        { weight: 2, arbitrary: fc.constant(1_000) },
        { weight: 2, arbitrary: fc.constantFrom(MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH) },
        { weight: 1, arbitrary: fc.constant(20_000) },
        { weight: 1, arbitrary: fc.constant(DEEPEST_MEMBER) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('size' as const),
      // Around the inline limit (the row or S3) often; around the 6 MB limit rarely, as it is slow
      // (BOUNDARY_PLANS always run those).
      size: fc.oneof(
        { weight: 150, arbitrary: fc.constantFrom(INLINE_BODY_BYTES - 1, INLINE_BODY_BYTES, INLINE_BODY_BYTES + 1) },
        { weight: 1, arbitrary: fc.constantFrom(MAX_BODY_BYTES - 1, MAX_BODY_BYTES, MAX_BODY_BYTES + 1, MAX_BODY_BYTES + 4096) },
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 96 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('text' as const), text: fc.string({ unit: 'binary', maxLength: 64 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deep' as const),
      depth: fc.oneof(
        { weight: 30, arbitrary: fc.constantFrom(10, 1_000) },
        { weight: 10, arbitrary: fc.constantFrom(MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1) },
        { weight: 1, arbitrary: fc.constantFrom(100_000, DEEPEST_ARRAY) },
      ),
      open: fc.constantFrom<'[' | '{"a":'>('[', '{"a":'),
    }),
  },
);

const timestampArb: fc.Arbitrary<TimestampPlan> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('offset' as const), seconds: fc.integer({ min: -5, max: 5 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('offset' as const),
      seconds: fc.oneof(
        fc.constantFrom(-TOLERANCE_SECONDS - 1, -TOLERANCE_SECONDS, TOLERANCE_SECONDS, TOLERANCE_SECONDS + 1),
        fc.integer({ min: -2 * TOLERANCE_SECONDS, max: 2 * TOLERANCE_SECONDS }),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('offset' as const),
      seconds: fc.oneof(
        fc.integer({ min: -4_000_000_000, max: -10_000 }),
        fc.integer({ min: 10_000, max: 2 ** 31 }),
        fc.constantFrom(-(2 ** 40), 2 ** 40, 1e12),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('text' as const),
      template: fc.oneof(
        fc.constantFrom(
          '',
          'abc',
          '-1',
          `-${NOW_TOKEN}`,
          `${NOW_TOKEN}.5`,
          `${NOW_TOKEN}.0`,
          '1.7e9',
          '99999999999999999999',
          '1e3',
          ` ${NOW_TOKEN}`,
          `${NOW_TOKEN} `,
          '0x6a',
          '\uff11\uff17\uff18\uff19',
          '\u0661\u0667\u0668\u0669',
          `00${NOW_TOKEN}`,
          `+${NOW_TOKEN}`,
          `${NOW_TOKEN},${NOW_TOKEN}`,
          'NaN',
          'Infinity',
          '0',
          `${NOW_TOKEN}000`,
        ),
        fc.string({ maxLength: 14 }),
      ),
    }),
  },
);

const headerOpArb: fc.Arbitrary<HeaderOp> = fc.oneof(
  fc.constant({ kind: 'remove' as const }),
  fc.record({ kind: fc.constant('duplicate' as const), separator: fc.constantFrom<',' | ', '>(',', ', ') }),
  fc.record({
    kind: fc.constant('garble' as const),
    at: fc.nat(),
    char: fc.oneof(fc.string({ minLength: 1, maxLength: 1 }), fc.constantFrom(...UNICODE_BITS)),
  }),
  fc.record({
    kind: fc.constant('replace' as const),
    value: fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 })),
  }),
  fc.record({ kind: fc.constant('huge' as const), length: fc.constantFrom(1_000, 16_384, 100_000) }),
  fc.constant({ kind: 'empty' as const }),
  fc.constant({ kind: 'upper-name' as const }),
  fc.constant({ kind: 'pad' as const }),
  fc.record({ kind: fc.constant('truncate' as const), count: fc.integer({ min: 1, max: 8 }) }),
  fc.constant({ kind: 'null' as const }),
);

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('header' as const),
      role: fc.constantFrom<HeaderRole>('signature', 'timestamp', 'id', 'read', 'any'),
      index: fc.nat(),
      op: headerOpArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('junk-header' as const),
      name: fc.oneof(fc.constantFrom(...HEADER_NAMES, 'Webhook-Signature', 'X-Fuzz', 'x-fuzz-extra'), fc.stringMatching(/^x-[a-z0-9-]{1,12}$/)),
      value: fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 8 })),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('body' as const),
      op: fc.oneof(
        fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
        fc.record({ kind: fc.constant('truncate' as const), count: fc.integer({ min: 1, max: 16 }) }),
        fc.record({ kind: fc.constant('extend' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
        fc.constant({ kind: 'bom' as const }),
        fc.constant({ kind: 'reorder' as const }),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      op: fc.oneof(
        fc.record({ kind: fc.constant('flip' as const), at: fc.nat() }),
        fc.constant({ kind: 'reorder' as const }),
        fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
        fc.constant({ kind: 'append' as const }),
      ),
    }),
  },
);

const encodingArb: fc.Arbitrary<EncodingPlan> = fc.oneof(
  { weight: 10, arbitrary: fc.constant<EncodingPlan>('utf8') },
  { weight: 4, arbitrary: fc.constant<EncodingPlan>('base64') },
  { weight: 2, arbitrary: fc.constantFrom<EncodingPlan>('base64-junk', 'base64-unpadded', 'base64-spaced', 'base64url', 'latin1') },
);

const pathArb: fc.Arbitrary<PathPlan> = fc.oneof(
  { weight: 24, arbitrary: fc.constant<PathPlan>('own') },
  { weight: 3, arbitrary: fc.constantFrom<PathPlan>('slash', 'prefix', 'double') },
  { weight: 2, arbitrary: fc.constantFrom<PathPlan>('other', 'upper', 'encoded', 'query', 'bare', 'missing') },
);

const normalShape: ShapePlan = { headers: 'object', body: 'string', context: true, base64Flag: true, extraFields: false };
const shapeArb: fc.Arbitrary<ShapePlan> = fc.oneof(
  { weight: 30, arbitrary: fc.constant(normalShape) },
  {
    weight: 2,
    arbitrary: fc.record({
      headers: fc.constantFrom<ShapePlan['headers']>('object', 'missing', 'null'),
      body: fc.constantFrom<ShapePlan['body']>('string', 'null', 'missing'),
      context: fc.boolean(),
      base64Flag: fc.boolean(),
      extraFields: fc.boolean(),
    }),
  },
);

const deliveryArb: fc.Arbitrary<DeliveryPlan> = fc.record(
  {
    kind: fc.constant('delivery' as const),
    preset: fc.constantFrom(...PRESETS),
    style: fc.nat({ max: 7 }),
    note: noteArb,
    id: idArb,
    body: bodyArb,
    timestamp: timestampArb,
    signing: fc.oneof(
      { weight: 8, arbitrary: fc.constant('valid' as const) },
      { weight: 1, arbitrary: fc.constant('wrong-secret' as const) },
      { weight: 1, arbitrary: fc.constant('unsigned' as const) },
    ),
    extras: fc.oneof(
      { weight: 4, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(fc.record({ shape: fc.nat(), seed: fc.nat(), before: fc.boolean() }), { minLength: 1, maxLength: 4 }) },
    ),
    mutations: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 5, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) }),
    encoding: encodingArb,
    path: pathArb,
    shape: shapeArb,
    followUp: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom<FollowUp>('replay', 'retry', 'altered', 'concurrent', 'reencoded') },
    ),
    cycle: fc.oneof(
      { weight: 4, arbitrary: fc.constant<CyclePlan>('named') },
      { weight: 1, arbitrary: fc.constantFrom<CyclePlan>('alias', 'long', 'longest', 'number', 'missing') },
    ),
  },
  { requiredKeys: ['kind', 'preset', 'style', 'note', 'id', 'body', 'timestamp', 'signing', 'extras', 'mutations', 'encoding', 'path', 'shape'] },
);

const hex64Arb = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex'));
const headerValueArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.base64String({ maxLength: 48 }).map((value) => `v1,${value}`),
  fc.tuple(fc.integer({ min: 0, max: 2 ** 33 }), hex64Arb).map(([t, v]) => `t=${t},v1=${v}`),
  hex64Arb.map((value) => `sha256=${value}`),
  fc.integer({ min: 0, max: 2 ** 35 }).map(String),
);

const randomArb: fc.Arbitrary<RandomPlan> = fc.record(
  {
    kind: fc.constant('random' as const),
    rawPath: fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom(
        ...PRESETS.map((name) => `/hooks/${name}`),
        '/hooks/',
        '/',
        '',
        '/hooks/__proto__',
        '/hooks/constructor',
        '/hooks/hasOwnProperty',
        '/hooks/%00',
      ),
      fc.string({ unit: 'grapheme', maxLength: 12 }).map((name) => `/hooks/${name}`),
    ),
    headers: fc.oneof(
      {
        weight: 6,
        arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...HEADER_NAMES), fc.string({ minLength: 1, maxLength: 12 })), headerValueArb, { maxKeys: 8 }),
      },
      { weight: 1, arbitrary: fc.constant(null) },
    ),
    body: fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.base64String({ maxLength: 60 }),
      fc.json({ maxDepth: 3 }),
      fc.constantFrom<unknown>(null, 42, { a: 1 }, ['x'], true),
    ),
    isBase64Encoded: fc.boolean(),
    context: fc.boolean(),
  },
  { requiredKeys: ['kind', 'context'] },
);

/** Every case: mostly deliveries mutated from validly signed ones, the rest fully random events. */
export const fuzzPlanArb: fc.Arbitrary<FuzzPlan> = fc.oneof({ weight: 9, arbitrary: deliveryArb }, { weight: 1, arbitrary: randomArb });

/** A validly signed, fresh, intact delivery of `preset`, changed by `overrides`. */
export function deliveryPlan(preset: PresetName, overrides: Partial<DeliveryPlan> = {}): DeliveryPlan {
  return {
    kind: 'delivery',
    preset,
    style: 0,
    note: 'a plain delivery',
    id: { kind: 'nonce' },
    body: { kind: 'payload' },
    timestamp: { kind: 'offset', seconds: 0 },
    signing: 'valid',
    extras: [],
    mutations: [],
    encoding: 'utf8',
    path: 'own',
    shape: normalShape,
    ...overrides,
  };
}

/**
 * Cases every run starts with, whatever the seed: the size limits (6 MB: the last byte accepted
 * into S3, the first one refused, plain and base64-encoded; the inline limit) and the nesting limit
 * (512 levels, 513, and an array as deep as 6 MB holds), which generated cases reach only rarely
 * because they are slow.
 */
export const BOUNDARY_PLANS: readonly FuzzPlan[] = [
  ...[MAX_BODY_BYTES - 1, MAX_BODY_BYTES, MAX_BODY_BYTES + 1].flatMap((size) =>
    (['utf8', 'base64'] as const).map((encoding) => deliveryPlan('answerline', { body: { kind: 'size', size }, encoding })),
  ),
  deliveryPlan('stripe', { body: { kind: 'size', size: MAX_BODY_BYTES }, signing: 'wrong-secret' }),
  deliveryPlan('github', { body: { kind: 'size', size: MAX_BODY_BYTES + 1 }, path: 'upper' }),
  ...[INLINE_BODY_BYTES, INLINE_BODY_BYTES + 1].map((size) => deliveryPlan('slack', { body: { kind: 'size', size }, followUp: 'altered' })),
  // The nesting limit: a member nested so the body is 512 levels deep, then 513; the deepest array the body limit holds.
  ...[MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH].map((depth) => deliveryPlan('echonova', { body: { kind: 'edit', edit: 'deep', depth } })),
  deliveryPlan('answerline', { body: { kind: 'deep', depth: DEEPEST_ARRAY, open: '[' } }),
];

/**
 * Counterexamples the fuzzer found, shrunk, kept so that every run checks them first.
 * - A header value that is not a string (a direct invocation's `null`; here `user-agent`, the
 *   fifth header of the event) was kept by parseApiGatewayEvent, and the row's metadata then
 *   called `.slice` on it: 500 internal_error for a validly signed delivery. Fixed in
 *   lambda/shared/runtime/http.ts: only string header values are headers.
 * - A body that is not a string (a direct invocation's number) made Buffer.byteLength throw:
 *   500 internal_error. Fixed in lambda/shared/runtime/http.ts: only a string is a body.
 * - An Echonova spending.* body naming a 3,000-character billing cycle: the cycle is part of the
 *   event id, the key passed DynamoDB's 2,048-byte limit, and a validly signed delivery was
 *   answered 503 store_error, retried until Echonova disables the webhook. Fixed in
 *   lambda/shared/providers/echonova/adapter.ts: a cycle over 64 bytes is malformed (400).
 * The last four pin down rules rather than crashes: an Echonova job replayed under another event
 * header is quarantined under its job, a spending event without a cycle retried is a duplicate,
 * an Answerline task that is not final is acknowledged and not stored.
 */
export const REGRESSION_PLANS: readonly FuzzPlan[] = [
  // An Echonova job.completed with an array nested 6,000 deep was acknowledged (202), and its
  // effect then overflowed the stack on every attempt: a winner stored, its effect never sent.
  // Fixed in lambda/shared/providers/adapter.ts: a body nested deeper than 512 levels is refused.
  deliveryPlan('echonova', { body: { kind: 'edit', edit: 'deep', depth: 6_000 } }),
  // An event id with U+FFFF / U+FFFE: SQS refused the work message, so the accepted row was never
  // enqueued. Fixed in lambda/shared/stores/work-queue.ts: non-ASCII is escaped in the message.
  deliveryPlan('openai', { id: { kind: 'unicode', suffix: '\uffff' } }),
  deliveryPlan('stripe', { id: { kind: 'unicode', suffix: '\ufffe' } }),
  deliveryPlan('answerline', { mutations: [{ kind: 'header', role: 'any', index: 4, op: { kind: 'null' } }] }),
  deliveryPlan('github', { mutations: [{ kind: 'header', role: 'any', index: 4, op: { kind: 'null' } }], followUp: 'replay' }),
  { kind: 'random', rawPath: '/hooks/stripe', headers: {}, body: 42, isBase64Encoded: false, context: true },
  deliveryPlan('echonova', { style: 2, cycle: 'long' }),
  deliveryPlan('echonova', { style: 3, cycle: 'longest', followUp: 'altered' }),
  { kind: 'random', rawPath: '/hooks/openai', headers: { 'webhook-id': 'msg_1' }, body: { a: 1 }, isBase64Encoded: true, context: false },
  deliveryPlan('echonova', { style: 6, followUp: 'altered' }),
  deliveryPlan('echonova', { style: 7, followUp: 'retry' }),
  deliveryPlan('echonova', { style: 2, cycle: 'missing', followUp: 'retry' }),
  deliveryPlan('answerline', { style: 4, followUp: 'altered' }),
  // A Twilio request with an empty body is signed over its URL alone: given other bytes under
  // another content type, nothing signed them, yet they verified and were stored. Fixed in
  // lambda/shared/providers/twilio/signature.ts: a body neither form-encoded nor hashed into the URL is refused.
  deliveryPlan('twilio', {
    body: { kind: 'empty' },
    mutations: [
      { kind: 'junk-header', name: 'content-type', value: 'application/json' },
      { kind: 'body', op: { kind: 'extend', bytes: Buffer.from('{"forged":1}') } },
    ],
  }),
  // Twilio's form parameters reordered sign the same: keyed by the body's bytes, the copy was a
  // second row. Fixed in lambda/shared/providers/twilio/adapter.ts: keyed by the signed content.
  deliveryPlan('twilio', { style: 1, followUp: 'reencoded' }),
  // A Twilio form body that starts with `?`: URLSearchParams, which takes a query, dropped it from
  // the first name, so Twilio's signature over `?Body…` was refused. Fixed in
  // lambda/shared/providers/twilio/signature.ts: the body is read as a form, not as a query.
  deliveryPlan('twilio', { body: { kind: 'text', text: '?Body=hello&MessageSid=SM1' } }),
  // A Zoom event without its object id, laid out oddly: the layout wrote the missing member as
  // `"id": undefined`, no JSON, so the oracle expected an event the verifier rightly refused.
  // Fixed in test/support/senders.ts: oddJson leaves undefined members out, as JSON.stringify does.
  deliveryPlan('zoom', {
    id: { kind: 'notString', value: undefined },
    body: { kind: 'edit', edit: 'odd-layout', depth: 1000 },
    shape: { headers: 'object', body: 'string', context: true, base64Flag: true, extraFields: false },
  }),
];

// =============================================================================================
// Materializing a plan into events, with what each one must be answered
// =============================================================================================

/** What an invocation must be answered, as far as the plan pins it down. */
type Expectation =
  | { readonly kind: 'any' }
  /** Unauthenticated or foreign: any 4xx. */
  | { readonly kind: 'reject' }
  | { readonly kind: 'reason'; readonly reason: Reason }
  /** Stored (accepted, duplicate or quarantined), the exact outcome decided by what this case stored before. */
  | { readonly kind: 'event'; readonly key: string; readonly repeatable: boolean; readonly unique: boolean }
  /** Quarantined under `key` whatever was stored before: an unsigned header contradicts the signed body. */
  | { readonly kind: 'anomaly'; readonly key: string };

interface Step {
  readonly event: APIGatewayProxyEventV2;
  readonly requestId: string;
  /** False when the event has no requestContext (its log line then has no requestId). */
  readonly hasContext: boolean;
  /** The bytes the verifier reads from the event (API Gateway's decoding), and their digest. */
  readonly received: Buffer;
  readonly digest: string;
  readonly expectation: Expectation;
  /**
   * The key of the job an authentic Echonova job body names: whatever its (unsigned) event header
   * says, the only key under which a copy may be quarantined without an original row.
   */
  readonly jobKey?: string;
  readonly concurrentWithPrevious: boolean;
  /** Content that must never appear in a log line. */
  readonly needles: readonly string[];
}

/** A step before its place in the sequence is known. */
type Materialized = Omit<Step, 'concurrentWithPrevious'>;

const HOOK = (name: string) => `/hooks/${name}`;

function hashBytes(seed: string | number, length: number): Buffer {
  const chunks: Buffer[] = [];
  for (let i = 0; chunks.length * 32 < length; i++) chunks.push(createHash('sha256').update(`${seed}:${i}`).digest());
  return Buffer.concat(chunks).subarray(0, length);
}

/** The id a plan asks for, unique per execution (`nonce`) unless the plan says otherwise. */
function planId(plan: IdPlan, prefix: string, nonce: string): unknown {
  const base = `${prefix}${nonce}`;
  switch (plan.kind) {
    case 'nonce':
      return base;
    case 'length':
      return (base + (plan.fill ?? 'x').repeat(Math.max(0, plan.length - base.length))).slice(0, plan.length);
    case 'unicode':
      return `${base}${plan.suffix}`;
    case 'notString':
      return plan.value;
  }
}

/** A JSON object body as text, with `pad` making it exactly `size` bytes when asked. */
function payloadText(value: Record<string, unknown>, size?: number): string {
  if (size === undefined) return JSON.stringify(value);
  const base = JSON.stringify({ ...value, pad: '' });
  const room = size - Buffer.byteLength(base);
  return room <= 0 ? base : `${base.slice(0, -2)}${'x'.repeat(room)}"}`;
}

/** Applies a JSON edge case to a payload; `parses`: the result is still a JSON object with the same members. */
function editPayload(value: Record<string, unknown>, edit: JsonEdit, depth: number, idField: string | undefined): { text: string; parses: boolean } {
  const text = JSON.stringify(value);
  switch (edit) {
    case 'bom':
      return { text: `\ufeff${text}`, parses: false };
    case 'duplicate-keys': {
      // The same member twice: JSON.parse keeps the last one, which carries the planned value.
      if (!idField || !(idField in value)) return { text: `{"dup":1,"dup":2,${text.slice(1)}`, parses: true };
      return { text: `{${JSON.stringify(idField)}:"decoy-${'z'.repeat(8)}",${text.slice(1)}`, parses: true };
    }
    case 'big-numbers':
      return { text: `{"big":123456789012345678901234567890,"huge":1e400,"tiny":1e-400,"neg":-0,"unsafe":9007199254740993,${text.slice(1)}`, parses: true };
    case 'deep':
      return { text: `{"deep":${'['.repeat(depth)}${']'.repeat(depth)},${text.slice(1)}`, parses: true };
    case 'trailing-space':
      return { text: ` \r\n\t${text} \n`, parses: true };
    case 'trailing-garbage':
      return { text: `${text}x`, parses: false };
    case 'array':
      return { text: `[${text}]`, parses: false };
    case 'odd-layout':
      return { text: oddJson(value), parses: true };
    case 'escaped':
      // Every non-ASCII character and some ASCII ones escaped: other bytes, the same value.
      return { text: text.replace(/[^\x20-\x7e]|[/<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`), parses: true };
    case 'nan':
      return { text: `{"n":NaN,${text.slice(1)}`, parses: false };
    case 'proto-key':
      return { text: `{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},${text.slice(1)}`, parses: true };
  }
}

function base64Variant(bytes: Buffer, encoding: EncodingPlan): string {
  const text = bytes.toString('base64');
  switch (encoding) {
    case 'base64-junk':
      return `${text.slice(0, Math.floor(text.length / 2))}*!${text.slice(Math.floor(text.length / 2))}`;
    case 'base64-unpadded':
      return text.replace(/=+$/, '');
    case 'base64-spaced':
      return text.replace(/(.{8})/g, '$1 ');
    case 'base64url':
      return bytes.toString('base64url');
    default:
      return text;
  }
}

function timestampText(plan: TimestampPlan, nowSeconds: number, extraSeconds: number): string {
  return plan.kind === 'offset' ? String(nowSeconds + plan.seconds + extraSeconds) : plan.template.split(NOW_TOKEN).join(String(nowSeconds + extraSeconds));
}

const CANONICAL_SECONDS = /^\d{1,12}$/;

const WINDOW = 96;

/**
 * What a leaked value would put in a JSON log line: the value (raw and JSON-escaped) or, for a
 * long one, windows of it (start, middle, end), which a whole or partial leak also contains.
 */
function needlesOf(...values: (string | undefined)[]): string[] {
  return values.flatMap((value) => {
    if (value === undefined) return [];
    const parts = value.length <= 4 * WINDOW ? [value] : [0, Math.floor(value.length / 2), value.length - WINDOW].map((at) => value.slice(at, at + WINDOW));
    return parts.flatMap((part) => [part, JSON.stringify(part).slice(1, -1)]);
  });
}

function pathFor(plan: PathPlan, own: string, other: string): string | undefined {
  switch (plan) {
    case 'own':
      return HOOK(own);
    case 'slash':
      return `${HOOK(own)}/`;
    case 'prefix':
      return `/prod${HOOK(own)}`;
    case 'double':
      return `${HOOK(other)}${HOOK(own)}`;
    case 'other':
      return HOOK(other);
    case 'upper':
      return HOOK(own.toUpperCase());
    case 'encoded':
      return HOOK(own.replace(/[aeiou]/, (c) => `%${c.charCodeAt(0).toString(16)}`));
    case 'query':
      return `${HOOK(own)}?x=1`;
    case 'bare':
      return '/hooks/';
    case 'missing':
      return undefined;
  }
}

// =============================================================================================
// The bench: one inbox serving every preset, the property, and the audit
// =============================================================================================

export interface FuzzStats {
  cases: number;
  invocations: number;
  byReason: Record<string, number>;
  byStatus: Record<string, number>;
  byPreset: Record<string, number>;
  exact: number;
  rejectOnly: number;
  acceptedStored: number;
  quarantinedStored: number;
  violations: number;
}

export interface AuditReport {
  readonly deliveryRows: number;
  readonly expectedDeliveryRows: number;
  readonly quarantineItems: number;
  readonly expectedQuarantineItems: number;
  readonly messages: number;
  readonly expectedMessages: number;
  readonly violations: readonly string[];
}

export interface FuzzBenchOptions {
  /** Makes ids reproducible for a seed; anything unique per run. */
  readonly salt: string;
  readonly label?: string;
}

export class FuzzBench {
  readonly stats: FuzzStats = {
    cases: 0,
    invocations: 0,
    byReason: {},
    byStatus: {},
    byPreset: {},
    exact: 0,
    rejectOnly: 0,
    acceptedStored: 0,
    quarantinedStored: 0,
    violations: 0,
  };
  /** eventRef → digest of every invocation answered accepted (one row, one message each). */
  private readonly accepted = new Map<string, string>();
  /** eventRef|digest of every altered copy answered quarantined. */
  private readonly quarantined = new Set<string>();
  private readonly baseline: string[];
  private executions = 0;

  private constructor(
    readonly h: InboxHarness,
    private readonly signers: Record<PresetName, Signer>,
    private readonly verifier: ReturnType<InboxHarness['verifier']>,
    private readonly s3: S3Client,
    private readonly options: FuzzBenchOptions,
  ) {
    this.baseline = [...h.sensitive];
  }

  /** One inbox on the emulators serving every preset, each with its own secret in the stand-in. */
  static async create(secrets: SecretsFixture, options: FuzzBenchOptions): Promise<FuzzBench> {
    const h = await InboxHarness.create(secrets, options.label ?? 'fuzz');
    const s3 = new S3Client({ forcePathStyle: true });
    await createBodyBucket(s3, h.names);
    const signers = Object.fromEntries(PRESETS.map((name) => [name, PRESET[name].newSigner()])) as Record<PresetName, Signer>;
    const providers = await Promise.all(PRESETS.map((name) => h.addProvider(name, PRESET[name].adapter, signers[name].stored, PRESET[name].config ?? {})));
    const verifier = h.verifier({
      providers,
      bodies: h.bodyStore('verifier', { providers }),
      inlineBodyBytes: INLINE_BODY_BYTES,
      maxBodyBytes: MAX_BODY_BYTES,
    });
    return new FuzzBench(h, signers, verifier, s3, options);
  }

  destroy(): void {
    this.s3.destroy();
    this.h.destroy();
  }

  /** The property both entry points assert: one plan, its invocations, every check. */
  property(): fc.IAsyncProperty<[FuzzPlan]> {
    return fc.asyncProperty(fuzzPlanArb, (plan) => this.run(plan));
  }

  /** The cases every run starts with (fast-check's `examples`): boundaries, then regressions. */
  static examples(): [FuzzPlan][] {
    return [...BOUNDARY_PLANS, ...REGRESSION_PLANS].map((plan) => [plan]);
  }

  /** Runs one plan; throws an Error listing every violation (after tracking what was stored). */
  async run(plan: FuzzPlan): Promise<void> {
    const nonce = sha256Hex(`${this.options.salt}:${++this.executions}`).slice(0, 20);
    const steps = plan.kind === 'random' ? [this.randomStep(plan, nonce)] : this.deliverySteps(plan, nonce);
    this.stats.cases += 1;
    if (plan.kind === 'delivery') this.stats.byPreset[plan.preset] = (this.stats.byPreset[plan.preset] ?? 0) + 1;

    const { h } = this;
    h.capture.clear();
    h.sensitive.clear();
    h.markSensitive(...this.baseline, ...steps.flatMap((step) => step.needles));

    // Steps run in order; a step marked concurrent runs together with the one before it.
    const outcomes: { response?: APIGatewayProxyStructuredResultV2; thrown?: unknown }[] = [];
    const invoke = async (step: Step) => {
      try {
        return { response: await this.verifier(step.event) };
      } catch (thrown) {
        return { thrown };
      }
    };
    for (let i = 0; i < steps.length; i++) {
      if (steps[i + 1]?.concurrentWithPrevious) {
        outcomes.push(...(await Promise.all([invoke(steps[i]), invoke(steps[i + 1])])));
        i += 1;
      } else {
        outcomes.push(await invoke(steps[i]));
      }
    }

    const violations: string[] = [];
    try {
      h.expectLogsClean();
    } catch (error) {
      violations.push(`a log line carries a body, a secret or a signature: ${String((error as Error).message).slice(0, 600)}`);
    }
    const logs = h.capture.logs('delivery');
    const claimed = new Set<LogRecord>();
    const answers = steps.map((step, i) => this.check(step, outcomes[i], logs, claimed, violations));
    this.checkExpectations(steps, answers, violations);
    h.capture.clear();

    if (violations.length > 0) {
      this.stats.violations += 1;
      throw new Error(`${violations.length} violation(s):\n- ${violations.join('\n- ')}`);
    }
  }

  /** The universal checks of one invocation, and the tracking of what it stored. */
  private check(
    step: Step,
    outcome: { response?: APIGatewayProxyStructuredResultV2; thrown?: unknown },
    logs: LogRecord[],
    claimed: Set<LogRecord>,
    violations: string[],
  ): Answered | undefined {
    this.stats.invocations += 1;
    const label = `request ${step.requestId}`;
    if (outcome.thrown !== undefined || !outcome.response) {
      violations.push(`${label}: the handler threw ${(outcome.thrown as Error)?.name ?? outcome.thrown}: ${(outcome.thrown as Error)?.message ?? ''}`);
      return undefined;
    }
    const { statusCode, body } = outcome.response;
    // The inbox's own answers are JSON; a provider's own answer may be text (Slack's challenge).
    const text = String(body);
    const served = servedPreset(step.event.rawPath);
    let json: unknown = undefined;
    let parsed: { result?: unknown; detail?: unknown } = {};
    try {
      json = JSON.parse(text);
      if (typeof json === 'object' && json !== null) parsed = json as { result?: unknown; detail?: unknown };
    } catch {
      if (served?.ownAnswer === undefined) {
        violations.push(`${label}: the answer body is not JSON`);
        return undefined;
      }
    }
    // A provider's own answer (Discord's interaction responses, Slack's and Zoom's URL checks) names no result: its log line does.
    const ownAnswered = parsed.result === undefined && served?.ownAnswer !== undefined;
    if (ownAnswered) {
      const logged = (
        step.hasContext ? logs.find((line) => line.requestId === step.requestId) : logs.find((line) => line.requestId === undefined && !claimed.has(line))
      )?.reason as Reason | undefined;
      const stored = this.signers[PRESETS.find((name) => PRESET[name] === served)!].stored;
      const expected = logged === undefined ? undefined : served.ownAnswer!(logged, step.received, stored);
      if (!isDeepStrictEqual(typeof expected === 'string' ? text : json, expected))
        violations.push(`${label}: answered ${String(body)}, the provider's answer to ${logged} is ${JSON.stringify(expected)}`);
      parsed = { result: logged };
    }
    const result = parsed.result as Reason;
    const detail = typeof parsed.detail === 'string' ? parsed.detail : undefined;
    // The answer goes back to whoever sent the request: it names fields, it echoes no content
    // (but what the provider asks to have echoed: Slack's challenge, Zoom's plainToken).
    const echoed = ownAnswered ? undefined : step.needles.find((needle) => needle.length >= 16 && String(body).includes(needle));
    if (echoed !== undefined) violations.push(`${label}: the answer echoes request content ${JSON.stringify(echoed.slice(0, 40))}`);
    this.stats.byReason[result] = (this.stats.byReason[result] ?? 0) + 1;
    this.stats.byStatus[String(statusCode)] = (this.stats.byStatus[String(statusCode)] ?? 0) + 1;

    if (statusCode === undefined || statusCode >= 500) violations.push(`${label}: answered ${statusCode} ${result} (the store is up: never 5xx)`);
    if (!Object.prototype.hasOwnProperty.call(HTTP_STATUS, result)) violations.push(`${label}: result ${JSON.stringify(result)} is not a documented reason`);
    else if (documentedStatus(result, detail, served, ownAnswered) !== statusCode)
      violations.push(`${label}: ${result} answered ${statusCode}, documented ${documentedStatus(result, detail, served, ownAnswered)}`);
    if (statusCode !== undefined && statusCode >= 400 && statusCode < 500 && !namesSomething(result, detail)) {
      violations.push(`${label}: ${statusCode} ${result} detail ${JSON.stringify(detail)} names no header, field, path or limit`);
    }

    // A line is matched by request id, or (without a requestContext) by order among the lines without one.
    const lines = step.hasContext
      ? logs.filter((line) => line.requestId === step.requestId)
      : [
          logs.find((line) => line.requestId === undefined && !claimed.has(line) && line.reason === result) ??
            logs.find((line) => line.requestId === undefined && !claimed.has(line)),
        ].filter((line): line is LogRecord => line !== undefined);
    for (const line of lines) claimed.add(line);
    if (lines.length !== 1) {
      violations.push(`${label}: ${lines.length} delivery log lines`);
      return { result, statusCode: statusCode ?? 0 };
    }
    const line = lines[0];
    if (line.reason !== result || line.status !== statusCode)
      violations.push(`${label}: logged ${line.reason}/${line.status}, answered ${result}/${statusCode}`);
    const eventRef = typeof line.eventRef === 'string' ? line.eventRef : undefined;
    // The queue is up too: an accepted delivery's enqueue must not fail.
    if (line.enqueue !== undefined) violations.push(`${label}: ${result}, but its enqueue failed (${String(line.error)}), the queue is up`);
    if (result === 'accepted' || result === 'duplicate' || result === 'quarantined') {
      const { digest } = step;
      if (!eventRef || line.digest !== digest)
        violations.push(`${label}: ${result} logged eventRef ${eventRef} digest ${String(line.digest)}, received digest ${digest}`);
    }
    return { result, statusCode: statusCode ?? 0, eventRef };
  }

  /** Tracks stored rows (accepted first within a concurrent pair) and compares with the plan's expectations. */
  private checkExpectations(steps: readonly Step[], answers: readonly (Answered | undefined)[], violations: string[]): void {
    const order = steps.map((_, i) => i).sort((a, b) => rank(answers[a]) - rank(answers[b]) || a - b);
    for (const i of order) {
      const answer = answers[i];
      if (!answer?.eventRef) continue;
      const { digest } = steps[i];
      const label = `request ${steps[i].requestId}`;
      if (answer.result === 'accepted') {
        if (this.accepted.has(answer.eventRef)) violations.push(`${label}: accepted a second time for ${answer.eventRef}`);
        this.accepted.set(answer.eventRef, digest);
        this.stats.acceptedStored += 1;
      } else if (answer.result === 'duplicate') {
        if (!this.accepted.has(answer.eventRef)) violations.push(`${label}: duplicate of ${answer.eventRef}, which was never accepted`);
      } else if (answer.result === 'quarantined') {
        const original = this.accepted.get(answer.eventRef);
        const jobKey = steps[i].jobKey;
        const anomaly = jobKey !== undefined && answer.eventRef === logReference(jobKey);
        if (!anomaly && (original === undefined || original === digest)) violations.push(`${label}: quarantined against ${original ?? 'no accepted row'}`);
        if (!this.quarantined.has(`${answer.eventRef}|${digest}`)) this.stats.quarantinedStored += 1;
        this.quarantined.add(`${answer.eventRef}|${digest}`);
      }
    }

    // The plan's expectations, resolved against what this case stored before (ids are per case).
    const seen = new Map<string, string>();
    const expected: (Reason[] | undefined)[] = steps.map((step) => {
      const e = step.expectation;
      if (e.kind !== 'event') return undefined;
      if (!e.unique) return ['accepted', 'duplicate', 'quarantined'];
      const { digest } = step;
      const before = seen.get(e.key);
      if (before === undefined) seen.set(e.key, digest);
      return [before === undefined ? 'accepted' : before === digest || e.repeatable ? 'duplicate' : 'quarantined'];
    });
    for (let i = 0; i < steps.length; i++) {
      const { expectation: e, requestId } = steps[i];
      const answer = answers[i];
      if (!answer) continue;
      const label = `request ${requestId}`;
      if (e.kind === 'reject') {
        this.stats.rejectOnly += 1;
        if (answer.statusCode < 400 || answer.statusCode >= 500)
          violations.push(`${label}: an unauthenticated or foreign request was answered ${answer.statusCode} ${answer.result}`);
      } else if (e.kind === 'reason') {
        this.stats.exact += 1;
        if (answer.result !== e.reason) violations.push(`${label}: answered ${answer.result}, expected ${e.reason}`);
      } else if (e.kind === 'anomaly') {
        this.stats.exact += 1;
        if (answer.result !== 'quarantined' || answer.eventRef !== logReference(e.key)) {
          violations.push(
            `${label}: answered ${answer.result} under ${answer.eventRef}, expected quarantined under the job's key ${JSON.stringify(e.key.slice(0, 80))}`,
          );
        }
      } else if (e.kind === 'event') {
        this.stats.exact += 1;
        let allowed = expected[i]!;
        // Two concurrent copies of a new event: one of them wins, whichever it is.
        if (e.unique && (steps[i].concurrentWithPrevious || steps[i + 1]?.concurrentWithPrevious)) allowed = ['accepted', 'duplicate'];
        if (!allowed.includes(answer.result)) violations.push(`${label}: answered ${answer.result}, expected ${allowed.join(' or ')}`);
        if (allowed.includes(answer.result) && answer.eventRef !== logReference(e.key))
          violations.push(`${label}: stored under ${answer.eventRef}, expected the key of ${JSON.stringify(e.key.slice(0, 80))}`);
      }
    }
    const pair = steps.findIndex((step) => step.concurrentWithPrevious);
    if (pair > 0 && steps[pair].expectation.kind === 'event' && (steps[pair].expectation as { unique: boolean }).unique) {
      const results = [answers[pair - 1]?.result, answers[pair]?.result].sort();
      if (results.join() !== 'accepted,duplicate')
        violations.push(`concurrent copies answered ${results.join(' and ')}, expected one accepted and one duplicate`);
    }
  }

  // --- materializing -----------------------------------------------------------------------

  private deliverySteps(plan: DeliveryPlan, nonce: string): Step[] {
    const first = this.materialize(plan, nonce, 0, 0);
    const steps: Step[] = [toStep(first, false)];
    switch (plan.followUp) {
      case 'replay':
        steps.push(toStep(copyOf(first, `${first.requestId}-replay`), false));
        break;
      case 'concurrent':
        steps.push(toStep(copyOf(first, `${first.requestId}-copy`), true));
        break;
      case 'retry':
        steps.push(toStep(this.materialize(plan, nonce, 0, 7), false));
        break;
      case 'altered':
        steps.push(toStep(this.materialize(plan, nonce, 1, 3), false));
        break;
      case 'reencoded': {
        const reordered = this.materialize({ ...plan, mutations: [...plan.mutations, { kind: 'body', op: { kind: 'reorder' } }] }, nonce, 0, 0);
        steps.push(toStep(copyOf(reordered, `${first.requestId}-reencoded`), false));
        break;
      }
      default:
    }
    return steps;
  }

  /** One event of a plan: `variant` changes the body's note (an altered copy), `laterSeconds` the signing time (a retry). */
  private materialize(plan: DeliveryPlan, nonce: string, variant: number, laterSeconds: number): Materialized {
    const preset = PRESET[plan.preset];
    const style = preset.styles[plan.style % preset.styles.length];
    const nowSeconds = this.h.clock.seconds;
    const tsText = timestampText(plan.timestamp, nowSeconds, laterSeconds);
    const draft: Draft = {
      preset: plan.preset,
      style,
      id: planId(plan.id, preset.idPrefix, nonce),
      note: variant === 0 ? plan.note : `${plan.note}#altered-${variant}`,
      cycle: plan.cycle ?? 'named',
      timestamp: tsText,
    };
    // Never the preset itself, whatever the style index.
    const otherPreset = PRESETS[(PRESETS.indexOf(plan.preset) + 1 + (plan.style % (PRESETS.length - 1))) % PRESETS.length];

    // The body, and how admission goes when everything else is intact.
    const payload = preset.payload(draft);
    if (preset.idIn === 'body' && plan.id.kind === 'notString' && plan.id.value === undefined) deleteId(payload, plan.preset);
    let signed: Buffer;
    let admission: Admission;
    const { body } = plan;
    switch (body.kind) {
      case 'payload':
      case 'size': {
        const size = body.kind === 'size' ? body.size : undefined;
        signed = Buffer.from(preset.bodyText ? preset.bodyText(draft, payload, size) : payloadText(payload, size), 'utf8');
        admission = preset.admission(draft, signed, true);
        break;
      }
      case 'edit': {
        const edited = editPayload(payload, body.edit, body.depth, idFieldOf(plan.preset));
        signed = Buffer.from(edited.text, 'utf8');
        admission = preset.admission(draft, signed, edited.parses);
        break;
      }
      default: {
        signed = rawBody(body);
        // The body decides admission for body-keyed presets: unknown; header-keyed ones ignore it
        // (a body-digest key then carries no id of this case).
        admission =
          preset.opaqueBody || (preset.idIn === 'header' && plan.preset !== 'echonova')
            ? preset.admission(preset.keyedByBody || preset.opaqueBody ? { ...draft, id: undefined } : draft, signed, true)
            : { kind: 'unknown' };
      }
    }

    // Signed headers, the signature list, then the mutations.
    const signer = this.signers[plan.preset];
    const signatureName = preset.signatureHeader(style);
    const wrong = plan.signing === 'wrong-secret';
    const signedHeaders = preset.headers(
      draft,
      signed,
      tsText,
      (content) => {
        if (!signer.sign) throw new Error(`the ${plan.preset} signer signs through its provider's library only`);
        return signer.sign(content, wrong);
      },
      signer.keyText?.(wrong),
    );
    const signatureValue = signedHeaders[signatureName];
    if (plan.extras.length > 0 && signatureValue !== undefined) {
      const before = plan.extras.filter((x) => x.before).map((x) => preset.extraEntry(x.shape, hashBytes(x.seed, 64)));
      const after = plan.extras.filter((x) => !x.before).map((x) => preset.extraEntry(x.shape, hashBytes(x.seed, 64)));
      signedHeaders[signatureName] = [...before, signatureValue, ...after].join(preset.listSeparator);
    }
    if (plan.signing === 'unsigned') delete signedHeaders[signatureName];

    const requestId = `fuzz-${nonce}-${variant}-${laterSeconds}`;
    const path = pathFor(plan.path, plan.preset, otherPreset);
    const event = apiGatewayEvent(signed, signedHeaders, { path: path ?? HOOK(plan.preset), requestId });
    const headers = event.headers as Record<string, string | undefined | null>;
    const signedQuery = preset.query?.(draft, signed) ?? '';
    let query = signedQuery;
    let bytes = signed;
    let headersIntact = true;
    const read = new Set(preset.readHeaders(style));
    const needles = needlesOf(signed.toString('utf8'), signatureValue, signedHeaders[signatureName]);
    for (const mutation of plan.mutations) {
      if (mutation.kind === 'body') {
        bytes = mutateBody(bytes, mutation.op);
      } else if (mutation.kind === 'query') {
        query = mutateQuery(query, mutation.op);
      } else if (mutation.kind === 'junk-header') {
        headers[mutation.name] = mutation.value;
        if (read.has(mutation.name.toLowerCase())) headersIntact = false;
      } else {
        const name = pickHeader(Object.keys(headers), mutation.role, mutation.index, preset, style);
        if (name === undefined) continue;
        const neutral = mutateHeader(headers, name, mutation.op);
        if (!neutral && (read.has(name.toLowerCase()) || mutation.op.kind === 'null')) headersIntact = false;
        if (name.toLowerCase() === signatureName) needles.push(...needlesOf(headers[name] ?? undefined));
      }
    }

    // API Gateway's encoding of the body, then the event's shape.
    let raw: string;
    let base64 = false;
    switch (plan.encoding) {
      case 'utf8':
        raw = bytes.toString('utf8');
        break;
      case 'latin1':
        raw = bytes.toString('latin1');
        break;
      default:
        raw = base64Variant(bytes, plan.encoding);
        base64 = true;
    }
    const shaped = event as unknown as Record<string, unknown>;
    shaped.rawQueryString = query;
    shaped.body = raw;
    shaped.isBase64Encoded = base64;
    if (path === undefined) delete shaped.rawPath;
    const { shape } = plan;
    if (shape.headers === 'missing') delete shaped.headers;
    if (shape.headers === 'null') shaped.headers = null;
    if (shape.body === 'missing') delete shaped.body;
    if (shape.body === 'null') shaped.body = null;
    if (!shape.context) delete shaped.requestContext;
    if (!shape.base64Flag && !base64) delete shaped.isBase64Encoded;
    if (shape.extraFields)
      Object.assign(shaped, { cookies: ['a=b'], queryStringParameters: { x: '1' }, pathParameters: { provider: otherPreset }, stageVariables: null });

    const finalRaw = typeof shaped.body === 'string' ? shaped.body : '';
    const received = Buffer.from(finalRaw, base64 ? 'base64' : 'utf8');
    needles.push(...needlesOf(finalRaw));

    const expectation = this.expect({
      plan,
      preset,
      style,
      admission,
      routed: routing(plan.path),
      oversize: Buffer.byteLength(finalRaw, base64 ? 'base64' : 'utf8') > MAX_BODY_BYTES,
      headersPresent: shape.headers === 'object',
      authentic: plan.signing === 'valid' && (received.equals(signed) || preset.signsSame?.(draft, signed, received) === true),
      // Only a preset that signs the query reads it: anywhere else a changed query changes nothing.
      queryIntact: preset.query === undefined || query === signedQuery,
      headersIntact,
      tsText,
      offset: plan.timestamp.kind === 'offset' ? plan.timestamp.seconds + laterSeconds : undefined,
      id: draft.id,
      nesting: () => nestingDepth(received),
    });
    const jobBody = plan.preset === 'echonova' && ECHONOVA_JOB_STYLES[style] !== undefined && validId(draft.id, 512) && received.equals(signed);
    const jobKey = jobBody && admission.kind !== 'unknown' ? deliveryKey(plan.preset, composite(draft.id as string, 'job')) : undefined;
    return { event, requestId, hasContext: shape.context, received, digest: sha256Hex(received), expectation, needles, ...(jobKey ? { jobKey } : {}) };
  }

  /** What the plan pins down about the answer. */
  private expect(c: {
    plan: DeliveryPlan;
    preset: Preset;
    style: string;
    admission: Admission;
    routed: 'own' | 'other' | 'unknown' | 'none';
    oversize: boolean;
    headersPresent: boolean;
    authentic: boolean;
    queryIntact: boolean;
    headersIntact: boolean;
    tsText: string;
    offset?: number;
    id: unknown;
    /** How deep the received body nests (computed only when asked: it reads the whole body). */
    nesting: () => number;
  }): Expectation {
    const reason = (r: Reason): Expectation => ({ kind: 'reason', reason: r });
    // A path no provider is served at is answered 404 whatever the body's size.
    if (c.routed === 'none' || c.routed === 'unknown') return reason('unknown_provider');
    if (c.oversize) return reason('too_large');
    if (c.routed === 'other') return { kind: 'reject' };
    if (!c.headersPresent) return reason('malformed');
    if (!c.headersIntact) return c.authentic && c.queryIntact ? { kind: 'any' } : { kind: 'reject' };
    // A query other than the signed one is another URL (or another body hash): refused, however.
    if (!c.queryIntact) return { kind: 'reject' };
    if (c.plan.signing === 'unsigned') return reason('malformed');
    if (c.preset.timestampInBody && c.authentic) {
      const inBody = bodyTimestampExpectation(c.admission, c.tsText, c.plan.timestamp.kind === 'text' ? undefined : c.offset);
      if (inBody) return inBody;
    }

    // Header shape is checked before any MAC: a header id or a timestamp the preset refuses.
    // GitHub signs no timestamp: whatever the plan says about it does not matter there.
    const timed = c.preset.signsTimestamp;
    const textual = timed && c.plan.timestamp.kind === 'text';
    const canonical = CANONICAL_SECONDS.test(c.tsText);
    // Stripe trims the t= value and splits the header at commas, Paddle splits it at semicolons; the others read the header as it is.
    const refused =
      timed &&
      !canonical &&
      (c.plan.preset === 'stripe' ? !/[, ]/.test(c.tsText) && c.tsText.trim() === c.tsText : c.plan.preset !== 'paddle' || !c.tsText.includes(';'));
    if (c.preset.idIn === 'header' && c.preset.maxIdLength === 256 && !headerIdFits(c.id)) return reason('malformed');
    if (refused) return reason('malformed');
    if (!c.authentic) return textual ? { kind: 'reject' } : reason('bad_signature');
    if (textual) return { kind: 'any' };
    if (timed && (c.offset! < -TOLERANCE_SECONDS || c.offset! > TOLERANCE_SECONDS)) return reason('stale_timestamp');
    // Authentic and fresh, but nested too deep to be processed: refused before anything reads it.
    if (c.nesting() > MAX_JSON_DEPTH) return reason('body_too_deep');

    switch (c.admission.kind) {
      case 'test':
        return reason('test');
      case 'handshake':
        return reason('handshake');
      case 'not_final':
        return reason('not_final');
      case 'malformed':
        return reason('malformed');
      case 'unknown':
        return { kind: 'any' };
      case 'event':
        return {
          kind: 'event',
          key: deliveryKey(c.plan.preset, c.admission.eventId),
          repeatable: c.admission.repeatable,
          // A short id (or a random body's id) may be another case's: stored, but not necessarily first.
          unique: !c.admission.shared && (c.plan.id.kind !== 'length' || c.plan.id.length >= 16),
        };
      case 'anomaly':
        return { kind: 'anomaly', key: deliveryKey(c.plan.preset, c.admission.eventId) };
    }
  }

  private randomStep(plan: RandomPlan, nonce: string): Step {
    const requestId = `fuzz-${nonce}-random`;
    const event: Record<string, unknown> = { version: '2.0', routeKey: '$default', rawQueryString: '' };
    if (plan.rawPath !== undefined) event.rawPath = plan.rawPath;
    if (plan.headers !== undefined) event.headers = plan.headers === null ? null : { ...plan.headers };
    if (plan.body !== undefined) event.body = plan.body;
    if (plan.isBase64Encoded !== undefined) event.isBase64Encoded = plan.isBase64Encoded;
    if (plan.context) event.requestContext = { requestId, http: { method: 'POST', path: plan.rawPath ?? '' }, timeEpoch: Date.now() };
    const raw = typeof plan.body === 'string' ? plan.body : '';
    const received = Buffer.from(raw, plan.isBase64Encoded ? 'base64' : 'utf8');
    const headerValues = Object.values(plan.headers ?? {}).filter((value) => /signature|^v1|^t=|^sha256=/i.test(value));
    return {
      event: event as unknown as APIGatewayProxyEventV2,
      requestId,
      hasContext: plan.context,
      received,
      digest: sha256Hex(received),
      // Nobody signed it: whatever it is, it is never admitted.
      expectation: { kind: 'reject' },
      concurrentWithPrevious: false,
      needles: needlesOf(raw, ...headerValues),
    };
  }

  // --- the audit ---------------------------------------------------------------------------

  /** The real table and queue against everything the invocations were answered. */
  async audit(): Promise<AuditReport> {
    const violations: string[] = [];
    // The verifier ran under its own role: any call its template does not grant is a violation.
    for (const denial of fixtureGateway().gateway.denials) violations.push(`IAM denied the verifier: ${denial.message}`);
    const items: Item[] = await this.h.inboxItems();
    const deliveries = items.filter((item) => item.sk === InboxItemKind.DELIVERY);
    const quarantines = items.filter((item) => String(item.sk).startsWith(InboxItemKind.QUARANTINE_PREFIX));
    // A body too large for its row lives beside it, keyed `body#<digest>`: the accepted copy's (the
    // row then says `bodyItem`), or an altered copy's, which was answered quarantined.
    const bodyItems = items.filter((item) => String(item.sk).startsWith(InboxItemKind.BODY_PREFIX));
    for (const item of items) {
      const sk = String(item.sk);
      if (sk !== InboxItemKind.DELIVERY && !sk.startsWith(InboxItemKind.QUARANTINE_PREFIX) && !sk.startsWith(InboxItemKind.BODY_PREFIX))
        violations.push(`unexpected item ${String(item.pk).slice(0, 60)} / ${sk}`);
    }
    for (const item of bodyItems) {
      const ref = logReference(String(item.pk));
      const digest = String(item.sk).slice(InboxItemKind.BODY_PREFIX.length);
      const row = deliveries.find((candidate) => candidate.pk === item.pk);
      const ownBody = row?.bodyItem === true && row.digest === digest;
      if (!row) violations.push(`body item ${ref} / ${digest} has no row`);
      else if (!ownBody && !this.quarantined.has(`${ref}|${digest}`))
        violations.push(`body item ${ref} / ${digest} is neither its row's body nor a quarantined copy's`);
    }
    for (const row of deliveries.filter((candidate) => candidate.bodyItem === true)) {
      if (!bodyItems.some((item) => item.pk === row.pk && item.sk === `${InboxItemKind.BODY_PREFIX}${String(row.digest)}`))
        violations.push(`row ${logReference(String(row.pk))} says bodyItem but its body item is missing`);
    }
    const stored = new Set<string>();
    for (const row of deliveries) {
      const ref = logReference(String(row.pk));
      stored.add(ref);
      const digest = this.accepted.get(ref);
      if (digest === undefined) violations.push(`row ${ref} was stored but no invocation was answered accepted for it`);
      else if (digest !== row.digest) violations.push(`row ${ref} holds digest ${String(row.digest)}, accepted ${digest}`);
      if (row.status !== DeliveryStatus.RECEIVED) violations.push(`row ${ref} is ${String(row.status)}`);
    }
    for (const ref of this.accepted.keys()) if (!stored.has(ref)) violations.push(`accepted ${ref} has no row`);
    const quarantineKeys = new Set(
      quarantines.map((item) => `${logReference(String(item.pk))}|${String(item.sk).slice(InboxItemKind.QUARANTINE_PREFIX.length)}`),
    );
    for (const key of quarantineKeys) if (!this.quarantined.has(key)) violations.push(`quarantine item ${key} matches no invocation answered quarantined`);
    for (const key of this.quarantined) if (!quarantineKeys.has(key)) violations.push(`quarantined ${key} has no quarantine item`);

    const messages = await this.h.takeMessages();
    const counts = new Map<string, number>();
    for (const key of messages) counts.set(logReference(key), (counts.get(logReference(key)) ?? 0) + 1);
    for (const [ref, count] of counts) {
      if (!this.accepted.has(ref)) violations.push(`message for ${ref}, which was never accepted`);
      else if (count !== 1) violations.push(`${count} messages for ${ref}`);
    }
    for (const ref of this.accepted.keys()) if (!counts.has(ref)) violations.push(`accepted ${ref} has no message on the work queue`);
    const dead = await this.h.takeMessages(this.h.deadLetterQueueUrl);
    if (dead.length > 0) violations.push(`${dead.length} messages on the dead-letter queue`);

    return {
      deliveryRows: deliveries.length,
      expectedDeliveryRows: this.accepted.size,
      quarantineItems: quarantines.length,
      expectedQuarantineItems: this.quarantined.size,
      messages: messages.length,
      expectedMessages: this.accepted.size,
      violations: violations.slice(0, 50).concat(violations.length > 50 ? [`… and ${violations.length - 50} more`] : []),
    };
  }

  /** The summary table the fuzz command prints. */
  summary(elapsedMs: number, audit?: AuditReport): string {
    const s = this.stats;
    const rows: [string, string][] = [
      ['cases', String(s.cases)],
      ['invocations', String(s.invocations)],
      ['elapsed', `${(elapsedMs / 1000).toFixed(1)} s (${((elapsedMs * 1000) / Math.max(1, s.invocations)).toFixed(0)} µs per invocation)`],
      ['exact expectations', String(s.exact)],
      ['must-reject expectations', String(s.rejectOnly)],
      ['cases with violations', String(s.violations)],
    ];
    const table = (title: string, entries: [string, string | number][]) =>
      [`${title}`, ...entries.map(([name, value]) => `  ${name.padEnd(24)} ${String(value).padStart(10)}`)].join('\n');
    const sorted = (record: Record<string, number>) => Object.entries(record).sort((a, b) => b[1] - a[1]);
    const parts = [
      table('run', rows),
      table(
        'by reason',
        sorted(s.byReason).map(([reason, count]) => [`${reason} (${HTTP_STATUS[reason as Reason] ?? '?'})`, count]),
      ),
      table('by status', sorted(s.byStatus)),
      table('by preset (delivery cases)', sorted(s.byPreset)),
    ];
    if (audit) {
      parts.push(
        table('store (actual / expected)', [
          ['delivery rows', `${audit.deliveryRows} / ${audit.expectedDeliveryRows}`],
          ['quarantine items', `${audit.quarantineItems} / ${audit.expectedQuarantineItems}`],
          ['work queue messages', `${audit.messages} / ${audit.expectedMessages}`],
          ['audit violations', String(audit.violations.length)],
        ]),
      );
    }
    return parts.join('\n');
  }
}

interface Answered {
  readonly result: Reason;
  readonly statusCode: number;
  readonly eventRef?: string;
}

const rank = (answer: Answered | undefined) => (answer?.result === 'accepted' ? 0 : 1);

function toStep(m: Materialized, concurrentWithPrevious: boolean): Step {
  return { ...m, concurrentWithPrevious };
}

/** The same event sent again under another request id. */
function copyOf(m: Materialized, requestId: string): Materialized {
  const event = structuredClone(m.event);
  if (event.requestContext) event.requestContext.requestId = requestId;
  return { ...m, event, requestId };
}

/**
 * What an authentic delivery whose timestamp is a field of its body is answered before its
 * admission (undefined: by its admission): a body that is no JSON object, or a timestamp that is
 * no whole Unix seconds (written as text), is malformed; a planned offset outside the tolerance is
 * stale, or any 4xx when the id is refused too (the body may not parse). A random body, or a
 * textual time that happens to be whole seconds, may be answered anything documented.
 */
function bodyTimestampExpectation(admission: Admission, tsText: string, offset: number | undefined): Expectation | undefined {
  if (admission.kind === 'unknown') return { kind: 'any' };
  if (!CANONICAL_SECONDS.test(tsText)) return { kind: 'reason', reason: 'malformed' };
  if (offset === undefined) return { kind: 'any' };
  if (offset >= -TOLERANCE_SECONDS && offset <= TOLERANCE_SECONDS) return undefined;
  return admission.kind === 'malformed' ? { kind: 'reject' } : { kind: 'reason', reason: 'stale_timestamp' };
}

/** A 4xx detail names what is at fault: a header the presets read, a body field, the body, the path or the limit. */
function namesSomething(reason: Reason, detail: string | undefined): boolean {
  if (!detail) return false;
  if (reason === 'too_large') return detail.includes(String(MAX_BODY_BYTES));
  if (reason === 'body_too_deep') return detail.includes(`${MAX_JSON_DEPTH} levels`);
  if (reason === 'unknown_provider') return /\bpath\b/.test(detail);
  const header = /^header ([a-z0-9-]+)\b/.exec(detail);
  if (header) return KNOWN_HEADERS.has(header[1]);
  if (KNOWN_QUERY_PARAMETERS.some((name) => detail.startsWith(`query parameter ${name} `))) return true;
  return detail.startsWith('body ') || KNOWN_FIELDS.some((field) => detail.startsWith(`${field} `));
}

function routing(path: PathPlan): 'own' | 'other' | 'unknown' | 'none' {
  if (path === 'own' || path === 'slash' || path === 'prefix' || path === 'double') return 'own';
  if (path === 'other') return 'other';
  return path === 'bare' || path === 'missing' ? 'none' : 'unknown';
}

/** The preset served at a path, as the verifier routes it (its last `/hooks/<name>` segment). */
function servedPreset(rawPath: unknown): Preset | undefined {
  const name = /\/hooks\/([^/]+)\/?$/.exec(typeof rawPath === 'string' ? rawPath : '')?.[1];
  return (PRESETS as readonly string[]).includes(name ?? '') ? PRESET[name as PresetName] : undefined;
}

/**
 * The status a reason is answered with at a preset's path: 200 for an answer of the provider's
 * own; the provider's for a refused signature, its freshness or a signature header (a header's
 * shape is part of verification: the body's fields are not); the inbox's otherwise.
 */
function documentedStatus(reason: Reason, detail: string | undefined, served: Preset | undefined, ownAnswered: boolean): number {
  if (ownAnswered) return 200;
  const refusal = reason === 'bad_signature' || reason === 'stale_timestamp' || (reason === 'malformed' && detail?.startsWith('header ') === true);
  return refusal && served?.refusalStatus !== undefined ? served.refusalStatus : HTTP_STATUS[reason];
}

function idFieldOf(preset: PresetName): string | undefined {
  return {
    answerline: undefined,
    echonova: undefined,
    openai: undefined,
    ed25519: undefined,
    stripe: 'id',
    github: undefined,
    meta: undefined,
    slack: 'event_id',
    'slack-events': 'event_id',
    zoom: undefined,
    acme: undefined,
    shopify: undefined,
    paddle: 'event_id',
    pagerduty: undefined,
    linear: 'webhookId',
    discord: 'id',
    square: 'event_id',
    twilio: undefined,
  }[preset];
}

/** Leaves the id out of a body-keyed payload (`notString: undefined` means missing). */
function deleteId(payload: Record<string, unknown>, preset: PresetName): void {
  if (preset === 'answerline') delete (payload.task as Record<string, unknown>).id;
  if (preset === 'pagerduty') delete (payload.event as Record<string, unknown>).id;
  if (preset === 'linear') delete payload.webhookId;
  if (preset === 'slack-events') delete payload.challenge;
  if (preset === 'zoom') delete (payload.payload as Record<string, unknown>).plainToken;
  for (const field of ['id', 'event_id', 'jobId', 'apiKeyId']) delete payload[field];
}

function rawBody(body: Exclude<BodyPlan, { kind: 'payload' | 'size' | 'edit' }>): Buffer {
  switch (body.kind) {
    case 'json':
      return Buffer.from(JSON.stringify(body.value) ?? 'null', 'utf8');
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'text':
      return Buffer.from(body.text, 'utf8');
    case 'empty':
      return Buffer.alloc(0);
    case 'deep':
      return Buffer.from(`${body.open.repeat(body.depth)}1${(body.open === '[' ? ']' : '}').repeat(body.depth)}`, 'utf8');
  }
}

function mutateBody(bytes: Buffer, op: BodyOp): Buffer {
  switch (op.kind) {
    case 'flip': {
      if (bytes.length === 0) return Buffer.from([1 << op.bit]);
      const copy = Buffer.from(bytes);
      copy[op.at % copy.length] ^= 1 << op.bit;
      return copy;
    }
    case 'truncate':
      return bytes.length === 0 ? Buffer.from('{') : bytes.subarray(0, Math.max(0, bytes.length - op.count));
    case 'extend':
      return Buffer.concat([bytes, Buffer.from(op.bytes)]);
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    case 'reorder': {
      const parts = bytes.toString('latin1').split('&');
      if (parts.length > 1) return Buffer.from([...parts.slice(1), parts[0]].join('&'), 'latin1');
      return bytes.length < 2 ? bytes : Buffer.concat([bytes.subarray(1, 2), bytes.subarray(0, 1), bytes.subarray(2)]);
    }
  }
}

function mutateQuery(query: string, op: QueryOp): string {
  const parts = query === '' ? [] : query.split('&');
  switch (op.kind) {
    case 'flip': {
      if (query === '') return 'x=1';
      const at = op.at % query.length;
      return `${query.slice(0, at)}${String.fromCharCode(query.charCodeAt(at) ^ 1)}${query.slice(at + 1)}`;
    }
    case 'reorder':
      return parts.length < 2 ? query : [...parts.slice(1), parts[0]].join('&');
    case 'drop':
      return parts.filter((_part, i) => i !== op.at % Math.max(1, parts.length)).join('&');
    case 'append':
      return [...parts, 'extra=1'].join('&');
  }
}

/** The header a mutation targets, by role; undefined when the event has none of that role. */
function pickHeader(names: readonly string[], role: HeaderRole, index: number, preset: Preset, style: string): string | undefined {
  const signature = preset.signatureHeader(style);
  const candidates =
    role === 'signature'
      ? [signature]
      : role === 'timestamp'
        ? [preset.timestampHeader?.(style) ?? signature]
        : role === 'id'
          ? preset.readHeaders(style).filter((name) => /-id$|delivery|event$/.test(name))
          : role === 'read'
            ? [...preset.readHeaders(style)]
            : [...names];
  const present = candidates.filter((name) => names.includes(name));
  return present.length === 0 ? undefined : present[index % present.length];
}

/** Mutates one header in place; true when the change cannot alter the verdict (a renamed case). */
function mutateHeader(headers: Record<string, string | undefined | null>, name: string, op: HeaderOp): boolean {
  const value = headers[name] ?? '';
  switch (op.kind) {
    case 'remove':
      delete headers[name];
      return false;
    case 'duplicate':
      headers[name] = `${value}${op.separator}${value}`;
      return false;
    case 'garble': {
      const at = value.length === 0 ? 0 : op.at % value.length;
      headers[name] = `${value.slice(0, at)}${op.char}${value.slice(at + 1)}`;
      return headers[name] === value;
    }
    case 'replace':
      headers[name] = op.value;
      return op.value === value;
    case 'huge':
      headers[name] = (value || 'x').repeat(Math.ceil(op.length / Math.max(1, value.length))).slice(0, op.length);
      return false;
    case 'empty':
      headers[name] = '';
      return value === '';
    case 'upper-name': {
      // API Gateway lowercases names; a sender's casing never matters.
      delete headers[name];
      headers[name.toUpperCase()] = value;
      return true;
    }
    case 'pad':
      headers[name] = ` ${value}\t`;
      return false;
    case 'truncate':
      headers[name] = value.slice(0, Math.max(0, value.length - op.count));
      return headers[name] === value;
    case 'null':
      headers[name] = null;
      return false;
  }
}
