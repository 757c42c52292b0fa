import { Headers } from '../http';
import { SecretVersion } from '../secrets';
import { SigningKey, Verdict } from '../signing-key';

/** What a verified body is to the inbox. */
export type Admission =
  | { readonly kind: 'event'; readonly eventId: string }
  | { readonly kind: 'test' }
  | { readonly kind: 'malformed'; readonly detail: string };

/** A final result that a stored delivery reports for one logical job. */
export interface JobObservation {
  /** The logical job (Answerline: `task.idempotencyKey` without a trailing `-rN`). */
  readonly jobKey: string;
  readonly taskId: string;
  readonly status: FinalStatus;
  /** When the task was created, as a normalized ISO-8601 instant. */
  readonly createdAt: string;
  /** The result as JSON text, stored as it came (a FAILED task's error included). */
  readonly response: string;
}

export type FinalStatus = 'COMPLETED' | 'FAILED';

/**
 * Everything that differs between providers: how deliveries are signed, which id is stable,
 * what a test delivery looks like and how a body maps onto a job. The inbox, the processor and
 * the reconciler are shared.
 */
export interface ProviderAdapter {
  readonly name: string;
  /** The Secrets Manager secret holding this provider's signing secret. */
  readonly secretId: string;
  /** Turns the stored secret versions into signing keys; throws when a value is unusable. */
  signingKeys(versions: readonly SecretVersion[]): SigningKey[];
  /** Checks authenticity and freshness over the exact bytes received. */
  verify(headers: Headers, body: Buffer, keys: readonly SigningKey[], nowSeconds: number): Verdict;
  /** Reads the stable event id of a verified body, or recognises a test delivery. */
  admit(headers: Headers, body: Buffer): Admission;
  /** The delivery metadata worth keeping on the row: no signature, no credentials. */
  metadata(headers: Headers): Record<string, string>;
  /**
   * The final result a stored body reports, or undefined when it reports no final state.
   * Throws MalformedDeliveryError naming the field when the body cannot be interpreted.
   */
  observe(body: Buffer): JobObservation | undefined;
}

/** Keeps only the named headers that are present. */
export function pickHeaders(headers: Headers, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (value !== undefined) picked[name] = value.slice(0, 512);
  }
  return picked;
}

/** Parses a JSON object body; undefined when the bytes are not a JSON object. */
export function parseJsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Normalizes a timestamp to a fixed-width ISO-8601 instant, so that text order is time order. */
export function normalizeInstant(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const date = new Date(value);
  const year = date.getUTCFullYear();
  return Number.isNaN(date.getTime()) || year < 1970 || year > 9999 ? undefined : date.toISOString();
}
