export * from './flow-control';
export * from './archive-options';
export * from './inbox-alarm';
export * from './inbox-base';
export * from './inbox-interface';
export * from './inbox-metrics';
export * from './ingress';
export * from './monitoring';
export * from './monitoring-options';
export * from './provider';
export * from './webhook-inbox';
export * from './webhook-inbox-props';
/** The detail of the effect events: the schema an `onJobResult`/`onWebhookReceived` target (or your processing function) receives. */
export type { EffectDetail } from './contract/effects';
/** The detail of a `ResourceUnavailable` event: the schema an `onResourceUnavailable` target receives. */
export type { ResourceUnavailableDetail } from './contract/effects';
