/**
 * Deliveries signed the way the real senders sign them, for the adapter and multi-provider
 * tests. Every signature comes from the library the provider publishes (`standardwebhooks`,
 * `svix`, `stripe`, `@octokit/webhooks-methods`) or, where no library exists (Echonova, the
 * generic HMAC schemes, Ed25519 `v1a`), is computed here with node:crypto: never with the
 * signers in lambda/shared, so a shared mistake cannot make a test pass.
 */
import { createHmac, generateKeyPairSync, randomBytes, randomUUID, sign as signWithKey } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';

export type HeaderMap = Record<string, string>;

/** The official Standard Webhooks test vector (published with the specification's reference libraries). */
export const STANDARD_WEBHOOKS_VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
} as const;

/** GitHub's documented example ("Validating webhook deliveries"). */
export const GITHUB_EXAMPLE = {
  secret: "It's a Secret to Everybody",
  payload: 'Hello, World!',
  signature: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
} as const;

/** Text no sender escapes: accents, CJK, emoji (with a ZWJ sequence), U+2028, quotes, a backslash. */
export const UNICODE_NOTE = 'Grüße aus Köln 🚀 — 東京 ✓ 👩‍👩‍👧 \u2028 "quoted" \\ end';

/** A plain-text signing secret (Echonova, GitHub, the generic HMAC schemes). */
export function textSecret(): string {
  return randomBytes(32).toString('hex');
}

/** A Stripe endpoint secret: `whsec_` and alphanumeric text, used as UTF-8 key bytes (not base64). */
export function stripeSecret(): string {
  return `whsec_${randomBytes(16).toString('hex')}`;
}

const utf8 = (body: Buffer | string): string => (Buffer.isBuffer(body) ? body.toString('utf8') : body);

// --- Standard Webhooks, Svix, Ed25519 -----------------------------------------------------------

/** A Standard Webhooks message id, as senders generate them. */
export function messageId(): string {
  return `msg_${randomUUID().replace(/-/g, '')}`;
}

/** `webhook-*` headers signed by the reference `standardwebhooks` library. */
export function standardWebhooksHeaders(body: Buffer | string, secret: string, timestamp: number, id: string = messageId()): HeaderMap {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': new StandardWebhook(secret).sign(id, new Date(timestamp * 1000), utf8(body)),
  };
}

/** `svix-*` headers signed by the `svix` library, as Svix-powered senders deliver them. */
export function svixHeaders(body: Buffer | string, secret: string, timestamp: number, id: string = messageId()): HeaderMap {
  return {
    'svix-id': id,
    'svix-timestamp': String(timestamp),
    'svix-signature': new SvixWebhook(secret).sign(id, new Date(timestamp * 1000), utf8(body)),
  };
}

/** A Standard Webhooks `v1a` (Ed25519) sender: its stored public key and its signed headers. */
export class Ed25519Sender {
  private readonly keys = generateKeyPairSync('ed25519');

  /** `whpk_` + base64 of the raw 32-byte public key, as the receiver stores it. */
  get publicKey(): string {
    const raw = Buffer.from(this.keys.publicKey.export({ format: 'jwk' }).x!, 'base64url');
    return `whpk_${raw.toString('base64')}`;
  }

  headers(body: Buffer | string, timestamp: number, id: string = messageId()): HeaderMap {
    const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8')]);
    return {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': `v1a,${signWithKey(null, content, this.keys.privateKey).toString('base64')}`,
    };
  }
}

// --- Stripe, GitHub --------------------------------------------------------------------------------

const stripe = new Stripe('sk_test_x');

/**
 * `Stripe-Signature` from the `stripe` library. With several secrets (a roll), one `v1` per
 * secret under one `t=`, as Stripe sends it.
 */
