/**
 * The configuration the construct serializes into the handlers' environment (JSON), and the
 * checks of it that run twice: at synth (the construct) and at cold start (the handlers).
 */

import { Defaults } from './defaults';
import type { DeliveryFilterConfig } from './delivery-filter';
import { RotatedSecretFormat } from './providers/facts';

/** The placeholders of a task in a polling URL template (Answerline says task, Echonova job, a batch API batch). */
export const TASK_ID_PLACEHOLDERS = ['{taskId}', '{jobId}', '{batchId}'] as const;

/** How the reconciler polls one provider (JSON array in `Env.POLLING`). */
export interface PollingRuntimeConfig {
  /** The provider's name, as in `ProviderRuntimeConfig.name`; its adapter picks the API client. */
  readonly provider: string;
  /** URL of one task: `{taskId}`, `{jobId}` or `{batchId}`, once, is replaced by the URL-encoded id. https, or http on loopback. */
  readonly taskUrlTemplate: string;
  /** ARN (or name) of the Secrets Manager secret whose AWSCURRENT value is the API key, text or JSON `{"apiKey": "…"}` (sent as `Authorization: Bearer`). */
  readonly apiKeySecretId: string;
  /** Seconds after submission before a submission without a delivery is polled (and counts as overdue). */
  readonly horizonSeconds: number;
  /** Seconds between two checks of a submission that is not final yet. */
  readonly recheckSeconds: number;
  /** Timeout of one poll request, in milliseconds. @default Defaults.POLL_TIMEOUT_MS */
  readonly timeoutMs?: number;
}

/**
 * What is wrong with the URL of a provider API the handlers send an API key to: it must be
 * https (plain HTTP would send the key in clear), or http on a loopback address (a local twin).
 */
function apiUrlProblems(field: string, url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [`${field} is not a URL`];
  }
  const loopback = parsed.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
  return parsed.protocol === 'https:' || loopback ? [] : [`${field} must be an https:// URL`];
}

/** Characters no URL holds unencoded (RFC 3986): a signed URL is signed as text, exactly as written. */
const NOT_IN_A_URL = /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/;

/**
 * What is wrong with the URL a provider signs (Square's notification URL), each problem as it
 * follows the field's name; empty when it is usable. It cannot be rebuilt from a request behind
 * API Gateway or a custom domain, so it is configured. Checked at synth and at cold start.
 */
export function notificationUrlProblems(url: unknown): string[] {
  if (typeof url !== 'string' || url === '') return ['is required: the URL the provider signs, exactly as registered with it'];
  if (NOT_IN_A_URL.test(url)) return ['holds a character no URL holds unencoded (a space, a brace, non-ASCII): give it as the provider shows it'];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return ['is not a URL'];
  }
  return parsed.protocol === 'https:' ? [] : ['must be an https:// URL'];
}

/** What is wrong with a provider's polling configuration; empty when it is usable. Checked at synth and at cold start. */
export function pollingProblems(config: PollingRuntimeConfig): string[] {
  const problems: string[] = [];
  const template = config.taskUrlTemplate ?? '';
  const placeholders = TASK_ID_PLACEHOLDERS.reduce((count, placeholder) => count + template.split(placeholder).length - 1, 0);
  if (placeholders !== 1) problems.push('taskUrlTemplate must contain {taskId} (or {jobId}, {batchId}) exactly once');
  problems.push(
    ...apiUrlProblems(
      'taskUrlTemplate',
      TASK_ID_PLACEHOLDERS.reduce((text, placeholder) => text.replace(placeholder, 'id'), template),
    ),
  );
  if (!config.apiKeySecretId) problems.push('apiKeySecretId is required');
  for (const field of ['horizonSeconds', 'recheckSeconds'] as const) {
    if (!(typeof config[field] === 'number' && Number.isSafeInteger(config[field]) && config[field] > 0))
      problems.push(`${field} must be a positive whole number of seconds`);
  }
  if (config.timeoutMs !== undefined && !(Number.isSafeInteger(config.timeoutMs) && config.timeoutMs > 0))
    problems.push('timeoutMs must be a positive integer');
  return problems;
}

/** An IPv4 (`192.0.2.0/24`) or IPv6 (`2001:db8::/32`) range; a bare address is its own range. */
const IPV4_CIDR = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}(\/(3[0-2]|[12]?\d))?$/;
const IPV6_CIDR = /^[0-9a-f:]*:[0-9a-f:.]*(\/(12[0-8]|1[01]\d|[1-9]?\d))?$/i;

