import { AdapterKind, providerRuntimeConfig, SECRETLESS_ADAPTERS } from '../../../../lib/contract';
import { adaptersFor } from '../../../../lambda/shared/providers/registry';
import { sampleSigningSecret } from '../../../../lambda/shared/providers/sample-secrets';

const HMAC_SCHEME = { signatureHeader: 'x-signature', algorithm: 'sha256', encoding: 'hex', prefix: '', signedContent: '{body}' } as const;

const config = (adapter: string, secretEncoding: 'utf8' | 'base64' = 'utf8') =>
  providerRuntimeConfig({
    name: `p-${adapter}`,
    adapter,
    secretId: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:s',
    ...(adapter === AdapterKind.HMAC ? { hmac: { ...HMAC_SCHEME, secretEncoding } } : {}),
    ...(adapter === AdapterKind.SQUARE || adapter === AdapterKind.TWILIO ? { notificationUrl: `https://hooks.example.com/hooks/p-${adapter}` } : {}),
  });

const withSecret = Object.values(AdapterKind).filter((kind) => !SECRETLESS_ADAPTERS.includes(kind));

describe('sample signing secrets', () => {
  // The rule, stated here: a sample stands in for the provider's own secret, so the provider's
  // adapter must make a signing key of it as the current version (it refuses one it cannot read).
  it.each([...withSecret.map((kind) => [kind, kind, 'utf8'] as const), ['hmac with a base64 key', AdapterKind.HMAC, 'base64'] as const])(
    '%s: its adapter makes a signing key of its sample, and no two samples are alike',
    (_label, kind, secretEncoding) => {
      const provider = config(kind, secretEncoding);
      const adapter = adaptersFor([provider]).get(provider.name)!;
      const sample = sampleSigningSecret(provider);
      expect(adapter.signingKeys([{ stage: 'AWSCURRENT', value: sample }])).toHaveLength(1);
      expect(sampleSigningSecret(provider)).not.toBe(sample);
    },
  );

  it("a provider without a signing secret of its own (SNS, a polled-only API) or of an unknown kind gets a generic HMAC sender's: hex text", () => {
    for (const adapter of [AdapterKind.SNS, AdapterKind.MESSAGE_BATCHES, 'toString']) {
      const sample = sampleSigningSecret({ adapter });
      expect(sample).toMatch(/^[0-9a-f]{48}$/);
      expect(sampleSigningSecret({ adapter })).not.toBe(sample);
    }
  });
});
