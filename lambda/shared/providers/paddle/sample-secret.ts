import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** A notification destination's secret key: `pdl_ntfset_`, 26 lower-case letters and digits, `_` and 32 URL-safe ones. */
export const sampleSecret: SampleSecretMaker = () => `pdl_ntfset_${randomBytes(13).toString('hex').slice(0, 26)}_${randomBytes(24).toString('base64url')}`;
