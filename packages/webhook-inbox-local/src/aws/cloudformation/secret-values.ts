/**
 * The values a local run gives a stack's secrets: a provider's signing secret in the form that
 * provider issues (an inbox's environment says which provider signs with which secret), a
 * generated secret as its `GenerateSecretString` asks, or the template's own `SecretString`.
 */
import { randomInt } from 'node:crypto';

/** A signing secret as each provider issues it (its runtime folder's sample). */
export { sampleSigningSecret as signingSecretFor } from '../../../../../lambda/shared/providers/sample-secrets';

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
