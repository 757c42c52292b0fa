export * from './keys';
export * from './row';
export * from './port';
export { DynamoDbInboxStore, readBodyItem } from './dynamodb';
