/** GitHub's documented behaviour (docs/providers/github.md): manual redelivery of the past three days' deliveries. */
export const GITHUB_REDELIVERY_SECONDS = 3 * 86_400;
