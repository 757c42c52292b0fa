import { PROVIDER_NAME_PATTERN, SUBMISSION_PARTITION_PREFIX } from '../../../../lib/contract';

/** The inbox key of one event: the provider namespaces the provider's stable id. */
export function deliveryKey(provider: string, eventId: string): string {
  return `${provider}#${eventId}`;
}

/**
 * Whether a partition key is a delivery row's: `<provider>#<event id>`, its provider a provider
 * name. A submission's (`ledger:…`), a rejection record's (`rejected:…`) and the sweep's
 * watermark (`sweep:…`) are not: no provider name holds a `:`. The sweep, the processor, the
 * ledger and the ops CLI take nothing else for a delivery (docs/DESIGN.md#invariant-4).
 */
export function isDeliveryKey(key: string): boolean {
  const at = key.indexOf('#');
  return at > 0 && at < key.length - 1 && PROVIDER_NAME_PATTERN.test(key.slice(0, at));
}

/**
 * The provider and the rest of an inbox partition key: `<provider>#<rest>` (provider names carry
 * no `#`), after the submission prefix when there is one.
 */
export function splitKey(key: string): { provider: string; rest: string } {
  const bare = key.startsWith(SUBMISSION_PARTITION_PREFIX) ? key.slice(SUBMISSION_PARTITION_PREFIX.length) : key;
  const at = bare.indexOf('#');
  return { provider: bare.slice(0, at), rest: bare.slice(at + 1) };
}

/** The job-ref index key of a provider's job reference. */
export function jobRefKey(provider: string, jobRef: string): string {
  return `${provider}#${jobRef}`;
}
