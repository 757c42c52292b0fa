/**
 * What an AWS SDK error means to the operator running the CLI, and what to do about it. The CLI
 * talks to its own user, who needs the SDK's message (which action on which resource was refused):
 * unlike the handlers' logs, nothing here is kept to the error's name alone.
 */

/** An SDK error as the clients raise it: a service's error code, the SDK's own (region, credentials), or a network one. */
interface SdkError {
  readonly name?: string;
  readonly message?: string;
  readonly code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number; readonly attempts?: number };
}

const EXPIRED_OR_INVALID_CREDENTIALS = new Set([
  'ExpiredToken',
  'ExpiredTokenException',
  'RequestExpired',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'InvalidAccessKeyId',
  'IncompleteSignature',
]);
const ACCESS_DENIED = new Set(['AccessDenied', 'AccessDeniedException', 'AuthorizationError', 'UnauthorizedOperation', 'KMSAccessDeniedException']);
const THROTTLED = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'ProvisionedThroughputExceededException',
  'SlowDown',
]);
const NOT_FOUND = new Set(['ResourceNotFoundException', 'QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue', 'NoSuchBucket']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH']);

const SIGN_IN =
  'sign in with `aws sso login --profile <profile>` and set AWS_PROFILE=<profile> (or export fresh AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN)';

/** The operator's message for an error the CLI did not raise itself: what is wrong, then what to do. */
export function explainAwsError(error: unknown): string {
  const { name = 'Error', message = '', code, $metadata } = (error ?? {}) as SdkError;
  const said = message ? `${name}: ${message}` : name;
  if (/region is missing|region not accepted/i.test(message)) {
    return `no valid AWS region is configured: give --region <region>, or set AWS_REGION (or a region in the AWS_PROFILE profile) (${said})`;
  }
  if (name === 'CredentialsProviderError' || name === 'TokenProviderError') {
    const expiredSso = /sso|token/i.test(message) && /expired|refresh|invalid/i.test(message);
    return `${expiredSso ? 'the AWS SSO session has expired' : 'no AWS credentials were found'}: ${SIGN_IN} (${said})`;
  }
  if (EXPIRED_OR_INVALID_CREDENTIALS.has(name)) {
    return `AWS refused the credentials, which have expired or are not valid: ${SIGN_IN} (${said})`;
  }
  if (ACCESS_DENIED.has(name) || $metadata?.httpStatusCode === 403) {
    const refused = /not authorized to perform:? (\S+) on resource:? (\S+)/.exec(message);
    const what = refused ? `${refused[1]} on ${refused[2]}` : 'the request';
    return `access denied to ${what}: allow it in the policy of the role or user these credentials belong to, or use credentials that have it (${said})`;
  }
  if (THROTTLED.has(name)) {
    const attempts = $metadata?.attempts ? ` after ${$metadata.attempts} attempts` : '';
    return `AWS throttled the request${attempts}: wait a minute and run the command again; AWS_MAX_ATTEMPTS=<n> makes the SDK retry longer (${said})`;
  }
  if (NOT_FOUND.has(name)) {
    return `an AWS resource of the inbox was not found: check --region and that --stack and --inbox (or --config) name a deployed inbox (${said})`;
  }
  if (code !== undefined && UNREACHABLE.has(code)) {
    return `cannot reach the AWS endpoint: check the network, or, with --config, that the endpoints it names (e.g. the local twin) are running (${said})`;
  }
  return said;
}
