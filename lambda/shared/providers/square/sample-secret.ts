import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** A subscription's signature key: 22 URL-safe characters. */
export const sampleSecret: SampleSecretMaker = () => randomBytes(16).toString('base64url');
