/**
 * A handler reads its settings from its configuration file and its environment: each packed
 * value of the file is assembled from the environment's values, the file's variables win over
 * the environment's of the same name, and what is missing is named.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Env, HANDLER_CONFIG_FILE } from '../../../../lib/contract';
import { handlerEnvironment } from '../../../../lambda/shared/runtime/config';
import { ConfigurationError } from '../../../../lambda/shared/runtime/errors';

let taskRoot: string;
beforeEach(() => {
  taskRoot = mkdtempSync(join(tmpdir(), 'handler-config-'));
});
afterEach(() => rmSync(taskRoot, { recursive: true, force: true }));

const ARN_PREFIX = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:';

function withFile(variables: unknown, env: Record<string, string> = {}): Record<string, string | undefined> {
  writeFileSync(join(taskRoot, HANDLER_CONFIG_FILE), JSON.stringify({ variables }));
  return handlerEnvironment({ LAMBDA_TASK_ROOT: taskRoot, [Env.CONFIG_FILE]: HANDLER_CONFIG_FILE, ...env });
}

test('a secret of the stack is rebuilt from the prefix, its logical id and its item of the suffixes; a whole value from its variable', () => {
  const env = withFile(
    {
      [Env.PROVIDERS]: {
        concat: ['[{"secretId":"', { env: Env.SECRET_ARN_PREFIX }, 'InboxStripeSigningSecretA1B2C3D4-', { env: Env.SECRET_ARN_SUFFIXES, item: 1 }, '"}]'],
      },
      [Env.INBOX_NAME]: 'orders',
      [Env.BODY_BUCKET]: { concat: [{ env: `${Env.REF_PREFIX}0` }] },
    },
    {
      [Env.SECRET_ARN_PREFIX]: ARN_PREFIX,
      [Env.SECRET_ARN_SUFFIXES]: 'aaaaaaaaaaaa-AAAAAA,bbbbbbbbbbbb-BBBBBB',
      [`${Env.REF_PREFIX}0`]: 'orders-bodies',
    },
  );
  expect(JSON.parse(env[Env.PROVIDERS]!)).toEqual([{ secretId: `${ARN_PREFIX}InboxStripeSigningSecretA1B2C3D4-bbbbbbbbbbbb-BBBBBB` }]);
  expect(env[Env.INBOX_NAME]).toBe('orders');
  expect(env[Env.BODY_BUCKET]).toBe('orders-bodies');
});

test('the file’s settings win over a variable of the same name in the environment', () => {
  expect(withFile({ [Env.MAX_BODY_BYTES]: '65536' }, { [Env.MAX_BODY_BYTES]: '1' })[Env.MAX_BODY_BYTES]).toBe('65536');
});

test('without a file named, the environment is read as it is', () => {
  const env = { [Env.INBOX_NAME]: 'orders' };
  expect(handlerEnvironment(env)).toBe(env);
});

test('a missing variable, a missing item and an unreadable file are configuration errors naming them', () => {
  expect(() => withFile({ [Env.BODY_BUCKET]: { concat: [{ env: `${Env.REF_PREFIX}3` }] } })).toThrow(
    new ConfigurationError(`${HANDLER_CONFIG_FILE}: ${Env.BODY_BUCKET} needs environment variable ${Env.REF_PREFIX}3, which is not set`),
  );
  expect(() => withFile({ [Env.PROVIDERS]: { concat: [{ env: Env.SECRET_ARN_SUFFIXES, item: 2 }] } }, { [Env.SECRET_ARN_SUFFIXES]: 'a-b,c-d' })).toThrow(
    `${HANDLER_CONFIG_FILE}: ${Env.PROVIDERS} needs value 2 of ${Env.SECRET_ARN_SUFFIXES}, which has 2`,
  );
  expect(() => handlerEnvironment({ LAMBDA_TASK_ROOT: taskRoot, [Env.CONFIG_FILE]: 'absent.json' })).toThrow(
    new RegExp(`environment variable ${Env.CONFIG_FILE} names ${join(taskRoot, 'absent.json')}, which cannot be read`),
  );
});
