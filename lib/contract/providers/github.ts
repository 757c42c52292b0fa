import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** GitHub's documented behaviour (docs/providers/github.md): manual redelivery of the past three days' deliveries. */
export const GITHUB_REDELIVERY_SECONDS = 3 * 86_400;

/** GitHub: the facts every table by provider kind derives from. */
export const GitHubFacts = {
  kind: 'github',
  title: 'GitHub',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: GITHUB_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { header: 'x-github-event' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
