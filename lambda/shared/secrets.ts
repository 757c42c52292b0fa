import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** One version of a signing secret as stored, labelled by its Secrets Manager stage. */
export interface SecretVersion {
  readonly stage: string;
  readonly value: string;
}

/** Reads the versions of a secret that may sign deliveries right now. */
export interface SecretVersionReader {
  read(secretId: string): Promise<SecretVersion[]>;
}

/** Reads AWSCURRENT from Secrets Manager. */
export class SecretsManagerReader implements SecretVersionReader {
  constructor(private readonly client: SecretsManagerClient) {}

  async read(secretId: string): Promise<SecretVersion[]> {
    const current = await this.client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }));
    if (!current.SecretString) throw new Error('signing secret has no string value');
    return [{ stage: 'AWSCURRENT', value: current.SecretString }];
  }
}

export interface SecretCacheOptions {
  /** How long a read stays fresh. */
  readonly ttlMs: number;
  /** The least time between two reads of one secret forced by signature misses. */
  readonly minRefreshIntervalMs: number;
}

interface Entry {
  versions?: SecretVersion[];
  fetchedAt: number;
  inFlight?: Promise<SecretVersion[]>;
}

/**
 * Caches signing secrets with a bounded TTL. A signature miss may force one early refresh, at
 * most once per `minRefreshIntervalMs` per secret, so a flood of forged requests cannot hammer
 * Secrets Manager. When a refresh fails, the last good versions keep serving.
 */
export class SecretCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly reader: SecretVersionReader,
    private readonly options: SecretCacheOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached versions of a secret, read anew when the TTL has run out. */
  async versions(secretId: string): Promise<SecretVersion[]> {
    const entry = this.entries.get(secretId);
    if (entry?.versions && this.now() - entry.fetchedAt < this.options.ttlMs) return entry.versions;
    return this.fetch(secretId);
  }

  /** Reads a secret again after a signature miss; undefined when the rate limit says not yet. */
  async refreshAfterMiss(secretId: string): Promise<SecretVersion[] | undefined> {
    const entry = this.entries.get(secretId);
    if (entry && this.now() - entry.fetchedAt < this.options.minRefreshIntervalMs) return undefined;
    return this.fetch(secretId);
  }

  private fetch(secretId: string): Promise<SecretVersion[]> {
    const entry: Entry = this.entries.get(secretId) ?? { fetchedAt: 0 };
    this.entries.set(secretId, entry);
    entry.inFlight ??= this.reader
      .read(secretId)
      .then((versions) => {
        entry.versions = versions;
        return versions;
      })
      .catch((error: unknown) => {
        if (entry.versions) return entry.versions;
        throw error;
      })
      .finally(() => {
        entry.fetchedAt = this.now();
        entry.inFlight = undefined;
      });
    return entry.inFlight;
  }
}
