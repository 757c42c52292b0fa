import { AttributeValue } from '@aws-sdk/client-dynamodb';

/** DynamoDB attribute values, written by hand to keep the handler bundles free of lib-dynamodb. */
export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: number): AttributeValue => ({ N: String(value) });
export const stringMap = (values: Record<string, string>): AttributeValue => ({
  M: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, S(value)])),
});
