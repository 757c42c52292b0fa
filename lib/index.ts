export * from './monitoring';
export * from './provider';
export * from './webhook-inbox';
export type { EffectDetail } from './contract/effects';