/** What is wrong with a source allow-list; empty when it is usable. Checked at synth and at cold start. */
export function sourceCidrProblems(cidrs: unknown): string[] {
  if (!Array.isArray(cidrs)) return ['must be a list of CIDR ranges'];
  return cidrs.flatMap((cidr, index) =>
    typeof cidr === 'string' && (IPV4_CIDR.test(cidr) || IPV6_CIDR.test(cidr)) ? [] : [`[${index}] ${JSON.stringify(cidr)} is not a CIDR range`],
  );
}

/** The generic HMAC adapter's scheme, as the construct passes it to the handlers. */
export interface HmacRuntimeSettings {
  /** Lower-case name of the header carrying the signature(s). */
  readonly signatureHeader: string;
  readonly algorithm: 'sha256' | 'sha512';
  readonly encoding: 'hex' | 'base64';
  /** Text before each signature, e.g. `sha256=`; empty when none. */
  readonly prefix: string;
  /** Template of the signed content: literal text with `{body}`, `{timestamp}`, `{id}`. */
  readonly signedContent: string;
  /** Lower-case header with Unix seconds; freshness is checked only when it is set. */
  readonly timestampHeader?: string;
  /** Lower-case header with the stable event id. */
  readonly idHeader?: string;
  /** Dotted path of the stable event id in the JSON body, when no idHeader is set. */
  readonly idJsonPath?: string;
  /**
   * The user accepted an idHeader that signedContent does not cover: deliveries are then
   * deduplicated by the digest of their body (the header is kept as row metadata only).
   */
  readonly acknowledgeUnsignedIdHeader?: boolean;
  /** How the stored secret turns into key bytes. */
  readonly secretEncoding: 'utf8' | 'base64';
}

/** `{body}`, `{timestamp}` and `{id}` in a signed-content template. */
export const SIGNED_CONTENT_PLACEHOLDER = /\{(body|timestamp|id)\}/g;

/** The placeholders of a signed-content template, in order. */
export function signedContentPlaceholders(template: string): string[] {
  return [...template.matchAll(SIGNED_CONTENT_PLACEHOLDER)].map((match) => match[1]);
}

/** What is wrong with a generic HMAC scheme; empty when it is usable. Checked at synth and at cold start. */
export function hmacSchemeProblems(scheme: HmacRuntimeSettings): string[] {
  const placeholders = signedContentPlaceholders(scheme.signedContent);
  const problems: string[] = [];
  if (!scheme.signatureHeader) problems.push('signatureHeader is required');
  if (placeholders.filter((name) => name === 'body').length !== 1) problems.push('signedContent must contain {body} exactly once');
  if (placeholders.includes('timestamp') && !scheme.timestampHeader) problems.push('signedContent uses {timestamp} but no timestampHeader is set');
  if (placeholders.includes('id') && !scheme.idHeader) problems.push('signedContent uses {id} but no idHeader is set');
  if (scheme.timestampHeader && !placeholders.includes('timestamp')) {
    problems.push('timestampHeader is set but signedContent does not use {timestamp}: an unsigned timestamp proves no freshness');
  }
  if (!scheme.idHeader === !scheme.idJsonPath) problems.push('exactly one of idHeader and idJsonPath is required');
  if (scheme.idHeader && !placeholders.includes('id') && !scheme.acknowledgeUnsignedIdHeader) {
    problems.push(
      'idHeader is not covered by signedContent (no {id}): anyone can replay a signed body under a fresh id; ' +
        'sign it, use idJsonPath, or set acknowledgeUnsignedIdHeader (deliveries are then deduplicated by the digest of their body)',
    );
  }
  return problems;
}

/** How one provider is served, as the construct passes it to the handlers (JSON in an env var). */
export interface ProviderRuntimeConfig {
  /** Path segment and key namespace: `/hooks/<name>`. */
  readonly name: string;
  /** Which runtime adapter handles this provider. */
  readonly adapter: string;
  /** ARN (or name) of the Secrets Manager secret holding the signing secret; absent for a provider whose requests name their certificate (SNS). */
  readonly secretId?: string;
  /** How far in the past a signed timestamp may lie, in seconds. */
  readonly tolerancePastSeconds: number;
  /** How far in the future a signed timestamp may lie, in seconds. */
  readonly toleranceFutureSeconds: number;
  /** How long after a rotation the AWSPREVIOUS secret is still accepted, in seconds (default: Defaults). */
  readonly previousSecretGraceSeconds?: number;
  /** The scheme of the generic `hmac` adapter; absent for the presets. */
  readonly hmac?: HmacRuntimeSettings;
  /** Fetch the provider's resource before a delivery's result is exposed; absent: no read. */
  readonly authoritativeRead?: AuthoritativeReadSettings;
  /** The only source address ranges (CIDR) a request is verified from; absent or empty: any. */
  readonly allowedSourceCidrs?: readonly string[];
  /** The URL the provider signs, exactly as registered with it (Square's notification URL); absent for providers that sign none. */
  readonly notificationUrl?: string;
  /** The SNS topics whose subscriptions post here (their ARNs); only for SNS. */
  readonly topicArns?: readonly string[];
  /** Dotted path of the tenant's id in a delivery's JSON body, hashed into the delivery record's `tenantRef`; absent: no tenant reference. */
  readonly tenantJsonPath?: string;
  /** Which verified deliveries are stored (docs/FILTERS.md); absent: every one. */
  readonly filter?: DeliveryFilterConfig;
}

