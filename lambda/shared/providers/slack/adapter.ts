import { ProviderRuntimeConfig } from '../../../../lib/contract';
import { sha256Hex } from '../../runtime/digest';
import { verifyHmac } from '../../signatures/hmac';
import { Admission, buildAdapter, compositeEventId, eventIdFrom, keyFieldProblem, parseJsonObject, ProviderAdapter, utf8Key } from '../adapter';

const SCHEME = {
  signatureHeader: 'x-slack-signature',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: 'v0=',
  signedContent: 'v0:{timestamp}:{body}',
  timestampHeader: 'x-slack-request-timestamp',
} as const;

/** The longest `challenge` echoed back, in UTF-8 bytes (Slack's are about 50 characters). */
const MAX_CHALLENGE_BYTES = 512;

/**
 * Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of v0:timestamp:body>` with
 * `X-Slack-Request-Timestamp`. The signed `url_verification` request is answered with its
 * challenge; an Events API body is keyed by its `event_id`; a body Slack gives no id (a
 * form-encoded slash command or interactivity payload, `app_rate_limited`) by its digest.
 */
export function slackAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: utf8Key,
    verify: (headers, body, keys, nowSeconds, tolerance) => verifyHmac(headers, body, keys, nowSeconds, tolerance, SCHEME),
    admit: (_headers, body) => admitSlack(body),
    keptHeaders: ['x-slack-retry-num', 'x-slack-retry-reason'],
  });
}

/** What a verified Slack body is: the URL check, an Events API event, or a body keyed by its digest. */
function admitSlack(body: Buffer): Admission {
  const parsed = parseJsonObject(body);
  // Slash commands and interactivity payloads are form-encoded: signed bytes without an id.
  if (!parsed) return digestAdmission(body);
  if (parsed.type === 'url_verification') return challengeAnswer(parsed.challenge);
  if (parsed.type === 'event_callback' || 'event_id' in parsed) return eventIdFrom(parsed.event_id, 'event_id');
  return digestAdmission(body);
}

/** Slack's URL check: 200 with the challenge as plain text. */
function challengeAnswer(challenge: unknown): Admission {
  const problem = keyFieldProblem(challenge, MAX_CHALLENGE_BYTES);
  if (problem !== undefined) return { kind: 'malformed', detail: `challenge ${problem}` };
  return { kind: 'handshake', answer: { status: 200, contentType: 'text/plain', body: challenge as string } };
}

/** `sha256:<hex>`: never one of Slack's `Ev…` event ids, so the two kinds of key cannot meet. */
function digestAdmission(body: Buffer): Admission {
  return { kind: 'event', eventId: compositeEventId('sha256', sha256Hex(body)) };
}
