import { logReference, resourceReference, tenantReference } from '../../lambda/shared/runtime/digest';
import { UsageError } from '../errors';
import { parseEventRef } from './common';

/** What the delivery record names by reference, and the reference of one value. */
export interface HashReport {
  /** The record's field that carries it: `eventRef`, `resourceRef` or `tenantRef`. */
  readonly field: 'eventRef' | 'resourceRef' | 'tenantRef';
  readonly reference: string;
  /** A CloudWatch Logs Insights query over the verifier's and the processor's log groups. */
  readonly query: string;
}

/** What `hash` is asked for: an event (`<provider>#<eventId>`), a resource (`<provider>#<id>`) or a tenant's value. */
export interface HashInput {
  readonly event?: string;
  readonly resource?: string;
  readonly tenant?: string;
}

/**
 * The reference the delivery record logs for an id an operator holds, computed as the handlers
 * compute it (no AWS request: the references are not keyed by anything the inbox keeps).
 */
export function hashReport(input: HashInput): HashReport {
  const given = [input.event, input.resource, input.tenant].filter((value) => value !== undefined);
  if (given.length !== 1) throw new UsageError('hash takes one of: <provider>#<eventId>, --resource <provider>#<resourceId>, --tenant <value>');
  if (input.tenant !== undefined) {
    if (input.tenant === '') throw new UsageError('--tenant needs a value');
    return report('tenantRef', tenantReference(input.tenant));
  }
  if (input.resource !== undefined) {
    const { provider, eventId: resourceId } = parseEventRef(input.resource, '--resource');
    return report('resourceRef', resourceReference(provider, resourceId));
  }
  return report('eventRef', logReference(parseEventRef(input.event, 'hash').key));
}

function report(field: HashReport['field'], reference: string): HashReport {
  const query =
    'fields @timestamp, @log, message, Provider, eventType, reason, status, signatureResult, dedupeResult, ' +
    'queueDelayMs, queueDelayFromEventMs, reconcileResult, outboxResult, attempts, error\n' +
    `| filter ${field} = "${reference}"\n` +
    '| sort @timestamp asc';
  return { field, reference, query };
}
