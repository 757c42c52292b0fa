import type { PredicateRule } from './contract';

/**
 * A condition on a verified delivery's JSON body that a provider's filter keeps deliveries by
 * (`keepWhen`), beside or instead of `eventTypes`. Paths are dotted (`data.object.livemode`); a
 * body that is not a JSON object meets no `valueIn`, `present` or `startsWith`.
 */
export class DeliveryPredicate {
  /** The value at `jsonPath` (a string, or a number or boolean as its JSON text: `true`, `42`) is one of `values`. */
  public static valueIn(jsonPath: string, values: string[]): DeliveryPredicate {
    return new DeliveryPredicate({ op: 'in', path: jsonPath, values: [...values] });
  }

  /** The body has a value at `jsonPath` (`null` included). */
  public static present(jsonPath: string): DeliveryPredicate {
    return new DeliveryPredicate({ op: 'present', path: jsonPath });
  }

  /** The value at `jsonPath` is a string that starts with `prefix`. */
  public static startsWith(jsonPath: string, prefix: string): DeliveryPredicate {
    return new DeliveryPredicate({ op: 'prefix', path: jsonPath, prefix });
  }

  /** The condition does not hold. */
  public static not(predicate: DeliveryPredicate): DeliveryPredicate {
    return new DeliveryPredicate({ op: 'not', rule: predicate._rule });
  }

  /** Every condition holds. */
  public static allOf(...predicates: DeliveryPredicate[]): DeliveryPredicate {
    return new DeliveryPredicate({ op: 'all', rules: predicates.map((predicate) => predicate._rule) });
  }

  /** At least one condition holds. */
  public static anyOf(...predicates: DeliveryPredicate[]): DeliveryPredicate {
    return new DeliveryPredicate({ op: 'any', rules: predicates.map((predicate) => predicate._rule) });
  }

  /**
   * The condition as the verifier evaluates it.
   * @internal
   */
  public readonly _rule: PredicateRule;

  private constructor(rule: PredicateRule) {
    this._rule = rule;
  }
}
