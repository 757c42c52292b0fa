/**
 * The synthesis of an inbox's template, whose policies the handler tests enforce: apart from
 * `#twin/testing` (index.ts) because it loads aws-cdk-lib, which a test whose template is cached
 * never needs. The root package maps it as `#twin/testing/inbox-template`.
 */
export { synthesizeInbox } from '../twin/inbox-template';
