import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { Headers } from '../../runtime/http';
import { verifyHmac } from '../../signatures/hmac';
import { checkFreshness, SigningKey, Tolerance, Verdict } from '../../signatures/signing-key';
import { Admission, buildAdapter, compositeEventId, keyFieldProblem, parseJsonObject, ProviderAdapter, utf8Key, valueAtPath } from '../adapter';

const SCHEME = {
  signatureHeader: 'linear-signature',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: '',
  signedContent: '{body}',
  secretEncoding: 'utf8',
} as const;
const TIMESTAMP_FIELD = 'webhookTimestamp';

/**
 * The fields of the event id, each bounded in UTF-8 bytes so that the escaped composite (up to
 * three characters per byte) stays well inside the inbox key's 2,048 bytes.
 */
const ID_FIELDS = [
  { path: 'webhookId', maxBytes: 128 },
  { path: 'type', maxBytes: 64 },
  { path: 'action', maxBytes: 64 },
  { path: 'data.id', maxBytes: 128, optional: true },
  { path: 'createdAt', maxBytes: 64 },
] as const;

/** When the signed body says it was sent, in Unix milliseconds, or what is wrong with it. */
function sentAtMs(body: Buffer): number | string {
  const parsed = parseJsonObject(body);
  if (!parsed) return 'body is not a JSON object';
  const value = parsed[TIMESTAMP_FIELD];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : `${TIMESTAMP_FIELD} is missing or not Unix milliseconds`;
}

/**
 * Linear signs the body only, and dates it inside: the MAC is checked first, then the signed
 * `webhookTimestamp` (milliseconds) against the tolerances.
 */
function verifyLinear(headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number, tolerance: Tolerance): Verdict {
  const verdict = verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME);
  if (!verdict.ok) return verdict;
  const sentAt = sentAtMs(body);
  if (typeof sentAt === 'string') return { ok: false, reason: 'malformed', detail: sentAt };
  return checkFreshness(Math.floor(sentAt / 1000), nowSeconds, tolerance, TIMESTAMP_FIELD) ?? { ...verdict, signedAtMs: sentAt };
}

/**
 * The event id of a verified body: the webhook, the entity type and action, the entity's id
 * (when the payload has one) and the payload's `createdAt`, which every attempt keeps. Each
 * attempt is sent with a new `webhookTimestamp`, so a retry is another body under the same id:
 * a repeat, never an altered copy.
 */
function admitLinear(body: Buffer): Admission {
  const parsed = parseJsonObject(body);
  if (!parsed) return { kind: 'malformed', detail: 'body is not a JSON object' };
  const fields: string[] = [];
  for (const field of ID_FIELDS) {
    const value = valueAtPath(parsed, field.path);
    if (value === undefined && 'optional' in field) {
      fields.push('');
      continue;
    }
    const problem = keyFieldProblem(value, field.maxBytes);
    if (problem !== undefined) return { kind: 'malformed', detail: `${field.path} ${problem}` };
    fields.push(value as string);
  }
  return { kind: 'event', eventId: compositeEventId(...fields), repeatable: true };
}

/**
 * Linear: `Linear-Signature: <hex HMAC-SHA256 of the body>`; freshness from the signed body's
 * `webhookTimestamp`. The `Linear-Delivery` id is not signed: it is kept as row metadata with
 * `Linear-Event`.
 */
export function linearAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: verifyLinear,
    admit: (_headers, body) => admitLinear(body),
    keptHeaders: ['linear-delivery', 'linear-event'],
    describes: { resourcePath: 'data.id' },
  });
}
