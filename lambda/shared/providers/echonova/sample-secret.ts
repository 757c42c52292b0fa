import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** An Echonova webhook secret: 64 hexadecimal characters. */
export const sampleSecret: SampleSecretMaker = () => randomBytes(32).toString('hex');
