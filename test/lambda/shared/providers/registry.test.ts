import { AdapterKind, providerRuntimeConfig } from '../../../../lib/contract';
import { adaptersFor, providerModule } from '../../../../lambda/shared/providers/registry';
import { ConfigurationError } from '../../../../lambda/shared/runtime/errors';

const HMAC_SCHEME = {
  signatureHeader: 'x-signature',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: '',
  signedContent: '{body}',
  secretEncoding: 'utf8',
} as const;

const config = (adapter: string) =>
  providerRuntimeConfig({
    name: `p-${adapter}`,
    adapter,
    secretId: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:s',
    ...(adapter === AdapterKind.HMAC ? { hmac: HMAC_SCHEME } : {}),
    ...(adapter === AdapterKind.SQUARE || adapter === AdapterKind.TWILIO ? { notificationUrl: `https://hooks.example.com/hooks/p-${adapter}` } : {}),
    ...(adapter === AdapterKind.SNS ? { topicArns: ['arn:aws:sns:us-east-1:123456789012:orders'] } : {}),
  });

describe('the provider registry', () => {
  it.each(Object.values(AdapterKind))('serves the %s adapter kind', (kind) => {
    const adapter = adaptersFor([config(kind)]).get(`p-${kind}`);
    expect(adapter).toBeDefined();
  });

  it('polls Answerline and Echonova only', () => {
    const polled = Object.values(AdapterKind).filter((kind) => providerModule(config(kind)).taskApi !== undefined);
    expect(polled.sort()).toEqual([AdapterKind.ANSWERLINE, AdapterKind.ECHONOVA]);
  });

  it('refuses an unknown adapter kind, naming the provider', () => {
    expect(() => adaptersFor([config('smoke-signals')])).toThrow(new ConfigurationError('provider p-smoke-signals: unknown adapter "smoke-signals"'));
  });
});
