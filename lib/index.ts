export * from './monitoring';
export * from './provider';
export * from './webhook-inbox';
