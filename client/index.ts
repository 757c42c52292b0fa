export * from './submission-ledger';
