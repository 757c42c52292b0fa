import { randomBytes } from 'node:crypto';
import type { SampleSecretMaker } from '../sample-secrets';

/** An app's secret token: 22 URL-safe characters. */
export const sampleSecret: SampleSecretMaker = () => randomBytes(16).toString('base64url');
