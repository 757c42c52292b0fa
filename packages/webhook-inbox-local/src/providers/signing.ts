/**
 * How the simulated providers sign, computed here with node:crypto from each provider's
 * documentation, never with the verifier's own code in lambda/shared, so that a mistake shared
 * by both sides cannot go unnoticed.
 */
import { createHmac } from 'node:crypto';

/** Standard Webhooks (Answerline, OpenAI, Svix): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the base64 after `whsec_`. */
export function standardWebhooksSignature(secret: string, id: string, timestamp: number, body: Buffer): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** The three `webhook-*` headers of one Standard Webhooks attempt. */
export function standardWebhooksHeaders(secret: string, id: string, timestamp: number, body: Buffer): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardWebhooksSignature(secret, id, timestamp, body),
  };
}

/** Echonova (docs/providers/echonova.md): hex HMAC-SHA256 of `timestamp.body`, keyed by the secret's text. */
export function echonovaSignature(secret: string, timestamp: number, body: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`).update(body).digest('hex');
}

/** The three `X-Webhook-*` headers of one Echonova attempt. */
export function echonovaHeaders(secret: string, event: string, timestamp: number, body: Buffer): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-webhook-event': event,
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': echonovaSignature(secret, timestamp, body),
  };
}

/** The signature values of a request's headers (for the log scan: none may appear in a log line). */
export function signatureTokens(headers: Readonly<Record<string, string>>): string[] {
  const tokens: string[] = [];
  for (const name of ['webhook-signature', 'x-webhook-signature']) {
    const value = headers[name];
    if (!value) continue;
    for (const part of value.split(' ')) tokens.push(part.includes(',') ? part.slice(part.indexOf(',') + 1) : part);
  }
  return tokens;
}

export function unixSeconds(ms: number = Date.now()): number {
  return Math.floor(ms / 1000);
}
