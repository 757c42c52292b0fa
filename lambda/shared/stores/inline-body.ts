import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { InboxAttr as A } from '../../../lib/contract';

/**
 * Bodies kept in a row, and responses kept in a result item, are stored deflated when that makes
 * them smaller. DynamoDB bills every write (the conditional insert, the claim, the completion,
 * the results offer) by the whole item's size in 1 KB units, so a 1 KiB JSON delivery that
 * deflates to 500 bytes costs one unit per write, not two. The digest is always of the exact
 * bytes received.
 */
export const DEFLATE_RAW = 'deflate-raw';

/**
 * Below this a row (or a result item) fits one write unit anyway (its other attributes take
 * about 350 bytes), so deflating would cost time (20–50 µs) and save nothing.
 */
const MIN_COMPRESSED_BYTES = 512;
/**
 * A 4 KB window and a small state: inline bodies are at most 64 KiB, and zlib's defaults (32 KB
 * window, 256 KB of state) cost four times the time on a 1 KiB body to save nothing.
 */
const DEFLATE_OPTIONS = { windowBits: 12, memLevel: 4 };

/**
 * `bytes` deflated (raw deflate, no header) when they are long enough to gain and deflating
 * makes them smaller; undefined otherwise. Rows' bodies and results' responses use it alike.
 */
export function deflatedIfSmaller(bytes: Buffer): Buffer | undefined {
  if (bytes.length < MIN_COMPRESSED_BYTES) return undefined;
  const deflated = deflateRawSync(bytes, DEFLATE_OPTIONS);
  return deflated.length < bytes.length ? deflated : undefined;
}

/**
 * The row attributes of an inline body: the bytes deflated (`deflated`) when smaller, else the
 * bytes themselves (`body`). The attribute's name says the encoding, so no second attribute
 * takes a claimed 1 KiB row past one write unit.
 */
export function inlineBodyAttributes(body: Buffer): Record<string, AttributeValue> {
  const deflated = deflatedIfSmaller(body);
  return deflated ? { [A.BODY_DEFLATED]: { B: deflated } } : { [A.BODY]: { B: body } };
}

/**
 * The exact bytes received, from a row's (or a quarantined copy's) inline body attributes; items
 * written before `deflated` existed keep deflated bytes in `body` with `bodyEncoding` set.
 */
export function inlineBodyOf(item: Record<string, AttributeValue>): Buffer {
  const deflated = item[A.BODY_DEFLATED]?.B;
  if (deflated !== undefined) return inflateRawSync(deflated);
  const stored = Buffer.from(item[A.BODY]?.B ?? []);
  return item[A.BODY_ENCODING]?.S === DEFLATE_RAW ? inflateRawSync(stored) : stored;
}
