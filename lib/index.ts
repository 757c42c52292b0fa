export * from './provider';
export * from './webhook-inbox';
