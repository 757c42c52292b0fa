import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** A webhook secret, which GitHub leaves to the user to choose: 40 hexadecimal characters. */
export const sampleSecret: SampleSecretMaker = () => randomBytes(20).toString('hex');
