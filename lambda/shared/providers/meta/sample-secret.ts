import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** The app secret and the verify token, both chosen in Meta's dashboard: a made-up pair. */
export const sampleSecret: SampleSecretMaker = () =>
  JSON.stringify({ appSecret: randomBytes(16).toString('hex'), verifyToken: randomBytes(12).toString('base64url') });
