/**
 * The errors of this project: their messages name fields, reasons and our own identifiers, never
 * content, so a log line or a row may carry them (`safeErrorText`). Anyone else's message (an
 * SDK's, a provider's, the user's function's) can echo a request or a body: only its name is kept.
 */
export abstract class SafeError extends Error {}

/** A stored delivery that cannot be interpreted; the message for `field` names what is wrong. */
export class MalformedDeliveryError extends SafeError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'MalformedDeliveryError';
  }
}

/** A configuration value the construct should have set is missing or invalid. */
export class ConfigurationError extends SafeError {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

/** An effect (an EventBridge event, an invocation of the user's function) was not accepted; the row is retried. */
export class EffectDispatchError extends SafeError {
  constructor(message: string) {
    super(message);
    this.name = 'EffectDispatchError';
  }
}

/** The provider's resource could not be read (other than missing or expired); the row is retried. */
export class AuthoritativeReadError extends SafeError {
  constructor(message: string) {
    super(message);
    this.name = 'AuthoritativeReadError';
  }
}

/** The AWS SDK marks a failed condition with this name. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}

/** An error's name (its class or the service's error code): always safe to log. */
export function errorName(error: unknown): string {
  const name = (error as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== '' ? name.slice(0, 100) : 'Error';
}

/** What an error may say in a row or a line of text: ours `<Name>: <message>`, anyone else's its name only. */
export function safeErrorText(error: unknown): string {
  return error instanceof SafeError ? `${errorName(error)}: ${error.message}`.slice(0, 500) : errorName(error);
}

/** The same, as log fields: `error` (the name) and, for ours, `detail` (the message). */
export function safeErrorFields(error: unknown): { error: string; detail?: string } {
  return error instanceof SafeError ? { error: errorName(error), detail: error.message.slice(0, 500) } : { error: errorName(error) };
}

const ERROR_TYPE = /^[A-Za-z0-9_.:$-]{1,100}$/;

/** The `errorType` of a Lambda function's error payload (never its message, which is the function's own text). */
export function functionErrorType(payload: Uint8Array | undefined): string {
  try {
    const type = (JSON.parse(Buffer.from(payload ?? []).toString('utf8')) as { errorType?: unknown }).errorType;
    return typeof type === 'string' && ERROR_TYPE.test(type) ? type : 'Error';
  } catch {
    return 'Error';
  }
}
