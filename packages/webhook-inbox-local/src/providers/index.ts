/**
 * Simulated webhook providers for the local twin's fault-injection run (`npm run chaos`): each
 * keeps its own record of what it completed and every delivery attempt, signs like the real
 * provider, retries on its documented schedule (compressed in time), and, where the provider has
 * one, serves its task API for polling through the fakes in `local/`.
 */
export * from './answerline/simulator';
export * from './app';
export * from './echonova/simulator';
export * from './random';
export * from './sender';
export * from './signing';
export * from './standard-webhooks/simulator';
