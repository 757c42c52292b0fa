export * from './defaults';
export * from './effects';
export * from './env';
export * from './metrics';
export * from './ops-config';
export * from './providers';
export * from './runtime-config';
export * from './table-schema';
