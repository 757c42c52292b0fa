import { DeliveryFilterConfig, PredicateRule } from '../../../lib/contract';
import { parseJsonObject, valueAtPath } from '../runtime/json-body';

/** Why a filter drops a delivery; undefined when it keeps it. */
export type FilterVerdict = string | undefined;

/**
 * A provider's filter as one function of a verified delivery's event type and body: the event
 * type against the kept types, then the body against the predicate. No filter keeps everything.
 */
export function deliveryFilter(config: DeliveryFilterConfig | undefined): (eventType: string | undefined, body: Buffer) => FilterVerdict {
  if (config === undefined) return () => undefined;
  const kept = config.eventTypes === undefined ? undefined : new Set(config.eventTypes);
  const predicate = config.predicate;
  return (eventType, body) => {
    if (kept !== undefined) {
      if (eventType === undefined) return 'the delivery names no event type, and only listed types are kept';
      if (!kept.has(eventType)) return `event type ${eventType} is not one the provider keeps`;
    }
    if (predicate !== undefined && !holds(predicate, parseJsonObject(body))) return "the body does not meet the provider's filter predicate";
    return undefined;
  };
}

/** Whether a parsed body (undefined: not a JSON object) meets a condition. */
export function holds(rule: PredicateRule, body: Record<string, unknown> | undefined): boolean {
  switch (rule.op) {
    case 'not':
      return !holds(rule.rule, body);
    case 'all':
      return rule.rules.every((inner) => holds(inner, body));
    case 'any':
      return rule.rules.some((inner) => holds(inner, body));
    case 'present':
      return body !== undefined && valueAtPath(body, rule.path) !== undefined;
    case 'in': {
      const text = comparable(body === undefined ? undefined : valueAtPath(body, rule.path));
      return text !== undefined && rule.values.includes(text);
    }
    case 'prefix': {
      const value = body === undefined ? undefined : valueAtPath(body, rule.path);
      return typeof value === 'string' && value.startsWith(rule.prefix);
    }
  }
}

/** A string as it is; a finite number or a boolean as its JSON text (`true`, `42`); undefined for anything else. */
function comparable(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return JSON.stringify(value);
  return undefined;
}
