export * from './submission-ledger';
export { ProviderDeadlines } from '../lib/contract';
