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

  // The rule, stated here: whatever the provider, a body nesting JSON arrays and objects deeper than
  // 512 levels is refused before the adapter reads it (a polled result as a delivery), naming the limit.
  it.each(Object.values(AdapterKind))('the %s adapter refuses a body nested 513 levels deep (JSON or a form), and reads one 512 deep as its own', (kind) => {
    const adapter = adaptersFor([config(kind)]).get(`p-${kind}`)!;
    const nested = (depth: number) => `{"id":"evt_1","nested":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const tooDeep = { kind: 'too_deep', detail: 'body nests JSON arrays and objects deeper than 512 levels' };
    expect(adapter.admit({}, Buffer.from(nested(513)))).toEqual(tooDeep);
    expect(adapter.admit({}, Buffer.from(nested(6_000)))).toEqual(tooDeep);
    expect(adapter.admit({ 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from(`Body=${'['.repeat(513)}`))).toEqual(tooDeep);
    expect(adapter.admit({}, Buffer.from(nested(512)))).not.toMatchObject({ kind: 'too_deep' });
    // Brackets inside strings nest nothing.
    expect(adapter.admit({}, Buffer.from(`{"id":"evt_1","text":"${'['.repeat(6_000)}"}`))).not.toMatchObject({ kind: 'too_deep' });
  });

  it('polls Answerline and Echonova only', () => {
    const polled = Object.values(AdapterKind).filter((kind) => providerModule(config(kind)).taskApi !== undefined);
    expect(polled.sort()).toEqual([AdapterKind.ANSWERLINE, AdapterKind.ECHONOVA]);
  });

  it('refuses an unknown adapter kind, naming the provider', () => {
    expect(() => adaptersFor([config('smoke-signals')])).toThrow(new ConfigurationError('provider p-smoke-signals: unknown adapter "smoke-signals"'));
  });
});
