/**
 * The sanitized delivery record (docs/DELIVERY-RECORD.md): the verifier's `delivery` log line and
 * the processor's `processed` (or dead-lettered) line of the same event, joined by `eventRef`.
 * Their values are reason codes, hashed references, times and the provider's event type: never a
 * body, a header's value, a secret, or an event's, resource's or tenant's plain id.
 */

/** How the authenticity check went (`signatureResult`). */
export const SignatureResult = {
  /** The signature matched a valid secret (and its signed time, if any, was fresh). */
  VALID: 'valid',
  /** No valid secret made the signature. */
  BAD_SIGNATURE: 'bad_signature',
  /** The signature matched, but its signed time is outside the tolerance. */
  STALE_TIMESTAMP: 'stale_timestamp',
  /** A signature, timestamp or id header is missing or garbled. */
  MALFORMED: 'malformed',
  /** Refused before any check: no such provider, a source outside its ranges, too large, or the secret unreadable. */
  NOT_CHECKED: 'not_checked',
} as const;

/** What the inbox made of a verified delivery's event id (`dedupeResult`). */
export const DedupeResult = {
  /** A new row. */
  NEW: 'new',
  /** A row with this key and body (or, for a level event, this key) was there already: nothing stored. */
  DUPLICATE: 'duplicate',
  /** A row with this key and another body was there: the copy is quarantined beside it. */
  CONFLICT: 'conflict',
  /** Never a row: a test delivery, a handshake, a task not final yet, a refusal. */
  NOT_STORED: 'not_stored',
  /** The store failed: nothing was acknowledged. */
  STORE_ERROR: 'store_error',
} as const;

/** What the processor decided (`reconcileResult`): the row's outcome, or why it has none. */
export const ReconcileResult = {
  /** This attempt failed; the row is retried. */
  FAILED: 'failed',
  /** This attempt failed and was the row's last: the row is DEAD. */
  DEAD: 'dead',
} as const;

/** What became of the processed row's effect (`outboxResult`). */
export const OutboxResult = {
  /** The effect was accepted by the bus or the processing function. */
  DISPATCHED: 'dispatched',
  /** The row has no effect (a superseded result, an unavailable resource, no effects configured). */
  NONE: 'none',
  /** The dispatch failed: the row is retried with the same effect key. */
  FAILED: 'failed',
} as const;

/** Log messages of the delivery record's lines. */
export const DeliveryRecordMessage = {
  /** The verifier's line, one per request. */
  RECEIVED: 'delivery',
  /** The processor's line of a processed row. */
  PROCESSED: 'processed',
  /** The processor's line of a row whose last allowed attempt failed. */
  DEAD_LETTERED: 'processing failed; dead-lettered',
} as const;

/** The prefix every hashed reference in the record starts with (`eventRef`, `resourceRef`, `tenantRef`). */
export const LOG_REFERENCE_PREFIX = 'sha256:';

/** What a resource's `<provider>#<id>` is hashed after, so that its reference never equals an event's. */
export const RESOURCE_REFERENCE_NAMESPACE = 'resource:';

/** What a tenant's value is hashed after, so that its reference never equals an event's or a resource's. */
export const TENANT_REFERENCE_NAMESPACE = 'tenant:';

/**
 * What an event type must look like to be logged (`payment_intent.succeeded`, `orders/create`,
 * `2`): a name, never free text; a type that is not one is left out of the record.
 */
export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9_.:/-]{1,128}$/;
