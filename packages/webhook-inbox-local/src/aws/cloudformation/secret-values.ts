/**
 * The values a local run gives a stack's secrets: a provider's signing secret in the form that
 * provider issues (an inbox's environment says which provider signs with which secret), a
 * generated secret as its `GenerateSecretString` asks, or the template's own `SecretString`.
 */
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import { AdapterKind, ProviderRuntimeConfig } from '../../../../../lib/contract';

/** A signing secret as each provider issues it. */
export function signingSecretFor(provider: Pick<ProviderRuntimeConfig, 'adapter' | 'hmac'>): string {
  switch (provider.adapter) {
    case AdapterKind.ANSWERLINE:
    case AdapterKind.STANDARD_WEBHOOKS:
      return `whsec_${randomBytes(24).toString('base64')}`;
    case AdapterKind.STRIPE:
      return `whsec_${randomBytes(24).toString('hex')}`;
    case AdapterKind.ECHONOVA:
      return randomBytes(32).toString('hex');
    case AdapterKind.META:
      // Both are chosen in Meta's dashboard; the twin makes up a pair.
      return JSON.stringify({ appSecret: randomBytes(16).toString('hex'), verifyToken: randomBytes(12).toString('base64url') });
    case AdapterKind.SHOPIFY:
      // An app's client secret: 32 hexadecimal characters.
      return randomBytes(16).toString('hex');
    case AdapterKind.PADDLE:
      return `pdl_ntfset_${randomBytes(13).toString('hex').slice(0, 26)}_${randomBytes(24).toString('base64url')}`;
    case AdapterKind.PAGERDUTY:
      return randomBytes(48).toString('base64');
    case AdapterKind.LINEAR:
      return `lin_wh_${randomBytes(24).toString('base64url')}`;
    case AdapterKind.SLACK:
      // An app's signing secret: 32 hexadecimal characters.
      return randomBytes(16).toString('hex');
    case AdapterKind.ZOOM:
      // An app's secret token: 22 URL-safe characters.
      return randomBytes(16).toString('base64url');
    case AdapterKind.GITHUB:
      return randomBytes(20).toString('hex');
    case AdapterKind.DISCORD:
      // The application's public key, in hex as the Developer Portal shows it (its private key is Discord's).
      return Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
    case AdapterKind.SQUARE:
      // A subscription's signature key: 22 URL-safe characters.
      return randomBytes(16).toString('base64url');
    case AdapterKind.TWILIO:
      // An Auth Token: 32 hex characters.
      return randomBytes(16).toString('hex');
    default:
      return provider.hmac?.secretEncoding === 'base64' ? randomBytes(32).toString('base64') : randomBytes(24).toString('hex');
  }
}

interface GenerateSecretString {
  readonly SecretStringTemplate?: string;
  readonly GenerateStringKey?: string;
  readonly PasswordLength?: number;
  readonly ExcludeCharacters?: string;
  readonly ExcludePunctuation?: boolean;
  readonly ExcludeUppercase?: boolean;
  readonly ExcludeLowercase?: boolean;
  readonly ExcludeNumbers?: boolean;
  readonly IncludeSpace?: boolean;
}

const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/** A secret's value from its template properties, as Secrets Manager would create it. */
export function templateSecretValue(properties: Record<string, unknown>): string {
  if (typeof properties.SecretString === 'string') return properties.SecretString;
  const generate = (properties.GenerateSecretString ?? {}) as GenerateSecretString;
  let alphabet = [
    generate.ExcludeLowercase ? '' : 'abcdefghijklmnopqrstuvwxyz',
    generate.ExcludeUppercase ? '' : 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    generate.ExcludeNumbers ? '' : '0123456789',
    generate.ExcludePunctuation ? '' : PUNCTUATION,
    generate.IncludeSpace ? ' ' : '',
  ].join('');
  for (const excluded of generate.ExcludeCharacters ?? '') alphabet = alphabet.split(excluded).join('');
  const password = Array.from({ length: generate.PasswordLength ?? 32 }, () => alphabet[randomInt(alphabet.length)]).join('');
  if (generate.SecretStringTemplate === undefined || generate.GenerateStringKey === undefined) return password;
  return JSON.stringify({ ...(JSON.parse(generate.SecretStringTemplate) as object), [generate.GenerateStringKey]: password });
}
