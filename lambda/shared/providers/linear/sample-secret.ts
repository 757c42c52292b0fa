import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** A webhook's signing secret: `lin_wh_` and 32 URL-safe characters. */
export const sampleSecret: SampleSecretMaker = () => `lin_wh_${randomBytes(24).toString('base64url')}`;
