/**
 * The values the twin gives a stack's secrets: a provider's signing secret in the form that
 * provider issues, and a generated secret as Secrets Manager generates it from the template's
 * `GenerateSecretString`.
 */
import { createPublicKey } from 'node:crypto';
import { AdapterKind, HmacRuntimeSettings } from '../../../../../lib/contract';
import { signingSecretFor, templateSecretValue } from '../../../src/aws/cloudformation/secret-values';

/** Every printable ASCII character but the space: the characters Secrets Manager draws from by default. */
const PRINTABLE = Array.from({ length: 126 - 33 + 1 }, (_, index) => String.fromCharCode(33 + index)).join('');
const LETTERS_AND_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Long enough that every character of the alphabet shows up (each is missed with odds below 1e-18). */
const SAMPLE_LENGTH = 4096;

/** A generic HMAC scheme (a hex signature of the body) whose secret is read as `secretEncoding` says. */
function hmacScheme(secretEncoding: HmacRuntimeSettings['secretEncoding']): HmacRuntimeSettings {
  return { signatureHeader: 'x-signature', algorithm: 'sha256', encoding: 'hex', prefix: '', signedContent: '{body}', secretEncoding };
}

function charactersOf(text: string): string {
  return [...new Set(text)].sort().join('');
}

function sorted(alphabet: string): string {
  return [...alphabet].sort().join('');
}

