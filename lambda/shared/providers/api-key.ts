import { ConfigurationError } from '../runtime/errors';
import { SecretCache, SecretStage } from '../signatures/secrets';

/** A provider's API key, read from Secrets Manager (AWSCURRENT) through the shared cache. */
export class ApiKeySource {
  constructor(
    private readonly secrets: SecretCache,
    private readonly secretId: string,
  ) {}

  async key(): Promise<string> {
    return currentKey(await this.secrets.versions(this.secretId));
  }

  /** Reads the key again after the provider refused it (rate-limited by the cache); undefined when not now. */
  async refreshed(): Promise<string | undefined> {
    const versions = await this.secrets.refreshAfterMiss(this.secretId);
    return versions ? currentKey(versions) : undefined;
  }
}

/** The secret holds the key as plain text, or as JSON `{"apiKey": "..."}`. */
function currentKey(versions: readonly { stage: string; value: string }[]): string {
  const value = versions.find((version) => version.stage === SecretStage.CURRENT)?.value.trim();
  if (!value) throw new ConfigurationError('the API key secret has no AWSCURRENT value');
  if (value.startsWith('{')) {
    try {
      const parsed = JSON.parse(value) as { apiKey?: unknown };
      if (typeof parsed.apiKey === 'string' && parsed.apiKey !== '') return parsed.apiKey;
    } catch {
      // Not JSON after all: the text is the key.
    }
  }
  return value;
}
