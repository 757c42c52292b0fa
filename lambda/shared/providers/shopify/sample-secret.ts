import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** An app's client secret: 32 hexadecimal characters. */
export const sampleSecret: SampleSecretMaker = () => randomBytes(16).toString('hex');
