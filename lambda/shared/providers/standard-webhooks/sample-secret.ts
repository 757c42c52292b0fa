import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 random bytes (the least the scheme allows). */
export const sampleSecret: SampleSecretMaker = () => `whsec_${randomBytes(24).toString('base64')}`;
