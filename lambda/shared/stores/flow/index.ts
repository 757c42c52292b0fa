export * from './dynamodb';
export * from './port';
export * from './state';
