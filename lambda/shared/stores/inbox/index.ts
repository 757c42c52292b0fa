export * from './dynamodb';
