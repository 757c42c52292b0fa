import { KeyObject, verify as verifySignature } from 'node:crypto';
import { SnsMessageType } from '../../../../lib/contract';

/** An SNS HTTP/S message as its JSON body carries it (every value a string). */
export interface SnsMessage {
  readonly Type: string;
  readonly MessageId: string;
  readonly TopicArn: string;
  readonly Message: string;
  readonly Timestamp: string;
  readonly SignatureVersion: string;
  readonly Signature: string;
  readonly SigningCertURL: string;
  readonly Subject?: string;
  readonly SubscribeURL?: string;
  readonly Token?: string;
}

/** The fields every message carries. */
const REQUIRED = ['Type', 'MessageId', 'TopicArn', 'Message', 'Timestamp', 'SignatureVersion', 'Signature', 'SigningCertURL'] as const;

/**
 * The fields each type signs, in the order SNS documents (byte order of the names). A
 * notification's `Subject` is signed when it is present; the confirmations sign their
 * `SubscribeURL` and `Token`.
 */
const SIGNED_FIELDS: Readonly<Record<string, readonly (keyof SnsMessage)[]>> = {
  [SnsMessageType.NOTIFICATION]: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  [SnsMessageType.SUBSCRIPTION_CONFIRMATION]: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  [SnsMessageType.UNSUBSCRIBE_CONFIRMATION]: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

/** The digest each `SignatureVersion` signs with (RSA PKCS#1 v1.5). */
const DIGEST_OF: Readonly<Record<string, string>> = { '1': 'sha1', '2': 'sha256' };

/** Parses a body as an SNS message, or names what is wrong with it. */
export function parseSnsMessage(body: Buffer): SnsMessage | { readonly problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { problem: 'body is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'body is not a JSON object' };
  const message = parsed as Record<string, unknown>;
  for (const field of REQUIRED) {
    if (typeof message[field] !== 'string' || message[field] === '') return { problem: `${field} is missing or not a string` };
  }
  const signed = SIGNED_FIELDS[message.Type as string];
  if (!signed) return { problem: 'Type is not Notification, SubscriptionConfirmation or UnsubscribeConfirmation' };
  for (const field of signed) {
    const value = message[field];
    // A notification without a subject carries none, or (as SNS's own examples do) null.
    if (field === 'Subject' ? value !== undefined && value !== null && typeof value !== 'string' : typeof value !== 'string') {
      return { problem: `${field} is missing or not a string` };
    }
  }
  if (DIGEST_OF[message.SignatureVersion as string] === undefined) return { problem: 'SignatureVersion is not 1 or 2' };
  return message as unknown as SnsMessage;
}

/** The text SNS signs: each signed field present, as its name, a newline, its value and a newline. */
export function snsStringToSign(message: SnsMessage): string {
  return SIGNED_FIELDS[message.Type]
    .filter((field) => typeof message[field] === 'string')
    .map((field) => `${field}\n${message[field]}\n`)
    .join('');
}

/** Whether the message's `Signature` is the signing certificate's key's signature of its string to sign. */
export function snsSignatureMatches(message: SnsMessage, publicKey: KeyObject): boolean {
  const signature = Buffer.from(message.Signature, 'base64');
  if (signature.length === 0) return false;
  try {
    return verifySignature(DIGEST_OF[message.SignatureVersion], Buffer.from(snsStringToSign(message), 'utf8'), publicKey, signature);
  } catch {
    // A key that is not RSA, or a signature of the wrong size: not SNS's.
    return false;
  }
}

/** A signed `Timestamp` (ISO 8601, UTC) in Unix seconds; undefined when it is not one. */
export function snsTimestampSeconds(timestamp: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(timestamp)) return undefined;
  const millis = Date.parse(timestamp);
  return Number.isNaN(millis) ? undefined : Math.floor(millis / 1000);
}
