/** Answerline signs with Standard Webhooks: its secret is one. */
export { sampleSecret } from '../standard-webhooks/sample-secret';
