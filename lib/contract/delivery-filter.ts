/**
 * A provider's filter at the edge, as the construct passes it to the verifier: which verified
 * deliveries are stored. A delivery it drops is answered 200 `filtered`, stored nowhere and
 * counted (`Filtered`); the filter runs only once the signature has verified.
 */
import { EVENT_TYPE_PATTERN } from './delivery-record';
import { providerFactsOf } from './providers';
import { jsonPathProblems } from './runtime-config';

/**
 * A condition on a delivery's JSON body. `in`: the value at `path` (a string, or a number or
 * boolean as its JSON text) is one of `values`; `present`: there is a value at `path` (null
 * included); `prefix`: the value at `path` is a string that starts with `prefix`; `not`, `all`,
 * `any` combine conditions. A body that is not a JSON object meets no `in`, `present` or `prefix`.
 */
export type PredicateRule =
  | { readonly op: 'in'; readonly path: string; readonly values: readonly string[] }
  | { readonly op: 'present'; readonly path: string }
  | { readonly op: 'prefix'; readonly path: string; readonly prefix: string }
  | { readonly op: 'not'; readonly rule: PredicateRule }
  | { readonly op: 'all' | 'any'; readonly rules: readonly PredicateRule[] };

/** The filter of one provider (`ProviderRuntimeConfig.filter`). Both parts must keep a delivery for it to be stored. */
export interface DeliveryFilterConfig {
  /** The event types kept (as the provider names them, where its facts say); absent: every type. */
  readonly eventTypes?: readonly string[];
  /** The condition a kept delivery's body meets; absent: none. */
  readonly predicate?: PredicateRule;
}

/** How deep conditions may nest: a filter is a few comparisons, not a program. */
export const MAX_PREDICATE_DEPTH = 8;

/** How many event types one filter may list. */
export const MAX_FILTER_EVENT_TYPES = 100;

/**
 * What is wrong with a provider's filter, each problem as it follows the provider's name; empty
 * when it is usable. Checked at synth and at cold start.
 */
export function deliveryFilterProblems(adapter: string, filter: unknown): string[] {
  if (typeof filter !== 'object' || filter === null) return ['filter must be an object'];
  const { eventTypes, predicate } = filter as DeliveryFilterConfig;
  const problems: string[] = [];
  if (eventTypes !== undefined) {
    const facts = providerFactsOf(adapter);
    if (facts && facts.eventType === undefined) {
      problems.push(`eventTypes: ${facts.title} deliveries name no event type; filter them with a predicate on their body instead`);
    } else if (!Array.isArray(eventTypes) || eventTypes.length === 0 || eventTypes.length > MAX_FILTER_EVENT_TYPES) {
      problems.push(`eventTypes must list from 1 to ${MAX_FILTER_EVENT_TYPES} event types (leave it out to keep every type)`);
    } else {
      problems.push(
        ...eventTypes.flatMap((type, index) =>
          typeof type === 'string' && EVENT_TYPE_PATTERN.test(type)
            ? []
            : [`eventTypes[${index}] ${JSON.stringify(type)} is not an event type name (${EVENT_TYPE_PATTERN.source})`],
        ),
      );
    }
  }
  if (predicate !== undefined) problems.push(...predicateProblems(predicate, 'predicate', 1));
  return problems;
}

function predicateProblems(rule: unknown, where: string, depth: number): string[] {
  if (depth > MAX_PREDICATE_DEPTH) return [`${where} nests conditions deeper than ${MAX_PREDICATE_DEPTH} levels`];
  if (typeof rule !== 'object' || rule === null) return [`${where} must be a condition`];
  const r = rule as Record<string, unknown>;
  const path = () => (jsonPathProblems(r.path) as string[]).map((problem) => `${where}.path ${problem}`);
  switch (r.op) {
    case 'in':
      return [
        ...path(),
        ...(Array.isArray(r.values) && r.values.length > 0 && r.values.every((value) => typeof value === 'string')
          ? []
          : [`${where}.values must list at least one string`]),
      ];
    case 'present':
      return path();
    case 'prefix':
      return [...path(), ...(typeof r.prefix === 'string' && r.prefix !== '' ? [] : [`${where}.prefix must be a non-empty string`])];
    case 'not':
      return predicateProblems(r.rule, `${where}.not`, depth + 1);
    case 'all':
    case 'any':
      return Array.isArray(r.rules) && r.rules.length > 0
        ? r.rules.flatMap((inner, index) => predicateProblems(inner, `${where}.${r.op}[${index}]`, depth + 1))
        : [`${where}.${r.op} must combine at least one condition`];
    default:
      return [`${where}.op ${JSON.stringify(r.op)} is not one of in, present, prefix, not, all, any`];
  }
}
