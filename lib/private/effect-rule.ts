import * as events from 'aws-cdk-lib/aws-events';
import { Construct } from 'constructs';
import { EffectEvent } from '../contract';
import { ValidationError } from './validation-error';

/** The inbox an effect rule listens to: its bus and its name, which every effect's detail carries. */
export interface EffectSource {
  readonly eventBus?: events.IEventBus;
  readonly inboxName: string;
}

/**
 * A rule on the inbox's bus for one effect (`detailType`) of this inbox, with the options of any
 * `onEvent` of aws-cdk-lib: their pattern narrows the rule's, their target is added.
 */
export function effectRule(scope: Construct, inbox: EffectSource, id: string, detailType: string, options: events.OnEventOptions): events.Rule {
  if (!inbox.eventBus) throw new ValidationError(`${id}: this inbox publishes no events (publishEvents is false)`, scope);
  const rule = new events.Rule(scope, id, {
    eventBus: inbox.eventBus,
    description: options.description,
    ruleName: options.ruleName,
    crossStackScope: options.crossStackScope,
  });
  rule.addEventPattern({
    source: [EffectEvent.SOURCE],
    detailType: [detailType],
    detail: { inbox: [inbox.inboxName] },
  });
  if (options.eventPattern) rule.addEventPattern(options.eventPattern);
  if (options.target) rule.addTarget(options.target);
  return rule;
}
