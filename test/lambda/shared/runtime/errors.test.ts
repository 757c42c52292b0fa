/**
 * The one safe-error policy: what an error may say in a log line or a row. The project's own
 * errors name fields and reasons, so their messages are kept; anyone else's (an SDK's, a
 * provider's, a user's function's) could echo a request or a body, so only the name is.
 */
import {
  ConfigurationError,
  errorName,
  functionErrorType,
  MalformedDeliveryError,
  safeErrorFields,
  safeErrorText,
} from '../../../../lambda/shared/runtime/errors';
import { RotationError } from '../../../../lambda/rotator/rotator';

const sdkError = () => Object.assign(new Error('User: … is not authorized … body={"secret":"x"}'), { name: 'AccessDeniedException' });

test.each([
  ['one of ours keeps its message', new MalformedDeliveryError('task.status', 'is not a string'), 'MalformedDeliveryError: task.status: is not a string'],
  ['another of ours', new RotationError('the secret is not one this function rotates'), 'RotationError: the secret is not one this function rotates'],
  ['an SDK error keeps its name only', sdkError(), 'AccessDeniedException'],
  ['a plain Error keeps its name only', new Error('anything at all'), 'Error'],
  ['something thrown that is no error', 'a string with content', 'Error'],
  ['nothing', undefined, 'Error'],
])('%s', (_name, error, text) => {
  expect(safeErrorText(error)).toBe(text);
});

test('as log fields: the name always, the message only for ours', () => {
  expect(safeErrorFields(new ConfigurationError('provider x is not configured'))).toEqual({
    error: 'ConfigurationError',
    detail: 'provider x is not configured',
  });
  expect(safeErrorFields(sdkError())).toEqual({ error: 'AccessDeniedException' });
  expect(errorName({ name: 'x'.repeat(300) })).toHaveLength(100);
});

test('a function error payload gives its type, never its message', () => {
  const payload = Buffer.from(JSON.stringify({ errorType: 'ValidationError', errorMessage: 'the customer email is a@b.c' }));
  expect(functionErrorType(payload)).toBe('ValidationError');
  expect(functionErrorType(Buffer.from(JSON.stringify({ errorType: 'has spaces and <html>' })))).toBe('Error');
  expect(functionErrorType(Buffer.from('not json'))).toBe('Error');
});
