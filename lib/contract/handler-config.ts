/**
 * The handler configuration file (docs/LIMITS.md#lambda-environment): Lambda's environment is
 * limited to 4 KB, so the construct writes each function's settings that are known at synth into a
 * file beside its handler, and leaves in the environment only what CloudFormation fills in at
 * deploy. At cold start the file's variables are assembled and read like environment variables.
 */
/** The file's name, in the function's code folder (`LAMBDA_TASK_ROOT`). */
export const HANDLER_CONFIG_FILE = 'webhook-inbox-config.json';

/** A part of a packed value: literal text, an environment variable's value, or the `item`-th of its comma-separated values. */
export type PackedPart = string | { readonly env: string; readonly item?: number };

/** A value assembled at cold start: a value that holds what CloudFormation fills in at deploy. */
export interface PackedValue {
  readonly concat: readonly PackedPart[];
}

/** The file: the variables it sets, each literal text or packed. */
export interface HandlerConfigFile {
  readonly variables: Readonly<Record<string, string | PackedValue>>;
}

/**
 * The variables a function reads: its environment, and the file's variables assembled from the
 * environment's values (the construct's own settings: they win over a variable of the same name
 * the user sets). Throws naming what is missing or malformed.
 */
export function handlerVariables(env: Readonly<Record<string, string | undefined>>, fileText: string | undefined): Record<string, string | undefined> {
  if (fileText === undefined) return { ...env };
  let file: HandlerConfigFile;
  try {
    file = JSON.parse(fileText) as HandlerConfigFile;
  } catch {
    throw new Error(`${HANDLER_CONFIG_FILE} is not valid JSON`);
  }
  if (typeof file?.variables !== 'object' || file.variables === null) throw new Error(`${HANDLER_CONFIG_FILE} has no variables`);
  const assembled = Object.entries(file.variables).map(([name, value]) => [name, typeof value === 'string' ? value : assemble(name, value, env)]);
  return { ...env, ...Object.fromEntries(assembled) };
}

function assemble(name: string, value: PackedValue, env: Readonly<Record<string, string | undefined>>): string {
  if (!Array.isArray(value?.concat)) throw new Error(`${HANDLER_CONFIG_FILE}: ${name} is neither text nor packed`);
  return value.concat
    .map((part) => {
      if (typeof part === 'string') return part;
      const whole = env[part.env];
      if (whole === undefined) throw new Error(`${HANDLER_CONFIG_FILE}: ${name} needs environment variable ${part.env}, which is not set`);
      if (part.item === undefined) return whole;
      const item = whole.split(',')[part.item];
      if (item === undefined) throw new Error(`${HANDLER_CONFIG_FILE}: ${name} needs value ${part.item} of ${part.env}, which has ${whole.split(',').length}`);
      return item;
    })
    .join('');
}
