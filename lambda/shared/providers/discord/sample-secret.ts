import { generateKeyPairSync } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** The application's public key, in hex as the Developer Portal shows it (its private key is Discord's). */
export const sampleSecret: SampleSecretMaker = () =>
  Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
