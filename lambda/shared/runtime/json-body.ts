/** Reading a JSON body: the adapters (ids, descriptions) and the delivery filters read bodies the same way. */

/** Parses a JSON object body; undefined when the bytes are not a JSON object. */
export function parseJsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Reads a dotted path (`task.id`) of a parsed JSON value. */
export function valueAtPath(value: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, segment) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[segment] : undefined), value);
}
