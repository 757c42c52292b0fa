/**
 * The twin itself, for the repository's tests and bench: a synthesized template run on 127.0.0.1,
 * or the twin's own app, and its ready line. Apart from `#twin/testing` (index.ts) because it loads
 * the construct's whole app and aws-cdk-lib. The root package maps it as `#twin/testing/twin`.
 */
export { startTwin, type Twin } from '../twin/inbox-twin';
export { readyLine, startTemplateTwin, type TemplateTwinOptions } from '../twin/twin';
