import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** A webhook subscription's secret: 64 base64 characters. */
export const sampleSecret: SampleSecretMaker = () => randomBytes(48).toString('base64');