export function stripeHeaders(body: Buffer | string, timestamp: number, ...secrets: string[]): HeaderMap {
  const payload = utf8(body);
  const [first, ...more] = secrets.map((secret) => stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }));
  const extra = more.map((header) => header.split(',').find((pair) => pair.startsWith('v1='))!);
  return { 'stripe-signature': [first, ...extra].join(',') };
}

/** GitHub's headers, signed by `@octokit/webhooks-methods` (and the legacy SHA-1 header GitHub still sends). */
export async function githubHeaders(body: Buffer | string, secret: string, event = 'issues', delivery: string = randomUUID()): Promise<HeaderMap> {
  const payload = utf8(body);
  return {
    'x-github-event': event,
    'x-github-delivery': delivery,
    'x-github-hook-id': '492013017',
    'x-github-hook-installation-target-type': 'repository',
    'x-hub-signature': await octokitSign({ secret, algorithm: 'sha1' }, payload),
    'x-hub-signature-256': await octokitSign(secret, payload),
    'user-agent': 'GitHub-Hookshot/a1b2c3d',
  };
}

// --- Independently computed HMAC schemes -----------------------------------------------------------

/**
 * The bytes a template like `{id}.{timestamp}.{body}` stands for, built by plain string
 * substitution around the raw body (independent of lambda/shared/signatures/hmac.ts).
 */
export function signedContent(template: string, body: Buffer, values: { timestamp?: string; id?: string } = {}): Buffer {
  const [before, after] = template
    .replace('{timestamp}', values.timestamp ?? '')
    .replace('{id}', values.id ?? '')
    .split('{body}');
  return Buffer.concat([Buffer.from(before, 'utf8'), body, Buffer.from(after, 'utf8')]);
}

/** An HMAC of `content` keyed by `key`, encoded as a header carries it. */
export function hmacText(algorithm: 'sha256' | 'sha512', encoding: 'hex' | 'base64', key: Buffer | string, content: Buffer): string {
  return createHmac(algorithm, key).update(content).digest(encoding);
}

/** Echonova's three `X-Webhook-*` headers: hex HMAC-SHA256 of `timestamp.body` (docs/providers/echonova.md). */
export function echonovaHeaders(body: Buffer | string, secret: string, timestamp: number, event: string): HeaderMap {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  return {
    'x-webhook-event': event,
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': hmacText('sha256', 'hex', secret, signedContent('{timestamp}.{body}', bytes, { timestamp: String(timestamp) })),
  };
}

// --- Tampering and layouts -------------------------------------------------------------------------

/** A copy of `bytes` with one bit of one byte flipped (the middle byte by default). */
export function flipByte(bytes: Buffer | string, index?: number): Buffer {
  const copy = Buffer.from(bytes);
  const at = index ?? Math.floor(copy.length / 2);
  copy[at] ^= 0x01;
  return copy;
}

/**
 * A signature header with one character changed inside its last signature, keeping its shape
 * (hex and base64 alike), so the rejection is about the MAC and not the format.
 */
export function tamperSignature(value: string): string {
  const at = value.length - 20;
  return `${value.slice(0, at)}${value[at] === 'a' ? 'b' : 'a'}${value.slice(at + 1)}`;
}

/**
 * JSON as no serializer writes it: keys in reverse order, tabs, CRLF, spaces before colons and
 * commas, non-ASCII left raw. The signature covers exactly these bytes.
 */
export function oddJson(value: unknown, depth = 0): string {
  const pad = '\t'.repeat(depth + 1);
  // As JSON.stringify does: an undefined array item is null, an undefined member is left out.
  if (Array.isArray(value)) return `[ ${value.map((item) => (item === undefined ? 'null' : oddJson(item, depth + 1))).join(' ,  ')} ]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .reverse();
    if (entries.length === 0) return '{ }';
    return `{\r\n${entries.map(([key, item]) => `${pad}${JSON.stringify(key)} :  ${oddJson(item, depth + 1)}`).join(' ,\r\n')}\r\n${'\t'.repeat(depth)}}   `;
  }
  return JSON.stringify(value);
}