describe('signing secrets, as each provider issues them', () => {
  test.each([AdapterKind.ANSWERLINE, AdapterKind.STANDARD_WEBHOOKS])('%s: whsec_ and the base64 of 24 random bytes', (adapter) => {
    const secret = signingSecretFor({ adapter });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const encoded = secret.slice('whsec_'.length);
    expect(Buffer.from(encoded, 'base64')).toHaveLength(24);
    expect(Buffer.from(encoded, 'base64').toString('base64')).toBe(encoded);
  });

  test('stripe: whsec_ and hex text', () => {
    expect(signingSecretFor({ adapter: AdapterKind.STRIPE })).toMatch(/^whsec_[0-9a-f]{32,}$/);
  });

  test('echonova: 64 hex characters', () => {
    expect(signingSecretFor({ adapter: AdapterKind.ECHONOVA })).toMatch(/^[0-9a-f]{64}$/);
  });

  test('github: 40 hex characters', () => {
    expect(signingSecretFor({ adapter: AdapterKind.GITHUB })).toMatch(/^[0-9a-f]{40}$/);
  });

  test('slack: 32 hex characters (an app signing secret)', () => {
    expect(signingSecretFor({ adapter: AdapterKind.SLACK })).toMatch(/^[0-9a-f]{32}$/);
  });

  test('zoom: 22 URL-safe characters (an app secret token)', () => {
    expect(signingSecretFor({ adapter: AdapterKind.ZOOM })).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  test("discord: the application's public key, 64 hex characters of an Ed25519 key", () => {
    const secret = signingSecretFor({ adapter: AdapterKind.DISCORD });
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(secret, 'hex').toString('base64url') }, format: 'jwk' });
    expect(key.asymmetricKeyType).toBe('ed25519');
  });

  test('square: 22 URL-safe characters (a subscription signature key)', () => {
    expect(signingSecretFor({ adapter: AdapterKind.SQUARE })).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  test('shopify: 32 hex characters (an app client secret)', () => {
    expect(signingSecretFor({ adapter: AdapterKind.SHOPIFY })).toMatch(/^[0-9a-f]{32}$/);
  });

  test('paddle: pdl_ntfset_, a notification setting id and a key (an endpoint secret key)', () => {
    expect(signingSecretFor({ adapter: AdapterKind.PADDLE })).toMatch(/^pdl_ntfset_[0-9a-z]{26}_[A-Za-z0-9_-]{32}$/);
  });

  test('pagerduty: 64 base64 characters (a webhook subscription secret)', () => {
    expect(signingSecretFor({ adapter: AdapterKind.PAGERDUTY })).toMatch(/^[A-Za-z0-9+/]{64}$/);
  });

  test('linear: lin_wh_ and 32 URL-safe characters (a webhook signing secret)', () => {
    expect(signingSecretFor({ adapter: AdapterKind.LINEAR })).toMatch(/^lin_wh_[A-Za-z0-9_-]{32}$/);
  });
  test('a generic HMAC scheme: base64 when its secret is base64-encoded, hex text otherwise', () => {
    const base64 = signingSecretFor({ adapter: AdapterKind.HMAC, hmac: hmacScheme('base64') });
    expect(Buffer.from(base64, 'base64').toString('base64')).toBe(base64);
    expect(Buffer.from(base64, 'base64').length).toBeGreaterThanOrEqual(32);
    expect(signingSecretFor({ adapter: AdapterKind.HMAC, hmac: hmacScheme('utf8') })).toMatch(/^[0-9a-f]{32,}$/);
  });

  test('each one is fresh', () => {
    for (const adapter of Object.values(AdapterKind)) expect(signingSecretFor({ adapter })).not.toBe(signingSecretFor({ adapter }));
  });
});

describe("a template's secret", () => {
  test('SecretString is the value, as written', () => {
    expect(templateSecretValue({ SecretString: 'sk_live_given' })).toBe('sk_live_given');
  });

  test('without GenerateSecretString settings: 32 characters of letters, digits and punctuation', () => {
    expect(templateSecretValue({})).toHaveLength(32);
    expect(templateSecretValue({ GenerateSecretString: {} })).toHaveLength(32);
    expect(charactersOf(templateSecretValue({ GenerateSecretString: { PasswordLength: SAMPLE_LENGTH } }))).toBe(sorted(PRINTABLE));
  });

  test('PasswordLength sets the length', () => {
    expect(templateSecretValue({ GenerateSecretString: { PasswordLength: 12 } })).toHaveLength(12);
  });

  test('ExcludeCharacters leaves those out', () => {
    const excluded = '"@/\\\'`';
    const value = templateSecretValue({ GenerateSecretString: { PasswordLength: SAMPLE_LENGTH, ExcludeCharacters: excluded } });
    expect(charactersOf(value)).toBe(sorted([...PRINTABLE].filter((character) => !excluded.includes(character)).join('')));
  });

  test('ExcludePunctuation leaves letters and digits', () => {
    const value = templateSecretValue({ GenerateSecretString: { PasswordLength: SAMPLE_LENGTH, ExcludePunctuation: true } });
    expect(charactersOf(value)).toBe(sorted(LETTERS_AND_DIGITS));
  });

  test('ExcludeUppercase, ExcludeLowercase, ExcludeNumbers and IncludeSpace', () => {
    const digitsAndSpace = templateSecretValue({
      GenerateSecretString: { PasswordLength: SAMPLE_LENGTH, ExcludePunctuation: true, ExcludeUppercase: true, ExcludeLowercase: true, IncludeSpace: true },
    });
    expect(charactersOf(digitsAndSpace)).toBe(sorted(' 0123456789'));
    const letters = templateSecretValue({ GenerateSecretString: { PasswordLength: SAMPLE_LENGTH, ExcludePunctuation: true, ExcludeNumbers: true } });
    expect(charactersOf(letters)).toBe(sorted(LETTERS_AND_DIGITS.replace(/[0-9]/g, '')));
  });

  test('SecretStringTemplate with GenerateStringKey: the template with the generated password under that key', () => {
    const value = templateSecretValue({
      GenerateSecretString: {
        SecretStringTemplate: '{"username":"inbox","port":5432}',
        GenerateStringKey: 'password',
        PasswordLength: 20,
        ExcludePunctuation: true,
      },
    });
    const parsed = JSON.parse(value) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['password', 'port', 'username']);
    expect(parsed).toMatchObject({ username: 'inbox', port: 5432 });
    expect(parsed.password).toMatch(/^[A-Za-z0-9]{20}$/);
  });
});
