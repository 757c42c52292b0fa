import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** An endpoint's signing secret: `whsec_` and hexadecimal characters, used as text. */
export const sampleSecret: SampleSecretMaker = () => `whsec_${randomBytes(24).toString('hex')}`;
