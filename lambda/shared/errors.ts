/** A stored delivery that cannot be interpreted; the message for `field` names what is wrong. */
export class MalformedDeliveryError extends Error {
  constructor(readonly field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.name = 'MalformedDeliveryError';
  }
}

/** A configuration value the construct should have set is missing or invalid. */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

/** An effect (an EventBridge event, an invocation of the user's function) was not accepted; the row is retried. */
export class EffectDispatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EffectDispatchError';
  }
}

/** The provider's resource could not be read (other than missing or expired); the row is retried. */
export class AuthoritativeReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthoritativeReadError';
  }
}

/** The AWS SDK marks a failed condition with this name. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}
