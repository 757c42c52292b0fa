/** Exit codes of the ops CLI (documented in `--help`). */
export const ExitCode = {
  OK: 0,
  /** The command ran and something failed: AWS, a missing stack or row, a function error. */
  FAILURE: 1,
  /** The command line is wrong: unknown command or option, missing or malformed argument. */
  USAGE: 2,
} as const;

/** The command line is wrong; the message says what to change. Exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command could not do its work (no such stack, no such event, ...). Exit code 1. */
export class OpsError extends Error {
  override readonly name = 'OpsError';
}
