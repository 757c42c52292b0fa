import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** A secret of the configured scheme: the base64 of 32 random bytes, or 48 hexadecimal characters used as text. */
export const sampleSecret: SampleSecretMaker = (config) =>
  config.hmac?.secretEncoding === 'base64' ? randomBytes(32).toString('base64') : randomBytes(24).toString('hex');