/** A dotted path into a JSON body: names of letters, digits, `_`, `-` or `$`, joined by single dots (`account.id`). */
const JSON_PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/** The longest dotted path accepted, in characters. */
const MAX_JSON_PATH_LENGTH = 256;

/** What is wrong with a dotted JSON path, as it follows the field's name; empty when it is usable. Checked at synth and at cold start. */
export function jsonPathProblems(path: unknown): string[] {
  if (typeof path !== 'string' || path === '') return ['must be a non-empty dotted path, e.g. account.id'];
  if (path.length > MAX_JSON_PATH_LENGTH) return [`is longer than ${MAX_JSON_PATH_LENGTH} characters`];
  return JSON_PATH.test(path)
    ? []
    : [`${JSON.stringify(path)} is not a dotted path (names of letters, digits, _, - or $ joined by single dots, e.g. account.id)`];
}

/** What names a provider's runtime configuration; everything else has its default. */
export type ProviderRuntimeInput = Pick<ProviderRuntimeConfig, 'name' | 'adapter' | 'secretId'> & Partial<ProviderRuntimeConfig>;

/**
 * A provider's runtime configuration, the defaults filled in (both tolerances, the grace of the
 * previous secret): the one builder of it, for the construct, the local twin, the bench, the ops
 * CLI and the tests alike.
 */
export function providerRuntimeConfig(input: ProviderRuntimeInput): ProviderRuntimeConfig {
  return {
    ...input,
    tolerancePastSeconds: input.tolerancePastSeconds ?? Defaults.TIMESTAMP_TOLERANCE_SECONDS,
    toleranceFutureSeconds: input.toleranceFutureSeconds ?? Defaults.TIMESTAMP_TOLERANCE_SECONDS,
    previousSecretGraceSeconds: input.previousSecretGraceSeconds ?? Defaults.PREVIOUS_SECRET_GRACE_SECONDS,
  };
}

/**
 * The authoritative read (docs/providers/standard-webhooks.md#authoritative-read): before a delivery's result is exposed, the processor GETs
 * the provider's resource named by the delivery. 2xx: the resource travels in the effect.
 * 404/410: the resource is missing or expired; the row's outcome is `unavailable`, no effect is
 * sent and nothing is retried or generated again. Anything else is a failure, retried.
 */
export interface AuthoritativeReadSettings {
  /** `https://` URL with `{id}` exactly once, e.g. `https://api.openai.com/v1/responses/{id}`. */
  readonly urlTemplate: string;
  /** Dotted path of the resource id in the delivery's JSON body, e.g. `data.id`. */
  readonly idJsonPath: string;
  /** ARN (or name) of the Secrets Manager secret whose AWSCURRENT value is the Bearer API key (text, or JSON `{"apiKey": "…"}`). */
  readonly apiKeySecretId: string;
}

/** The placeholder of the resource id in an authoritative read's URL template. */
export const RESOURCE_ID_PLACEHOLDER = '{id}';

/** What is wrong with an authoritative read; empty when it is usable. Checked at synth and at cold start. */
export function authoritativeReadProblems(settings: AuthoritativeReadSettings): string[] {
  const problems: string[] = [];
  const template = settings.urlTemplate ?? '';
  if (template.split(RESOURCE_ID_PLACEHOLDER).length !== 2) problems.push('urlTemplate must contain {id} exactly once');
  problems.push(...apiUrlProblems('urlTemplate', template.replace(RESOURCE_ID_PLACEHOLDER, 'id')));
  if (!settings.idJsonPath) problems.push('idJsonPath is required');
  if (!settings.apiKeySecretId) problems.push('apiKeySecretId is required');
  return problems;
}

/** A secret the rotation function rotates, as the construct passes it (JSON array in an env var). */
export interface RotatedSecretConfig {
  /** The secret's ARN, as Secrets Manager names it in rotation events. */
  readonly secretId: string;
  readonly providerName: string;
  /** The form of the new secret: `whsec_` + base64 of 32 random bytes, or 64 random hex characters. */
  readonly format: RotatedSecretFormat;
  /** A function that registers the new secret with the provider (the setSecret step). */
  readonly registerFunctionArn?: string;
}
